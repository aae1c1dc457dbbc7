// Buckets and objects: list, create and delete buckets; their settings
// (versioning, lifecycle, access); browse by prefix, upload with
// progress, download, delete; an object's metadata and versions.

import { apiURL, call, xml, tx, kids, s3path, uploadFile } from './api.js';
import { el, table, kv, confirmDialog, formDialog, toast, showError, bytes, when, badge, go, refresh, errorBox } from './ui.js';

const S3NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

// uploads holds the progress rows of a bucket's uploads; it outlives the
// re-rendering of the object list, so a finished upload stays in view
// until the user browses another bucket or dismisses it.
const uploads = el('div', { 'data-testid': 'uploads' });

export async function bucketsPage(page) {
  // ListBuckets lists the buckets one owns; a bucket someone else owns
  // but lets the user read is opened by name.
  const open = el('input', { placeholder: 'Open a bucket by name', 'data-testid': 'open-bucket',
    onkeydown: (e) => { if (e.key === 'Enter' && open.value.trim()) go(`#/buckets/${encodeURIComponent(open.value.trim())}`); } });
  page.append(el('h1', {}, 'Buckets'),
    el('div', { class: 'toolbar' }, open,
      el('button', { onclick: () => { if (open.value.trim()) go(`#/buckets/${encodeURIComponent(open.value.trim())}`); } }, 'Open'),
      el('span', { class: 'grow' }),
      el('button', { class: 'primary', 'data-testid': 'create-bucket', onclick: createBucket }, 'Create bucket')));
  const doc = await xml(await call('GET', '/s3/'));
  const buckets = kids(doc.documentElement, 'Buckets')[0];
  const rows = (buckets ? kids(buckets, 'Bucket') : []).map((b) => {
    const name = tx(b, 'Name');
    return {
      id: name,
      cells: [
        el('a', { href: `#/buckets/${encodeURIComponent(name)}` }, name),
        when(tx(b, 'CreationDate')),
        el('button', { class: 'danger', 'data-testid': `delete-bucket-${name}`, onclick: () => deleteBucket(name) }, 'Delete'),
      ],
    };
  });
  page.append(table([{ title: 'Name' }, { title: 'Created' }, { title: '', actions: true }], rows,
    { empty: 'No buckets yet: create one.', testid: 'buckets' }));
}

async function createBucket() {
  const v = await formDialog({
    title: 'Create bucket',
    fields: [
      { name: 'name', label: 'Name', required: true, placeholder: 'lower-case letters, digits, dots and dashes' },
      { name: 'lock', label: 'Object lock', type: 'select', options: ['off', 'on (versioning on, for retention)'] },
    ],
    submit: 'Create',
  });
  if (!v) return;
  try {
    const headers = v.lock.startsWith('on') ? { 'x-amz-bucket-object-lock-enabled': 'true' } : {};
    await call('PUT', s3path(v.name.trim()), { headers });
    toast(`Bucket ${v.name} created.`);
    refresh();
  } catch (e) { showError(e); }
}

async function deleteBucket(name) {
  if (!await confirmDialog({ title: `Delete bucket ${name}?`, body: 'Only an empty bucket can be deleted. This cannot be undone.', confirm: 'Delete', danger: true })) return;
  try {
    await call('DELETE', s3path(name));
    toast(`Bucket ${name} deleted.`);
    go('#/buckets');
  } catch (e) { showError(e); }
}

// bucketPage is one bucket: its objects (tab "objects") or its settings.
export async function bucketPage(page, bucket, q) {
  const tab = q.get('tab') || 'objects';
  const prefix = q.get('prefix') || '';
  const base = `#/buckets/${encodeURIComponent(bucket)}`;
  page.append(el('div', { class: 'crumbs' }, el('a', { href: '#/buckets' }, 'Buckets'), el('span', { class: 'sep' }, '/'), el('strong', {}, bucket)),
    el('nav', { class: 'tabs' },
      el('a', { href: base, class: tab === 'objects' ? 'active' : '' }, 'Objects'),
      el('a', { href: `${base}?tab=settings`, class: tab === 'settings' ? 'active' : '', 'data-testid': 'settings-tab' }, 'Settings')));
  if (tab === 'settings') await settings(page, bucket);
  else await objects(page, bucket, prefix, q.get('token') || '');
}

