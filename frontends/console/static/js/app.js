// The console's shell: sign-in, the sidebar and a hash router
// (#/buckets, #/buckets/NAME?prefix=P, #/object/NAME?key=K, #/tables/...,
// #/cutover, #/health, #/users).

import { session } from './api.js';
import { el, errorBox } from './ui.js';
import { bucketsPage, bucketPage, objectPage } from './buckets.js';
import { tablesPage } from './tables.js';
import { cutoverPage } from './cutover.js';
import { healthPage } from './health.js';
import { usersPage } from './users.js';

export const state = { accessKey: '', root: false };

const $ = (id) => document.getElementById(id);

function showSignIn(message) {
  $('shell').hidden = true;
  $('signin').hidden = false;
  const err = $('signin-error');
  err.hidden = !message;
  err.textContent = message || '';
  $('access-key').focus();
}

function showShell(info) {
  state.accessKey = info.access_key;
  state.root = info.root;
  $('who').textContent = `${info.access_key}${info.root ? ' (root)' : ''}`;
  $('signin').hidden = true;
  $('shell').hidden = false;
  route();
}

// route renders the page of location.hash.
export async function route() {
  if ($('shell').hidden) return;
  const hash = location.hash.replace(/^#/, '') || '/buckets';
  const [path, query = ''] = hash.split('?');
  const q = new URLSearchParams(query);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const main = $('main');
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('active', a.dataset.nav === parts[0]);
  const page = el('div', { class: 'page' });
  main.replaceChildren(page);
  try {
    switch (parts[0]) {
      case 'buckets':
        if (parts.length > 1) await bucketPage(page, parts[1], q);
        else await bucketsPage(page);
        break;
      case 'object': await objectPage(page, parts[1], q.get('key') || ''); break;
      case 'tables': await tablesPage(page, parts.slice(1)); break;
      case 'cutover': await cutoverPage(page, q); break;
      case 'health': await healthPage(page); break;
      case 'users': await usersPage(page); break;
      default: page.append(el('p', {}, 'No such page.'));
    }
  } catch (e) {
    page.append(errorBox(e));
  }
}

async function start() {
  $('signin-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const btn = $('signin-button');
    btn.disabled = true;
    try {
      const resp = await session.signIn($('access-key').value.trim(), $('secret-key').value);
      const body = await resp.json().catch(() => ({}));
      if (!resp.ok) {
        showSignIn(body.error?.message || `sign-in failed: HTTP ${resp.status}`);
        return;
      }
      $('secret-key').value = '';
      showShell(body);
    } finally {
      btn.disabled = false;
    }
  });
  $('signout').addEventListener('click', async () => {
    await session.signOut();
    showSignIn('Signed out.');
  });
  window.addEventListener('hashchange', route);
  window.addEventListener('cairn:signedout', () => showSignIn('The session has expired: sign in again.'));
  const resp = await session.get();
  if (resp.ok) showShell(await resp.json());
  else showSignIn('');
}

start();
