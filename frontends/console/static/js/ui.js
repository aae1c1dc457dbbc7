// DOM helpers: elements, tables, dialogs and toasts.

// el builds an element: attrs may hold on* handlers, class, dataset, and
// plain attributes; children are nodes or strings.
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'value') e.value = v;
    else if (v === true) e.setAttribute(k, '');
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// table builds a list table: cols are {title, num?}; rows are arrays of
// cells (nodes or strings) with an optional testid.
export function table(cols, rows, { empty = 'Nothing here yet.', testid } = {}) {
  if (!rows.length) return el('div', { class: 'empty', 'data-testid': testid }, empty);
  return el('table', { class: 'list', 'data-testid': testid },
    el('thead', {}, el('tr', {}, cols.map((c) => el('th', { class: c.num ? 'num' : c.actions ? 'actions' : '' }, c.title)))),
    el('tbody', {}, rows.map((r) => el('tr', { 'data-row': r.id }, r.cells.map((cell, i) =>
      el('td', { class: cols[i].num ? 'num' : cols[i].actions ? 'actions' : '' }, cell))))));
}

export function kv(pairs) {
  return el('table', { class: 'kv' }, pairs.filter(Boolean).map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, v))));
}

// confirm shows a modal dialog and resolves true when confirmed.
export function confirmDialog({ title, body, confirm = 'Confirm', danger = false }) {
  return new Promise((resolve) => {
    const d = el('dialog', { 'data-testid': 'confirm-dialog' });
    const close = (v) => { d.close(); d.remove(); resolve(v); };
    d.append(el('form', { method: 'dialog', onsubmit: (e) => { e.preventDefault(); close(true); } },
      el('h1', {}, title),
      typeof body === 'string' ? el('p', {}, body) : body,
      el('div', { class: 'buttons' },
        el('button', { type: 'button', onclick: () => close(false) }, 'Cancel'),
        el('button', { type: 'submit', class: danger ? 'danger' : 'primary', 'data-testid': 'confirm' }, confirm))));
    d.addEventListener('cancel', () => close(false));
    document.body.append(d);
    d.showModal();
  });
}

// formDialog shows fields and resolves with their values, or null.
export function formDialog({ title, fields, submit = 'Save' }) {
  return new Promise((resolve) => {
    const d = el('dialog', { 'data-testid': 'form-dialog' });
    const inputs = {};
    const close = (v) => { d.close(); d.remove(); resolve(v); };
    const rows = fields.map((f) => {
      let input;
      if (f.type === 'select') input = el('select', { name: f.name }, f.options.map((o) => el('option', { value: o }, o)));
      else if (f.type === 'textarea') input = el('textarea', { name: f.name, placeholder: f.placeholder }, f.value || '');
      else input = el('input', { name: f.name, type: f.type || 'text', value: f.value || '', required: f.required, placeholder: f.placeholder, autocomplete: 'off' });
      inputs[f.name] = input;
      return el('label', {}, f.label, input);
    });
    d.append(el('form', { onsubmit: (e) => {
      e.preventDefault();
      const out = {};
      for (const [k, i] of Object.entries(inputs)) out[k] = i.value;
      close(out);
    } }, el('h1', {}, title), rows, el('div', { class: 'buttons' },
      el('button', { type: 'button', onclick: () => close(null) }, 'Cancel'),
      el('button', { type: 'submit', class: 'primary', 'data-testid': 'submit' }, submit))));
    d.addEventListener('cancel', () => close(null));
    document.body.append(d);
    d.showModal();
  });
}

export function toast(msg, kind = 'ok') {
  const t = el('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, msg);
  document.getElementById('toasts').append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 9000 : 4000);
}

export function showError(e) {
  toast(e && e.message ? e.message : String(e), 'error');
}

// errorBox is an inline error for a page that could not load.
export function errorBox(e) {
  return el('p', { class: 'error', role: 'alert', 'data-testid': 'page-error' }, e && e.message ? e.message : String(e));
}

export function bytes(n) {
  n = Number(n);
  if (!Number.isFinite(n)) return '';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${u[i]}`;
}

export function when(t) {
  if (!t) return '';
  const d = typeof t === 'number' ? new Date(t) : new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString();
}

export function badge(text, kind = '') {
  return el('span', { class: `badge ${kind}` }, text);
}

// refresh renders the current page again.
export function refresh() {
  window.dispatchEvent(new Event('hashchange'));
}

// go navigates to hash (re-rendering when it is already there).
export function go(hash) {
  if (location.hash === hash) refresh();
  else location.hash = hash;
}