function prefixHash(bucket, prefix) {
  return `#/buckets/${encodeURIComponent(bucket)}${prefix ? `?prefix=${encodeURIComponent(prefix)}` : ''}`;
}

async function objects(page, bucket, prefix, token) {
  // Breadcrumbs of the prefix, one per "/"-separated level.
  const crumbs = el('div', { class: 'crumbs', 'data-testid': 'prefix' }, el('a', { href: prefixHash(bucket, '') }, bucket + '/'));
  let acc = '';
  for (const part of prefix.split('/').filter(Boolean)) {
    acc += part + '/';
    crumbs.append(el('a', { href: prefixHash(bucket, acc) }, part + '/'));
  }
  const file = el('input', { type: 'file', multiple: true, 'data-testid': 'upload-input', hidden: true, onchange: () => upload(bucket, prefix, file, uploads) });
  const filter = el('input', { placeholder: 'Filter by prefix', value: prefix, 'data-testid': 'prefix-filter',
    onkeydown: (e) => { if (e.key === 'Enter') go(prefixHash(bucket, filter.value)); } });
  if (uploads.dataset.bucket !== bucket) {
    uploads.replaceChildren();
    uploads.dataset.bucket = bucket;
  }
  page.append(crumbs,
    el('div', { class: 'toolbar' }, filter,
      el('button', { onclick: () => go(prefixHash(bucket, filter.value)) }, 'Go'),
      el('span', { class: 'grow' }),
      el('button', { onclick: () => newFolder(bucket, prefix) }, 'New folder'),
      el('button', { class: 'primary', 'data-testid': 'upload', onclick: () => file.click() }, 'Upload'), file),
    uploads);
  const qs = new URLSearchParams({ 'list-type': '2', delimiter: '/', prefix, 'max-keys': '500' });
  if (token) qs.set('continuation-token', token);
  const doc = await xml(await call('GET', `${s3path(bucket)}?${qs}`));
  const root = doc.documentElement;
  const rows = [];
  for (const cp of kids(root, 'CommonPrefixes')) {
    const p = tx(cp, 'Prefix');
    rows.push({ id: p, cells: [el('a', { href: prefixHash(bucket, p), class: 'folder', 'data-testid': 'folder' }, p.slice(prefix.length)), '', '', ''] });
  }
  for (const c of kids(root, 'Contents')) {
    const key = tx(c, 'Key');
    if (key === prefix && key.endsWith('/')) continue; // the folder marker itself
    rows.push({
      id: key,
      cells: [
        el('a', { href: `#/object/${encodeURIComponent(bucket)}?key=${encodeURIComponent(key)}`, 'data-testid': 'object' }, key.slice(prefix.length)),
        bytes(tx(c, 'Size')), when(tx(c, 'LastModified')),
        el('span', {},
          el('a', { href: apiURL(s3path(bucket, key)), download: key.split('/').pop() || 'object', 'data-testid': `download-${key}` }, el('button', { type: 'button' }, 'Download')), ' ',
          el('button', { class: 'danger', 'data-testid': `delete-${key}`, onclick: () => deleteObject(bucket, key) }, 'Delete')),
      ],
    });
  }
  page.append(table([{ title: 'Name' }, { title: 'Size', num: true }, { title: 'Last modified' }, { title: '', actions: true }], rows,
    { empty: prefix ? `Nothing under ${prefix}.` : 'This bucket is empty: upload a file.', testid: 'objects' }));
  const next = tx(root, 'NextContinuationToken');
  if (tx(root, 'IsTruncated') === 'true' && next) {
    page.append(el('div', { class: 'toolbar' }, el('a', { href: `${prefixHash(bucket, prefix)}${prefix ? '&' : '?'}token=${encodeURIComponent(next)}` }, 'More…')));
  }
}

