// The catalog cutover per warehouse: status of every table bucket, the
// preflight report, and materialize and cancel behind a confirmation.

import { json } from './api.js';
import { el, table, kv, confirmDialog, toast, showError, badge, go, errorBox } from './ui.js';
import { tableBuckets } from './tables.js';

// last is the answer of the last materialize or cancel, shown again
// after the page re-renders with the new status.
let last = null;

const cat = (wh) => `/iceberg/v1/${encodeURIComponent(wh)}/catalog`;

function fenceText(f) {
  if (!f) return 'none';
  return `${f.status || 'fenced'}${f.migration_id ? ` (${f.migration_id})` : ''}`;
}

export async function cutoverPage(page, q) {
  page.append(el('h1', {}, 'Catalog cutover'),
    el('p', { class: 'muted' }, 'Moves a warehouse from the object-backed catalog to durable-strong: preflight, materialize (fences object-backed writes), then restart with the durable-strong backing; or cancel to release the fence.'));
  const wh = q.get('wh');
  const list = await tableBuckets();
  const names = list === null ? (wh ? [wh] : []) : list.map((w) => w.name);
  if (list === null) {
    const input = el('input', { placeholder: 'table bucket name', value: wh || '' });
    page.append(el('div', { class: 'toolbar' }, input, el('button', { onclick: () => go(`#/cutover?wh=${encodeURIComponent(input.value.trim())}`) }, 'Open')));
  }
  page.append(el('h2', {}, 'Status per warehouse'));
  const rows = await Promise.all(names.map(async (n) => {
    let st;
    try { st = await json('GET', `${cat(n)}/status`); } catch (e) { return { id: n, cells: [n, el('span', { class: 'error' }, e.message), '', '', '', ''] }; }
    return {
      id: n,
      cells: [el('a', { href: `#/cutover?wh=${encodeURIComponent(n)}`, 'data-testid': `cutover-${n}` }, n),
        badge(st.backing, st.backing === 'durable-strong' ? 'ok' : ''),
        st.served ? badge('served', 'ok') : badge(st.unhealthy || 'not served', 'bad'),
        el('span', { 'data-testid': `fence-${n}` }, fenceText(st.fence)), String(st.table_count ?? ''), String(st.namespace_count ?? '')],
    };
  }));
  page.append(table([{ title: 'Warehouse' }, { title: 'Backing' }, { title: 'Served' }, { title: 'Fence' }, { title: 'Tables', num: true }, { title: 'Namespaces', num: true }],
    rows, { empty: 'No table buckets.', testid: 'cutover-status' }));
  if (wh) await warehouse(page, wh);
}

async function warehouse(page, wh) {
  const box = el('section', { 'data-testid': 'cutover-warehouse' }, el('h2', {}, `Warehouse ${wh}`));
  page.append(box);
  let st;
  try { st = await json('GET', `${cat(wh)}/status`); } catch (e) { box.append(errorBox(e)); return; }
  box.append(kv([
    ['Backing', st.backing], ['Served', st.served ? 'yes' : `no${st.unhealthy ? `: ${st.unhealthy}` : ''}`],
    ['Fence', fenceText(st.fence)], ['Snapshot format', String(st.snapshot_format)], st.snapshot_etag && ['Snapshot ETag', st.snapshot_etag],
    ['Namespaces / tables / views', `${st.namespace_count} / ${st.table_count} / ${st.view_count}`],
    ['Commit log / staged / idempotency', `${st.commit_log_count} / ${st.staged_commit_count} / ${st.idempotency_index_count}`],
  ]));
  const report = el('div', { 'data-testid': 'preflight' });
  const preflight = async () => {
    report.replaceChildren(el('p', { class: 'muted' }, 'Running the preflight…'));
    try {
      const p = await json('GET', `${cat(wh)}/migration`);
      report.replaceChildren(el('h2', {}, 'Preflight'), kv([
        ['Status', el('span', { 'data-testid': 'preflight-status' }, badge(p.status, p.blockers && p.blockers.length ? 'bad' : 'ok'))],
        ['From → to', `${p.source_kind} → ${p.target_kind}`],
        ['Namespaces / tables / views', `${p.namespace_count} / ${p.table_count} / ${p.view_count}`],
        ['Commit log / idempotency / prefixes', `${p.commit_log_count} / ${p.idempotency_index_count} / ${p.warehouse_prefix_count}`],
        ['Object-backed writes fenced', p.object_backed_writes_fenced ? 'yes' : 'no'],
        ['Ready to enable durable-strong', p.ready_to_enable_durable_strong ? 'yes' : 'no'],
        ['Fence', fenceText(p.fence)],
        ['Rollback', p.rollback ? `${p.rollback.backing_config_key}=${p.rollback.rollback_backing_value}${p.rollback.requires_operator_restart ? ' (restart)' : ''}` : ''],
      ]),
      el('h2', {}, 'Blockers'), (p.blockers || []).length ? el('ul', {}, p.blockers.map((b) => el('li', { class: 'error' }, b))) : el('p', { class: 'ok' }, 'None.'),
      el('h2', {}, 'Recommended actions'), (p.recommended_actions || []).length ? el('ul', {}, p.recommended_actions.map((a) => el('li', {}, a))) : el('p', { class: 'muted' }, 'None.'));
    } catch (e) { report.replaceChildren(errorBox(e)); }
  };
  const result = el('div', { 'data-testid': 'cutover-result' });
  const act = async (method, verb, body) => {
    if (!await confirmDialog({ title: `${verb} ${wh}?`, body, confirm: verb, danger: true })) return;
    try {
      const r = await json(method, `${cat(wh)}/migration`);
      toast(`${verb}: ${r.status}`);
      last = { wh, verb, r };
      go(`#/cutover?wh=${encodeURIComponent(wh)}`);
    } catch (e) { showError(e); result.replaceChildren(errorBox(e)); }
  };
  box.append(el('div', { class: 'toolbar' },
    el('button', { 'data-testid': 'run-preflight', onclick: preflight }, 'Run preflight'),
    el('button', { class: 'danger', 'data-testid': 'materialize', onclick: () => act('POST', 'Materialize',
      'This writes the durable-strong snapshot of the warehouse and fences its object-backed writes until the server restarts with the durable-strong backing, or the cutover is cancelled.') }, 'Materialize'),
    el('button', { 'data-testid': 'cancel-cutover', onclick: () => act('DELETE', 'Cancel cutover',
      'This removes the materialized snapshot and releases the fence: object-backed writes resume.') }, 'Cancel cutover')),
  report, result);
  if (last && last.wh === wh) {
    result.append(el('h2', {}, last.verb), el('p', {}, 'Status: ', el('strong', { 'data-testid': 'cutover-result-status' }, last.r.status)),
      el('pre', {}, JSON.stringify(last.r, null, 2)));
  }
  await preflight();
}
