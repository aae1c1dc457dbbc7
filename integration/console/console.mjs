// The web console's browser scenarios, run by integration/console_test.go
// against a running `cairn serve`. Each step prints one JSON line
// {step, screenshot?, error?, ...}; a failed step prints its error and
// the script exits 1. playwright-core comes from $CAIRN_PLAYWRIGHT (a
// directory outside the repository holding node_modules), the browser is
// $CAIRN_CHROMIUM (Debian's chromium) with a fresh profile.

import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};

const require = createRequire(join(env('CAIRN_PLAYWRIGHT'), 'package.json'));
const { chromium } = require('playwright-core');

const url = env('CAIRN_URL');
const artifacts = env('CAIRN_ARTIFACTS_DIR');
const bucket = env('CONSOLE_BUCKET');
const warehouse = env('CONSOLE_WAREHOUSE');
const cutWarehouse = env('CONSOLE_CUT_WAREHOUSE');
const snapshots = env('CONSOLE_SNAPSHOTS').split(',');
const dotBucket = env('CONSOLE_DOT_BUCKET');
const dotKeys = JSON.parse(env('CONSOLE_DOT_KEYS'));
const evilURLs = JSON.parse(env('CONSOLE_EVIL_URLS'));

const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
let shot = 0;

const profile = mkdtempSync(join(tmpdir(), 'cairn-console-chromium-'));
// The flags keep Chromium off the network: no background fetches,
// updates, sync or QUIC probes (the machine has no way out). The fresh
// profile is its --user-data-dir.
const context = await chromium.launchPersistentContext(profile, {
  executablePath: env('CAIRN_CHROMIUM'),
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  acceptDownloads: true,
  viewport: { width: 1280, height: 860 },
});
const page = context.pages()[0] || await context.newPage();
page.setDefaultTimeout(30000);
const consoleErrors = [];
page.on('pageerror', (e) => consoleErrors.push(String(e)));
// What the stored documents of the stored-documents step log: their
// script says it ran and what its fetch answered.
const evilLog = [];
page.on('console', (m) => { if (m.text().startsWith('cairn-evil')) evilLog.push(m.text()); });