async function newFolder(bucket, prefix) {
  const v = await formDialog({ title: 'New folder', fields: [{ name: 'name', label: 'Folder name', required: true }], submit: 'Create' });
  if (!v) return;
  const key = prefix + v.name.replace(/\/+$/, '') + '/';
  try {
    await call('PUT', s3path(bucket, key), { body: '' });
    go(prefixHash(bucket, key));
  } catch (e) { showError(e); }
}

// upload sends each chosen file under prefix, one progress bar each.
async function upload(bucket, prefix, input, box) {
  const files = Array.from(input.files);
  input.value = '';
  for (const f of files) {
    const key = prefix + f.name;
    const bar = el('progress', { max: '100', value: '0', 'data-testid': 'upload-progress', 'data-key': key });
    const label = el('span', { 'data-testid': 'upload-percent' }, '0%');
    const row = el('div', { class: 'upload', 'data-testid': 'upload-row' });
    row.append(el('div', { class: 'toolbar' }, el('strong', {}, key), ' · ', bytes(f.size), ' · ', label, el('span', { class: 'grow' }),
      el('button', { class: 'link-dark', title: 'Dismiss', onclick: () => row.remove() }, '×')), bar);
    box.append(row);
    try {
      await uploadFile(bucket, key, f, (loaded, total) => {
        const pct = total ? Math.floor((loaded / total) * 100) : 100;
        bar.value = pct;
        label.textContent = `${pct}%`;
        row.dataset.loaded = String(loaded);
        // Tests read the events seen; it is cheap to keep.
        window.cairnUploadEvents = (window.cairnUploadEvents || 0) + 1;
      });
      bar.value = 100;
      label.textContent = '100% · done';
      row.dataset.done = 'true';
    } catch (e) {
      label.textContent = 'failed';
      row.append(errorBox(e));
      row.dataset.done = 'failed';
    }
  }
  setTimeout(refresh, 0);
}

async function deleteObject(bucket, key, versionId) {
  const what = versionId ? `version ${versionId} of ${key}` : key;
  if (!await confirmDialog({ title: `Delete ${what}?`, body: versionId ? 'This version is removed for good.' : 'On a versioned bucket this adds a delete marker; the versions stay.', confirm: 'Delete', danger: true })) return false;
  try {
    await call('DELETE', s3path(bucket, key) + (versionId ? `?versionId=${encodeURIComponent(versionId)}` : ''));
    toast(`Deleted ${what}.`);
    refresh();
    return true;
  } catch (e) { showError(e); return false; }
}

