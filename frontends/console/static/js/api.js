// Calls to the console backend. Every call goes to /console/api/TARGET
// with the rest of its path in the cairn-path query parameter (apiURL);
// the backend signs it with the session's keys. Errors become ApiError with
// the face's own message (S3 error XML Message, Iceberg error JSON).

export const API = '/console/api';
const CSRF = { 'X-Cairn-Console': '1' };

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code || '';
  }
}

// errorOf reads the error of a failed response.
export async function errorOf(resp) {
  const text = await resp.text().catch(() => '');
  return parseError(resp.status, resp.headers.get('Content-Type') || '', text);
}

export function parseError(status, type, text) {
  if (text.trimStart().startsWith('<')) {
    const doc = new DOMParser().parseFromString(text, 'application/xml');
    const code = doc.querySelector('Error > Code')?.textContent;
    const msg = doc.querySelector('Error > Message')?.textContent;
    if (code || msg) return new ApiError(status, code, `${msg || code}${code && msg ? ` (${code})` : ''}`);
  }
  if (type.includes('json') || text.trimStart().startsWith('{')) {
    try {
      const j = JSON.parse(text);
      const e = j.error || j;
      if (e.message) return new ApiError(status, e.type || e.code || '', `${e.message}${e.type ? ` (${e.type})` : ''}`);
    } catch { /* not JSON */ }
  }
  return new ApiError(status, '', text.trim() || `HTTP ${status}`);
}

// apiURL is the URL the browser is sent to for path: /s3/..., /iceberg/...
// or /admin/..., each segment escaped, then ?query. The part after the
// target goes in the cairn-path query parameter, never in the URL path:
// the browser's URL parser resolves "." and ".." segments (and their %2e
// spellings) before the request leaves, so a key "x/../victim" would
// reach the object "victim", and "../../admin/v1/users/bob" the admin
// API. In a query value they are only bytes. The backend refuses a path
// after the target.
export function apiURL(path) {
  const q = path.indexOf('?');
  const p = q < 0 ? path : path.slice(0, q);
  const query = q < 0 ? '' : path.slice(q + 1);
  const i = p.indexOf('/', 1);
  const target = i < 0 ? p : p.slice(0, i);
  const rest = i < 0 ? '' : p.slice(i);
  const params = [rest && rest !== '/' ? `cairn-path=${encodeURIComponent(rest)}` : '', query].filter(Boolean).join('&');
  return `${API}${target}${params ? `?${params}` : ''}`;
}

// call sends a request to the backend and returns the Response, throwing
// ApiError on a status >= 400.
export async function call(method, path, { body, headers = {}, ok = [] } = {}) {
  const h = { ...headers };
  if (method !== 'GET' && method !== 'HEAD') Object.assign(h, CSRF);
  const resp = await fetch(apiURL(path), { method, body, headers: h, credentials: 'same-origin' });
  if (resp.status === 401 && resp.headers.get('X-Cairn-Console-Session') === 'none') {
    window.dispatchEvent(new Event('cairn:signedout'));
  }
  if (resp.status >= 400 && !ok.includes(resp.status)) throw await errorOf(resp);
  return resp;
}

// xml parses an S3 answer.
export async function xml(resp) {
  const text = await resp.text();
  return new DOMParser().parseFromString(text, 'application/xml');
}

export async function json(method, path, body) {
  const opts = {};
  if (body !== undefined) {
    opts.body = JSON.stringify(body);
    opts.headers = { 'Content-Type': 'application/json' };
  }
  const resp = await call(method, path, opts);
  if (resp.status === 204) return null;
  const t = await resp.text();
  return t ? parseJSON(t) : null;
}

// parseJSON keeps integers beyond 2^53 (Iceberg's snapshot ids are
// 64-bit) as their decimal strings instead of rounding them: the reviver
// reads the source text where the browser offers it.
export function parseJSON(text) {
  return JSON.parse(text, (k, v, ctx) => {
    if (typeof v === 'number' && !Number.isSafeInteger(v) && Number.isInteger(v) && ctx && typeof ctx.source === 'string') return ctx.source;
    return v;
  });
}

