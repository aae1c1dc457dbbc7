// Drives and health: readiness, and the store status of
// GET /_cairn/admin/v1/status (drives, buckets, backlogs).

import { call, errorOf } from './api.js';
import { el, table, kv, bytes, badge } from './ui.js';

function stat(k, v, testid) {
  return el('div', { class: 'stat', 'data-testid': testid }, el('div', { class: 'v' }, v), el('div', { class: 'k' }, k));
}

function duration(s) {
  s = Math.floor(Number(s) || 0);
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
}

export async function healthPage(page) {
  page.append(el('h1', {}, 'Health'));
  const ready = await fetch('/health/ready', { credentials: 'omit' }).catch(() => null);
  let readyText = 'unreachable';
  if (ready) {
    const b = await ready.json().catch(() => ({}));
    readyText = ready.ok ? 'ready' : `not ready: ${b.error || ready.status}`;
  }
  page.append(el('div', { class: 'toolbar' }, 'Readiness: ', el('span', { 'data-testid': 'readiness' }, badge(readyText, ready && ready.ok ? 'ok' : 'bad'))));
  const resp = await call('GET', '/admin/status', { ok: [400, 403, 404, 405, 501] });
  if (!resp.ok) {
    const e = await errorOf(resp);
    page.append(el('p', { class: 'muted', 'data-testid': 'status-unavailable' }, `Status unavailable (${e.message}).`));
    return;
  }
  const st = await resp.json();
  const drives = st.drives || [];
  const online = drives.filter((d) => d.online).length;
  page.append(el('div', { class: 'grid2' },
    stat('drives online', `${online} / ${drives.length}`, 'drives-online'),
    stat('geometry (data + parity)', `${st.data_shards ?? '?'} + ${st.parity_shards ?? '?'}`),
    stat('buckets', String(st.bucket_count ?? (st.buckets || []).filter((b) => !b.system).length)),
    st.degraded_objects !== undefined && stat('degraded objects', String(st.degraded_objects)),
    st.heal_queue !== undefined && stat('heal queue', String(st.heal_queue)),
    st.cleaner_backlog !== undefined && stat('cleaner backlog', String(st.cleaner_backlog)),
    st.compaction_backlog !== undefined && stat('compaction backlog', String(st.compaction_backlog)),
    st.segment_backlog !== undefined && stat('segment backlog', String(st.segment_backlog)),
    st.pending_puts !== undefined && stat('pending puts', String(st.pending_puts)),
    st.version && stat('version', st.version),
    st.uptime_seconds !== undefined && stat('uptime', duration(st.uptime_seconds))));
  page.append(el('h2', {}, 'Drives'), table(
    [{ title: '#', num: true }, { title: 'Path' }, { title: 'State' }, { title: 'Used' }, { title: 'Free', num: true }, { title: 'Total', num: true }, { title: 'Error' }],
    drives.map((d) => {
      const used = d.total_bytes ? Math.round(((d.total_bytes - d.free_bytes) / d.total_bytes) * 100) : 0;
      return {
        id: String(d.index),
        cells: [String(d.index), el('code', {}, d.path), d.online ? badge('online', 'ok') : badge('offline', 'bad'),
          d.total_bytes ? el('div', { class: 'bar', title: `${used}%` }, el('div', { style: `width:${used}%` })) : '',
          bytes(d.available_bytes), bytes(d.total_bytes), d.error ? el('span', { class: 'error' }, d.error) : ''],
      };
    }), { empty: 'No drives reported.', testid: 'drives' }));
  const buckets = (st.buckets || []).filter((b) => !b.system);
  page.append(el('h2', {}, 'Buckets'), table([{ title: 'Bucket' }, { title: 'Versioning' }, { title: 'Objects', num: true }, { title: 'Bytes', num: true }],
    buckets.map((b) => ({ id: b.name, cells: [b.name, b.versioning || '', String(b.objects), bytes(b.bytes)] })), { empty: 'No buckets.' }));
  if (st.read_cache) {
    const c = st.read_cache;
    page.append(el('h2', {}, 'Read cache'), kv([['Size', bytes(c.size_bytes)], ['Used', bytes(c.used_bytes)], ['Hits / misses', `${c.hits} / ${c.misses}`], ['Admitted / evicted', `${c.admitted} / ${c.evicted}`]]));
  }
}