// objectPage shows an object's metadata and its versions.
export async function objectPage(page, bucket, key) {
  const dir = key.includes('/') ? key.slice(0, key.lastIndexOf('/') + 1) : '';
  page.append(el('div', { class: 'crumbs' }, el('a', { href: '#/buckets' }, 'Buckets'), el('span', { class: 'sep' }, '/'),
    el('a', { href: prefixHash(bucket, dir) }, bucket + '/' + dir), el('strong', {}, key.slice(dir.length))));
  const head = await call('HEAD', s3path(bucket, key), { ok: [404, 405] });
  page.append(el('h2', {}, 'Metadata'));
  if (head.status >= 400) {
    page.append(el('p', { class: 'muted' }, 'No current version (deleted, or a delete marker is latest).'));
  } else {
    const h = head.headers;
    const meta = [];
    h.forEach((v, k) => { if (k.startsWith('x-amz-meta-')) meta.push([k.slice(11), v]); });
    page.append(kv([
      ['Size', `${bytes(h.get('Content-Length'))} (${h.get('Content-Length')} bytes)`],
      ['Content type', h.get('Content-Type')],
      ['ETag', h.get('ETag')],
      ['Last modified', when(h.get('Last-Modified'))],
      h.get('x-amz-version-id') && ['Version', h.get('x-amz-version-id')],
      h.get('x-amz-server-side-encryption') && ['Encryption', h.get('x-amz-server-side-encryption')],
      h.get('x-amz-storage-class') && ['Storage class', h.get('x-amz-storage-class')],
      ...meta.map(([k, v]) => [`meta: ${k}`, v]),
    ]), el('div', { class: 'toolbar' },
      el('a', { href: apiURL(s3path(bucket, key)), download: key.split('/').pop() }, el('button', { type: 'button' }, 'Download')),
      el('button', { class: 'danger', onclick: async () => { if (await deleteObject(bucket, key)) go(prefixHash(bucket, dir)); } }, 'Delete')));
  }
  const tags = await call('GET', s3path(bucket, key) + '?tagging', { ok: [404] });
  if (tags.ok) {
    const doc = await xml(tags);
    const pairs = Array.from(doc.getElementsByTagName('Tag')).map((t) => [tx(t, 'Key'), tx(t, 'Value')]);
    if (pairs.length) page.append(el('h2', {}, 'Tags'), kv(pairs));
  }
  page.append(el('h2', {}, 'Versions'));
  const doc = await xml(await call('GET', `${s3path(bucket)}?versions&prefix=${encodeURIComponent(key)}`));
  const rows = [];
  for (const v of Array.from(doc.documentElement.children)) {
    if ((v.localName !== 'Version' && v.localName !== 'DeleteMarker') || tx(v, 'Key') !== key) continue;
    const id = tx(v, 'VersionId');
    const marker = v.localName === 'DeleteMarker';
    const q = id && id !== 'null' ? `?versionId=${encodeURIComponent(id)}` : '';
    rows.push({
      id,
      cells: [
        el('code', {}, id), marker ? badge('delete marker', 'warn') : bytes(tx(v, 'Size')), when(tx(v, 'LastModified')),
        tx(v, 'IsLatest') === 'true' ? badge('latest', 'ok') : '',
        el('span', {},
          marker ? '' : el('a', { href: apiURL(s3path(bucket, key) + q), download: key.split('/').pop() }, el('button', { type: 'button' }, 'Download')), ' ',
          el('button', { class: 'danger', onclick: () => deleteObject(bucket, key, id) }, 'Delete')),
      ],
    });
  }
  page.append(table([{ title: 'Version' }, { title: 'Size', num: true }, { title: 'Last modified' }, { title: '' }, { title: '', actions: true }], rows,
    { empty: 'No versions.', testid: 'versions' }));
}

// The bucket settings edited as their S3 documents: each has a GET, a
// PUT and (most) a DELETE on a subresource.
const documents = [
  { sub: 'lifecycle', title: 'Lifecycle', type: 'application/xml', absent: ['NoSuchLifecycleConfiguration'],
    template: `<LifecycleConfiguration xmlns="${S3NS}">\n  <Rule>\n    <ID>expire-tmp</ID>\n    <Filter><Prefix>tmp/</Prefix></Filter>\n    <Status>Enabled</Status>\n    <Expiration><Days>7</Days></Expiration>\n  </Rule>\n</LifecycleConfiguration>` },
  { sub: 'policy', title: 'Bucket policy', type: 'application/json', absent: ['NoSuchBucketPolicy'],
    template: '{\n  "Version": "2012-10-17",\n  "Statement": [\n    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::BUCKET/*"}\n  ]\n}' },
  { sub: 'publicAccessBlock', title: 'Public access block', type: 'application/xml', absent: ['NoSuchPublicAccessBlockConfiguration'],
    template: `<PublicAccessBlockConfiguration xmlns="${S3NS}">\n  <BlockPublicAcls>true</BlockPublicAcls>\n  <IgnorePublicAcls>true</IgnorePublicAcls>\n  <BlockPublicPolicy>true</BlockPublicPolicy>\n  <RestrictPublicBuckets>true</RestrictPublicBuckets>\n</PublicAccessBlockConfiguration>` },
  { sub: 'ownershipControls', title: 'Object ownership', type: 'application/xml', absent: ['OwnershipControlsNotFoundError'],
    template: `<OwnershipControls xmlns="${S3NS}">\n  <Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule>\n</OwnershipControls>` },
  { sub: 'cors', title: 'CORS', type: 'application/xml', absent: ['NoSuchCORSConfiguration'],
    template: `<CORSConfiguration xmlns="${S3NS}">\n  <CORSRule>\n    <AllowedOrigin>https://example.com</AllowedOrigin>\n    <AllowedMethod>GET</AllowedMethod>\n  </CORSRule>\n</CORSConfiguration>` },
  { sub: 'acl', title: 'Access control list', type: 'application/xml', noDelete: true },
];