// keyPath encodes an S3 key for a path (each segment on its own).
export function keyPath(key) {
  return key.split('/').map(encodeURIComponent).join('/');
}

export function s3path(bucket, key = '') {
  return `/s3/${encodeURIComponent(bucket)}${key ? '/' + keyPath(key) : ''}`;
}

// text of the first descendant named tag of node (namespace-agnostic).
export function tx(node, tag) {
  const n = node.getElementsByTagName(tag)[0];
  return n ? n.textContent : '';
}

export function all(node, tag) {
  return Array.from(node.getElementsByTagName(tag));
}

// children of node named tag (direct children only).
export function kids(node, tag) {
  return Array.from(node.children).filter((c) => c.localName === tag);
}

export const session = {
  get: () => fetch(API + '/session', { credentials: 'same-origin' }),
  signIn: (access_key, secret_key) => fetch(API + '/session', {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', ...CSRF },
    body: JSON.stringify({ access_key, secret_key }),
  }),
  signOut: () => fetch(API + '/session', { method: 'DELETE', credentials: 'same-origin', headers: CSRF }),
};

// upload PUTs body to path with XHR so that upload progress is seen:
// onProgress(loaded, total). It resolves with the XHR on 2xx.
export function xhrPut(path, body, { headers = {}, onProgress } = {}) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('PUT', apiURL(path));
    for (const [k, v] of Object.entries({ ...headers, ...CSRF })) x.setRequestHeader(k, v);
    if (onProgress) x.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    x.onload = () => {
      if (x.status >= 200 && x.status < 300) resolve(x);
      else reject(parseError(x.status, x.getResponseHeader('Content-Type') || '', x.responseText));
    };
    x.onerror = () => reject(new ApiError(0, '', 'the upload failed: network error'));
    x.onabort = () => reject(new ApiError(0, '', 'the upload was cancelled'));
    x.send(body);
  });
}

// Files above multipartThreshold go up as an S3 multipart upload in
// parts of partSize, so no one request is huge and progress is per byte.
export const multipartThreshold = 64 << 20;
export const partSize = 16 << 20;

// uploadFile uploads file to bucket/key, reporting progress.
export async function uploadFile(bucket, key, file, onProgress) {
  const type = file.type || 'application/octet-stream';
  if (file.size <= multipartThreshold) {
    await xhrPut(s3path(bucket, key), file, { headers: { 'Content-Type': type }, onProgress });
    return;
  }
  const init = await xml(await call('POST', s3path(bucket, key) + '?uploads', { headers: { 'Content-Type': type } }));
  const uploadId = tx(init, 'UploadId');
  const q = (n) => `?partNumber=${n}&uploadId=${encodeURIComponent(uploadId)}`;
  const parts = [];
  let done = 0;
  try {
    for (let off = 0, n = 1; off < file.size; off += partSize, n++) {
      const blob = file.slice(off, Math.min(off + partSize, file.size));
      const x = await xhrPut(s3path(bucket, key) + q(n), blob, {
        onProgress: (loaded) => onProgress(done + loaded, file.size),
      });
      done += blob.size;
      onProgress(done, file.size);
      parts.push(`<Part><PartNumber>${n}</PartNumber><ETag>${x.getResponseHeader('ETag')}</ETag></Part>`);
    }
    const body = `<CompleteMultipartUpload>${parts.join('')}</CompleteMultipartUpload>`;
    const resp = await call('POST', s3path(bucket, key) + `?uploadId=${encodeURIComponent(uploadId)}`, { body, headers: { 'Content-Type': 'application/xml' } });
    const doc = await xml(resp);
    if (doc.getElementsByTagName('Error').length) throw parseError(500, 'xml', new XMLSerializer().serializeToString(doc));
  } catch (e) {
    await call('DELETE', s3path(bucket, key) + `?uploadId=${encodeURIComponent(uploadId)}`).catch(() => {});
    throw e;
  }
}
