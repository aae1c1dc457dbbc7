// Table buckets (warehouses) with their namespaces, tables, snapshots and
// schema, over the table-bucket admin API and the Iceberg REST catalog.

import { json, ApiError } from './api.js';
import { el, table, kv, confirmDialog, formDialog, toast, showError, when, badge, go, refresh, errorBox } from './ui.js';

const US = '\x1f'; // the REST spec's namespace level separator

const nsPath = (levels) => encodeURIComponent(levels.join(US));
const ice = (wh) => `/iceberg/v1/${encodeURIComponent(wh)}`;
const whHash = (wh) => `#/tables/${encodeURIComponent(wh)}`;
const nsHash = (wh, levels) => `${whHash(wh)}/${nsPath(levels)}`;

// tableBuckets lists the table buckets, or null when the admin API is
// not the user's (only root may list them).
export async function tableBuckets() {
  try {
    const r = await json('GET', '/admin/table-buckets');
    return r.table_buckets || [];
  } catch (e) {
    if (e instanceof ApiError && (e.status === 403 || e.status === 401)) return null;
    throw e;
  }
}

export async function tablesPage(page, parts) {
  if (parts.length === 0) return warehouses(page);
  const wh = parts[0];
  if (parts.length === 1) return namespaces(page, wh, []);
  const levels = parts[1].split(US);
  if (parts.length === 2) return namespaces(page, wh, levels);
  return tablePage(page, wh, levels, parts[2]);
}

function crumbs(wh, levels = [], name = '') {
  const c = el('div', { class: 'crumbs' }, el('a', { href: '#/tables' }, 'Table buckets'));
  if (wh) c.append(el('span', { class: 'sep' }, '/'), el('a', { href: whHash(wh) }, wh));
  levels.forEach((l, i) => c.append(el('span', { class: 'sep' }, '/'), el('a', { href: nsHash(wh, levels.slice(0, i + 1)) }, l)));
  if (name) c.append(el('span', { class: 'sep' }, '/'), el('strong', {}, name));
  return c;
}

function openByName(page) {
  const input = el('input', { placeholder: 'table bucket name', 'data-testid': 'open-warehouse' });
  page.append(el('div', { class: 'toolbar' }, input, el('button', { onclick: () => go(whHash(input.value.trim())) }, 'Open')));
}

async function warehouses(page) {
  page.append(el('h1', {}, 'Table buckets'));
  const list = await tableBuckets();
  if (list === null) {
    page.append(el('p', { class: 'muted' }, 'Only the root user lists table buckets. Open one by name:'));
    openByName(page);
    return;
  }
  page.append(el('div', { class: 'toolbar' }, el('span', { class: 'grow' }),
    el('button', { class: 'primary', 'data-testid': 'create-table-bucket', onclick: async () => {
      const v = await formDialog({ title: 'Create table bucket', fields: [{ name: 'name', label: 'Name', required: true, placeholder: '3 to 63 lower-case letters, digits and dashes' }], submit: 'Create' });
      if (!v) return;
      try { await json('PUT', `/admin/table-buckets/${encodeURIComponent(v.name.trim())}`); toast(`Table bucket ${v.name} created.`); refresh(); } catch (e) { showError(e); }
    } }, 'Create table bucket')));
  page.append(table([{ title: 'Name' }, { title: 'Created' }, { title: '', actions: true }], list.map((w) => ({
    id: w.name,
    cells: [el('a', { href: whHash(w.name) }, w.name), when(w.created),
      el('button', { class: 'danger', onclick: async () => {
        if (!await confirmDialog({ title: `Delete table bucket ${w.name}?`, body: 'Only an empty table bucket can be deleted.', confirm: 'Delete', danger: true })) return;
        try { await json('DELETE', `/admin/table-buckets/${encodeURIComponent(w.name)}`); toast(`Table bucket ${w.name} deleted.`); refresh(); } catch (e) { showError(e); }
      } }, 'Delete')],
  })), { empty: 'No table buckets yet.', testid: 'table-buckets' }));
}