async function settings(page, bucket) {
  // Versioning.
  const vdoc = await xml(await call('GET', `${s3path(bucket)}?versioning`));
  const status = tx(vdoc, 'Status') || 'Off';
  const setV = async (s) => {
    try {
      await call('PUT', `${s3path(bucket)}?versioning`, { body: `<VersioningConfiguration xmlns="${S3NS}"><Status>${s}</Status></VersioningConfiguration>`, headers: { 'Content-Type': 'application/xml' } });
      toast(`Versioning ${s.toLowerCase()}.`);
      refresh();
    } catch (e) { showError(e); }
  };
  page.append(el('h2', {}, 'Versioning'), el('div', { class: 'toolbar' },
    el('span', { 'data-testid': 'versioning-status' }, badge(status, status === 'Enabled' ? 'ok' : '')),
    el('button', { disabled: status === 'Enabled', onclick: () => setV('Enabled'), 'data-testid': 'enable-versioning' }, 'Enable'),
    el('button', { disabled: status !== 'Enabled', onclick: () => setV('Suspended') }, 'Suspend')));
  // Canned ACL.
  const acl = el('select', {}, ['private', 'public-read', 'public-read-write', 'authenticated-read'].map((a) => el('option', { value: a }, a)));
  page.append(el('h2', {}, 'Canned ACL'), el('div', { class: 'toolbar' }, acl,
    el('button', { onclick: async () => {
      try { await call('PUT', `${s3path(bucket)}?acl`, { headers: { 'x-amz-acl': acl.value } }); toast(`ACL set to ${acl.value}.`); refresh(); } catch (e) { showError(e); }
    } }, 'Apply')));
  for (const d of documents) page.append(await documentEditor(bucket, d));
}

async function documentEditor(bucket, d) {
  const box = el('section', { 'data-testid': `doc-${d.sub}` }, el('h2', {}, d.title));
  const area = el('textarea', { spellcheck: 'false' });
  const note = el('p', { class: 'muted' });
  let present = false;
  try {
    const resp = await call('GET', `${s3path(bucket)}?${d.sub}`, { ok: [404] });
    if (resp.status === 404) {
      note.textContent = `None set. A template follows; Save applies it.`;
      area.value = d.template.replace('BUCKET', bucket);
    } else {
      present = true;
      let t = await resp.text();
      if (d.type === 'application/json') { try { t = JSON.stringify(JSON.parse(t), null, 2); } catch { /* as is */ } }
      area.value = t;
    }
  } catch (e) {
    box.append(errorBox(e));
    return box;
  }
  const save = async () => {
    try {
      await call('PUT', `${s3path(bucket)}?${d.sub}`, { body: area.value, headers: { 'Content-Type': d.type } });
      toast(`${d.title} saved.`);
      refresh();
    } catch (e) { showError(e); }
  };
  const del = async () => {
    if (!await confirmDialog({ title: `Remove the ${d.title.toLowerCase()}?`, body: `The bucket's ${d.title.toLowerCase()} is deleted.`, confirm: 'Remove', danger: true })) return;
    try { await call('DELETE', `${s3path(bucket)}?${d.sub}`); toast(`${d.title} removed.`); refresh(); } catch (e) { showError(e); }
  };
  box.append(note, area, el('div', { class: 'toolbar' },
    el('button', { class: 'primary', onclick: save }, 'Save'),
    present && !d.noDelete ? el('button', { class: 'danger', onclick: del }, 'Remove') : null));
  return box;
}