// step runs fn, takes a screenshot named after the step and reports it.
async function step(name, fn) {
  let extra = {};
  try {
    extra = (await fn()) || {};
  } catch (e) {
    const file = join(artifacts, `${String(++shot).padStart(2, '0')}-${name}-FAILED.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    emit({ step: name, screenshot: file, error: `${e.message}${consoleErrors.length ? `\npage errors: ${consoleErrors.join('; ')}` : ''}` });
    throw e;
  }
  const file = join(artifacts, `${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  emit({ step: name, screenshot: file, ...extra });
}

function expect(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function signIn(secret) {
  await page.fill('#access-key', env('CAIRN_ACCESS_KEY'));
  await page.fill('#secret-key', secret);
  await page.click('#signin-button');
}

// rowOf finds the row of a list table holding exactly key.
const row = (testid, key) => page.locator(`[data-testid="${testid}"] tr[data-row="${key}"]`);

let failed = false;
try {
  await step('sign-in-page', async () => {
    await page.goto(url);
    await page.waitForSelector('#signin-form');
  });

  await step('wrong-secret', async () => {
    await signIn('not-the-secret');
    const err = page.locator('#signin-error');
    await err.waitFor({ state: 'visible' });
    const text = await err.textContent();
    expect(/sign-in refused/.test(text), `the refusal says ${JSON.stringify(text)}`);
    expect(await page.locator('#shell').isHidden(), 'the shell shows after a wrong secret');
  });

  await step('signed-in', async () => {
    await signIn(env('CAIRN_SECRET_KEY'));
    await page.waitForSelector('#shell:not([hidden])');
    const who = await page.textContent('#who');
    expect(who.includes(env('CAIRN_ACCESS_KEY')) && who.includes('root'), `signed in as ${who}`);
    const cookies = await context.cookies();
    const c = cookies.find((k) => k.name === 'cairn_console');
    expect(c && c.httpOnly && c.sameSite === 'Strict', `session cookie ${JSON.stringify(c)}`);
    expect(!cookies.some((k) => k.value.includes(env('CAIRN_SECRET_KEY'))), 'a cookie holds the secret');
  });

  await step('bucket-created', async () => {
    await page.click('[data-testid="create-bucket"]');
    await page.fill('[data-testid="form-dialog"] input[name="name"]', bucket);
    await page.click('[data-testid="form-dialog"] [data-testid="submit"]');
    await row('buckets', bucket).waitFor();
  });

  let percents = [];
  let events = 0;
  await step('uploaded', async () => {
    await page.click(`[data-testid="buckets"] a:text-is("${bucket}")`);
    await page.waitForSelector('[data-testid="objects"]');
    // Record every percent the bar shows while it fills.
    await page.evaluate(() => {
      window.cairnPercents = [];
      new MutationObserver(() => {
        for (const p of document.querySelectorAll('[data-testid="upload-progress"]')) {
          const v = Number(p.value);
          if (window.cairnPercents[window.cairnPercents.length - 1] !== v) window.cairnPercents.push(v);
        }
      }).observe(document.body, { subtree: true, attributes: true, childList: true, characterData: true });
    });
    await page.setInputFiles('[data-testid="upload-input"]', env('CONSOLE_BIG'));
    await page.waitForSelector('[data-testid="upload-row"][data-done="true"]', { timeout: 120000 });
    const pct = await page.textContent('[data-testid="upload-percent"]');
    expect(pct.startsWith('100%'), `the bar ends at ${pct}`);
    percents = await page.evaluate(() => window.cairnPercents);
    events = await page.evaluate(() => window.cairnUploadEvents || 0);
    expect(events > 0, 'no upload progress events');
    await row('objects', 'big.bin').waitFor();
    return { upload_events: events, percents };
  });

  await step('browse-prefix', async () => {
    page.once('dialog', () => {});
    await page.click('button:text-is("New folder")');
    await page.fill('[data-testid="form-dialog"] input[name="name"]', 'docs');
    await page.click('[data-testid="form-dialog"] [data-testid="submit"]');
    await page.waitForFunction(() => location.hash.includes('prefix=docs%2F'));
    await page.waitForSelector('[data-testid="objects"]');
    await page.setInputFiles('[data-testid="upload-input"]', env('CONSOLE_NOTES'));
    await row('objects', 'docs/notes.txt').waitFor({ timeout: 60000 });
    // Back at the top: the folder and big.bin, not notes.txt.
    await page.click(`[data-testid="prefix"] a:text-is("${bucket}/")`);
    await row('objects', 'docs/').waitFor();
    await row('objects', 'big.bin').waitFor();
    expect(await row('objects', 'docs/notes.txt').count() === 0, 'notes.txt is listed at the top level');
    // The filter box browses by prefix too.
    await page.fill('[data-testid="prefix-filter"]', 'docs/');
    await page.press('[data-testid="prefix-filter"]', 'Enter');
    await row('objects', 'docs/notes.txt').waitFor();
    expect(await row('objects', 'big.bin').count() === 0, 'big.bin is listed under docs/');
    await page.click(`[data-testid="prefix"] a:text-is("${bucket}/")`);
    await row('objects', 'big.bin').waitFor();
  });

  await step('downloaded', async () => {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-big.bin"]')]);
    const file = join(env('CONSOLE_WORK'), 'downloaded.bin');
    await dl.saveAs(file);
    return { download: file };
  });

  await step('object-page', async () => {
    await page.click('[data-testid="objects"] a:text-is("big.bin")');
    await page.waitForSelector('[data-testid="versions"]');
    const text = await page.textContent('.kv');
    expect(text.includes('application/octet-stream') || text.includes('Size'), `metadata ${text}`);
    await page.goBack();
    await row('objects', 'big.bin').waitFor();
  });

  await step('delete-confirm', async () => {
    await page.click('[data-testid="delete-big.bin"]');
    await page.waitForSelector('[data-testid="confirm-dialog"]');
  });

  await step('deleted', async () => {
    await page.click('[data-testid="confirm-dialog"] [data-testid="confirm"]');
    await row('objects', 'big.bin').waitFor({ state: 'detached' });
    await row('objects', 'docs/').waitFor();
  });

  await step('bucket-settings', async () => {
    await page.click('[data-testid="settings-tab"]');
    await page.waitForSelector('[data-testid="doc-lifecycle"]');
    await page.click('[data-testid="enable-versioning"]');
    await page.waitForSelector('[data-testid="versioning-status"]:has-text("Enabled")');
  });

  // Keys with . and .. segments are acted on exactly: downloading and
  // deleting x/../victim reaches x/../victim, not victim, and
  // ../../admin/users/NAME does not reach the admin API.
  await step('dot-keys', async () => {
    const downloads = [];
    for (const [i, key] of dotKeys.entries()) {
      const dir = key.slice(0, key.lastIndexOf('/') + 1);
      await page.goto(`${url}#/buckets/${encodeURIComponent(dotBucket)}?prefix=${encodeURIComponent(dir)}`);
      await row('objects', key).waitFor();
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="download-${key}"]`)]);
      const file = join(env('CONSOLE_WORK'), `dot-${i}.bin`);
      await dl.saveAs(file);
      downloads.push(file);
      await page.click(`[data-testid="delete-${key}"]`);
      await page.click('[data-testid="confirm-dialog"] [data-testid="confirm"]');
      await row('objects', key).waitFor({ state: 'detached' });
      await page.waitForSelector(`.toast:has-text(${JSON.stringify(`Deleted ${key}.`)})`);
    }
    return { downloads };
  });

  // A stored HTML or SVG document opened in the signed-in browser (on the
  // console's origin) must not drive the console: its script tries to
  // create a user through the console API. Whether it could is checked
  // over the admin API by the Go test; what it logged is reported.
  await step('stored-documents', async () => {
    for (const u of evilURLs) {
      const before = evilLog.length;
      await page.goto(u);
      // A script that runs logs once its fetch answered; a sandboxed
      // document runs none, so the wait ends without a line.
      await page.waitForEvent('console', { predicate: (m) => m.text().startsWith('cairn-evil'), timeout: 5000 }).catch(() => {});
      if (evilLog.length === before) evilLog.push(`cairn-evil none: ${u.split('?')[0]}`);
    }
    await page.goto(url);
    await page.waitForSelector('#shell:not([hidden])');
    return { evil: evilLog };
  });

  let listed = [];
  await step('snapshots', async () => {
    await page.goto(`${url}#/tables/${warehouse}/sales/events`);
    await page.waitForSelector('[data-testid="snapshots"] tbody tr');
    listed = await page.$$eval('[data-testid="snapshots"] tbody tr', (rows) => rows.map((r) => r.dataset.row));
    for (const id of snapshots) expect(listed.includes(id), `snapshot ${id} not listed (${listed})`);
    const schema = await page.textContent('[data-testid="schema"]');
    for (const col of ['id', 'name', 'day']) expect(schema.includes(col), `schema lacks ${col}`);
    return { snapshots: listed };
  });

  await step('cutover-preflight', async () => {
    await page.goto(`${url}#/cutover?wh=${cutWarehouse}`);
    await page.waitForSelector('[data-testid="preflight-status"]');
    const fence = await page.textContent(`[data-testid="fence-${cutWarehouse}"]`);
    expect(fence === 'none', `fence before materialize: ${fence}`);
  });

  await step('materialize-confirm', async () => {
    await page.click('[data-testid="materialize"]');
    await page.waitForSelector('[data-testid="confirm-dialog"]');
  });

  await step('materialize-dismissed', async () => {
    await page.click('[data-testid="confirm-dialog"] button:text-is("Cancel")');
    await page.waitForSelector('[data-testid="confirm-dialog"]', { state: 'detached' });
    const fence = await page.textContent(`[data-testid="fence-${cutWarehouse}"]`);
    expect(fence === 'none', `fence after a dismissed materialize: ${fence}`);
  });

  await step('materialized', async () => {
    await page.click('[data-testid="materialize"]');
    await page.click('[data-testid="confirm-dialog"] [data-testid="confirm"]');
    const st = await page.waitForSelector('[data-testid="cutover-result-status"]');
    const text = await st.textContent();
    expect(text === 'SNAPSHOT_MATERIALIZED', `materialize answered ${text}`);
    await page.waitForSelector(`[data-testid="fence-${cutWarehouse}"]:has-text("MATERIALIZED")`);
    const other = await page.textContent(`[data-testid="fence-${warehouse}"]`);
    expect(other === 'none', `${warehouse} fence: ${other}`);
  });

  await step('health', async () => {
    await page.click('[data-nav="health"]');
    await page.waitForSelector('[data-testid="readiness"]');
    await page.waitForSelector('[data-testid="drives"]');
    const online = await page.textContent('[data-testid="drives-online"]');
    expect(/^\s*\d+\s*\/\s*\d+/.test(online || '') && !/^\s*0\s*\//.test(online), `drives online: ${online}`);
  });

  await step('users', async () => {
    await page.click('[data-nav="users"]');
    await page.waitForSelector('[data-testid="add-user"]');
  });

  await step('signed-out', async () => {
    await page.click('#signout');
    await page.waitForSelector('#signin:not([hidden])');
    const resp = await page.evaluate(async () => (await fetch('/console/api/s3/')).status);
    expect(resp === 401, `the API after sign-out answers ${resp}`);
  });
} catch {
  failed = true;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