async function namespaces(page, wh, levels) {
  page.append(crumbs(wh, levels), el('h1', {}, levels.length ? levels.join('.') : wh));
  const parent = levels.length ? `?parent=${nsPath(levels)}` : '';
  const ns = await json('GET', `${ice(wh)}/namespaces${parent}`);
  page.append(el('h2', {}, 'Namespaces'), el('div', { class: 'toolbar' }, el('span', { class: 'grow' }),
    el('button', { 'data-testid': 'create-namespace', onclick: async () => {
      const v = await formDialog({ title: 'Create namespace', fields: [{ name: 'name', label: 'Name', required: true }], submit: 'Create' });
      if (!v) return;
      try { await json('POST', `${ice(wh)}/namespaces`, { namespace: [...levels, v.name.trim()], properties: {} }); toast(`Namespace ${v.name} created.`); refresh(); } catch (e) { showError(e); }
    } }, 'Create namespace')));
  page.append(table([{ title: 'Namespace' }, { title: '', actions: true }], (ns.namespaces || []).map((n) => ({
    id: n.join('.'),
    cells: [el('a', { href: nsHash(wh, n), 'data-testid': 'namespace' }, n.join('.')),
      el('button', { class: 'danger', onclick: async () => {
        if (!await confirmDialog({ title: `Drop namespace ${n.join('.')}?`, body: 'Only an empty namespace can be dropped.', confirm: 'Drop', danger: true })) return;
        try { await json('DELETE', `${ice(wh)}/namespaces/${nsPath(n)}`); toast(`Namespace ${n.join('.')} dropped.`); refresh(); } catch (e) { showError(e); }
      } }, 'Drop')],
  })), { empty: 'No namespaces here.', testid: 'namespaces' }));
  if (!levels.length) return;
  const props = await json('GET', `${ice(wh)}/namespaces/${nsPath(levels)}`);
  const p = Object.entries(props.properties || {});
  if (p.length) page.append(el('h2', {}, 'Properties'), kv(p));
  const t = await json('GET', `${ice(wh)}/namespaces/${nsPath(levels)}/tables`);
  page.append(el('h2', {}, 'Tables'), table([{ title: 'Table' }], (t.identifiers || []).map((id) => ({
    id: id.name,
    cells: [el('a', { href: `${nsHash(wh, levels)}/${encodeURIComponent(id.name)}`, 'data-testid': 'table' }, id.name)],
  })), { empty: 'No tables in this namespace.', testid: 'tables' }));
}

function typeName(t) {
  if (typeof t === 'string') return t;
  if (!t) return '';
  if (t.type === 'list') return `list<${typeName(t.element)}>`;
  if (t.type === 'map') return `map<${typeName(t.key)}, ${typeName(t.value)}>`;
  if (t.type === 'struct') return `struct<${(t.fields || []).map((f) => `${f.name}: ${typeName(f.type)}`).join(', ')}>`;
  return JSON.stringify(t);
}

async function tablePage(page, wh, levels, name) {
  page.append(crumbs(wh, levels, name), el('h1', {}, `${levels.join('.')}.${name}`));
  let lt;
  try {
    lt = await json('GET', `${ice(wh)}/namespaces/${nsPath(levels)}/tables/${encodeURIComponent(name)}`);
  } catch (e) { page.append(errorBox(e)); return; }
  const m = lt.metadata || {};
  page.append(kv([
    ['Format version', String(m['format-version'] ?? '')],
    ['Table UUID', m['table-uuid']],
    ['Location', m.location],
    ['Metadata', lt['metadata-location']],
    ['Current snapshot', m['current-snapshot-id'] != null && String(m['current-snapshot-id']) !== '-1' ? String(m['current-snapshot-id']) : 'none'],
    ['Last updated', when(m['last-updated-ms'])],
  ]));
  const schemas = m.schemas || [];
  const cur = schemas.find((s) => s['schema-id'] === m['current-schema-id']) || schemas[schemas.length - 1] || { fields: [] };
  page.append(el('h2', {}, `Schema ${cur['schema-id'] ?? ''}`), table([{ title: 'ID', num: true }, { title: 'Name' }, { title: 'Type' }, { title: 'Required' }, { title: 'Doc' }],
    (cur.fields || []).map((f) => ({ id: String(f.id), cells: [String(f.id), f.name, el('code', {}, typeName(f.type)), f.required ? 'yes' : 'no', f.doc || ''] })),
    { empty: 'No columns.', testid: 'schema' }));
  const specs = (m['partition-specs'] || []).find((s) => s['spec-id'] === m['default-spec-id']);
  if (specs && (specs.fields || []).length) {
    page.append(el('h2', {}, 'Partitioning'), table([{ title: 'Name' }, { title: 'Transform' }, { title: 'Source' }],
      specs.fields.map((f) => ({ id: f.name, cells: [f.name, f.transform, String(f['source-id'])] }))));
  }
  const snaps = (m.snapshots || []).slice().sort((a, b) => b['timestamp-ms'] - a['timestamp-ms']);
  page.append(el('h2', {}, `Snapshots (${snaps.length})`), table(
    [{ title: 'Snapshot' }, { title: 'Parent' }, { title: 'Committed' }, { title: 'Operation' }, { title: 'Added rows', num: true }, { title: 'Total rows', num: true }, { title: 'Files', num: true }, { title: '' }],
    snaps.map((s) => {
      const sum = s.summary || {};
      return {
        id: String(s['snapshot-id']),
        cells: [el('code', {}, String(s['snapshot-id'])), s['parent-snapshot-id'] != null ? el('code', {}, String(s['parent-snapshot-id'])) : '',
          when(s['timestamp-ms']), sum.operation || '', sum['added-records'] || '', sum['total-records'] || '', sum['total-data-files'] || '',
          String(s['snapshot-id']) === String(m['current-snapshot-id']) ? badge('current', 'ok') : ''],
      };
    }), { empty: 'No snapshots: the table has no data yet.', testid: 'snapshots' }));
  const props = Object.entries(m.properties || {});
  if (props.length) page.append(el('h2', {}, 'Properties'), kv(props));
}
