// Users and their policies, over the root-only users admin API.

import { json, ApiError } from './api.js';
import { el, table, confirmDialog, formDialog, toast, showError, when, refresh } from './ui.js';

export async function usersPage(page) {
  page.append(el('h1', {}, 'Users'));
  let users;
  try {
    users = (await json('GET', '/admin/users')).users || [];
  } catch (e) {
    if (e instanceof ApiError && e.status === 403) {
      page.append(el('p', { class: 'muted' }, 'Only the root user manages users.'));
      return;
    }
    throw e;
  }
  page.append(el('div', { class: 'toolbar' }, el('span', { class: 'grow' }),
    el('button', { class: 'primary', 'data-testid': 'add-user', onclick: () => editUser() }, 'Add user')));
  page.append(table([{ title: 'Access key' }, { title: 'Policy' }, { title: 'Email' }, { title: 'Created' }, { title: '', actions: true }], users.map((u) => ({
    id: u.access_key,
    cells: [u.access_key, policyCell(u.policy), u.email || '', when(u.created),
      el('span', {},
        el('button', { onclick: () => editUser(u) }, 'Edit'), ' ',
        el('button', { class: 'danger', onclick: () => removeUser(u.access_key) }, 'Delete'))],
  })), { empty: 'No users but root.', testid: 'users' }));
}

function policyCell(p) {
  if (!p) return '';
  if (p.trimStart().startsWith('{')) return el('details', {}, el('summary', {}, 'custom policy'), el('pre', {}, p));
  return el('code', {}, p);
}

async function editUser(u) {
  const v = await formDialog({
    title: u ? `Edit ${u.access_key}` : 'Add user',
    fields: [
      { name: 'name', label: 'Access key', required: true, value: u ? u.access_key : '' },
      { name: 'secret', label: u ? 'Secret key (set again)' : 'Secret key', type: 'password', required: true },
      { name: 'policy', label: 'Policy: readwrite, readonly, writeonly, or a policy document', type: 'textarea', value: u ? u.policy : 'readonly' },
      { name: 'email', label: 'Email (optional)', value: u ? u.email || '' : '' },
    ],
    submit: u ? 'Save' : 'Add',
  });
  if (!v) return;
  try {
    await json('PUT', `/admin/users/${encodeURIComponent(v.name.trim())}`, { secret_key: v.secret, policy: v.policy.trim(), email: v.email.trim() });
    toast(`User ${v.name} saved.`);
    refresh();
  } catch (e) { showError(e); }
}

async function removeUser(name) {
  if (!await confirmDialog({ title: `Delete user ${name}?`, body: 'Their keys stop working at once.', confirm: 'Delete', danger: true })) return;
  try { await json('DELETE', `/admin/users/${encodeURIComponent(name)}`); toast(`User ${name} deleted.`); refresh(); } catch (e) { showError(e); }
}
