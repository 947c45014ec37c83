// Drives the webhookd console in a real Chromium against a running webhookd.
//
//   WEBHOOKD_URL             base URL of a webhookd started with
//                            WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS=true and
//                            WEBHOOKD_RETRY_SCHEDULE=100ms,100ms (run.sh does this)
//   WEBHOOKD_ADMIN_KEY       an admin key
//   WEBHOOKD_PUBLISHER_KEY   optional: a publisher key, for the role test
//   SCREENSHOT_DIR           where the screenshots go (default: a temporary directory)
//   CHROMIUM                 the browser (default /usr/bin/chromium; see browser.mjs)
//
// Receivers run in this process on 127.0.0.1: /ok answers 200, /fail answers 500 until
// switched, /down always answers 500, /xss answers 200 with markup in its body, /token
// hands out an OAuth 2.0 token, and any other path answers 404.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { launchChromium } from './browser.mjs';

const BASE = (process.env.WEBHOOKD_URL || '').replace(/\/+$/, '');
const ADMIN_KEY = process.env.WEBHOOKD_ADMIN_KEY || '';
const PUBLISHER_KEY = process.env.WEBHOOKD_PUBLISHER_KEY || '';
const SHOTS = process.env.SCREENSHOT_DIR || mkdtempSync(join(tmpdir(), 'webhookd-shots-'));
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const XSS_DESCRIPTION = '<img src=x onerror=alert(1)><script>alert(2)</script>';
const XSS_BODY = '<script>alert(3)</script><b>bold?</b>';

assert.ok(BASE, 'set WEBHOOKD_URL');
assert.ok(ADMIN_KEY, 'set WEBHOOKD_ADMIN_KEY');
mkdirSync(SHOTS, { recursive: true });

// A throwaway CA, a client certificate it signed (valid 10 days, so inside the page's
// 14-day warning) with its key, and a key of nobody's certificate. EC keys: fast.
function makePki() {
  const dir = mkdtempSync(join(tmpdir(), 'webhookd-pki-'));
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30',
    '-subj', '/CN=webhookd console test CA');
  openssl('req', ...ec, '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=console-client');
  openssl('x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', '2',
    '-days', '10', '-out', 'client.pem');
  openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'other.key');
  const read = (name) => readFileSync(join(dir, name), 'utf8');
  return { ca: read('ca.pem'), cert: read('client.pem'), key: read('client.key'), otherKey: read('other.key') };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `fn` until it returns something truthy; bounded in time.
async function eventually(what, fn, { timeout = 30000, interval = 400 } = {}) {
  const end = Date.now() + timeout;
  let last = null;
  while (Date.now() < end) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    await sleep(interval);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

// `body` is a value to send as JSON, or JSON text to send as it is.
async function api(method, path, body, key = ADMIN_KEY) {
  const res = await fetch(BASE + path, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10000),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, json, text };
}

// ---- the scripted receiver ----

const received = { ok: 0, fail: 0, xss: 0, okHeaders: null, tokenHeaders: null };
let failAnswers = 500;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/ok') {
      received.ok++;
      received.okHeaders = req.headers;
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('thanks');
    } else if (path === '/fail') {
      received.fail++;
      res.writeHead(failAnswers, { 'Content-Type': 'text/plain' })
        .end(failAnswers === 200 ? 'recovered' : 'upstream exploded');
    } else if (path === '/down') {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('still down');
    } else if (path === '/token') {
      // An OAuth 2.0 token endpoint: any client credentials get the same token.
      received.tokenHeaders = req.headers;
      res.writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ access_token: 'console-token', token_type: 'Bearer', expires_in: 3600 }));
    } else if (path === '/xss') {
      received.xss++;
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(XSS_BODY);
    } else {
      res.writeHead(404).end();
    }
  });
});
let receiverBase = '';

// ---- the browser ----

let browser;
const problems = []; // console errors, page errors and dialogs of every page

function watch(page, name) {
  page.setDefaultTimeout(15000);
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const url = msg.location() ? msg.location().url || '' : '';
    // Chromium logs every 4xx a fetch gets. The API answering 403/404/409 is expected
    // (role probing, routes a server may not offer); 5xx and missing assets are not.
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(text) &&
        url.includes('/v1/')) {
      return;
    }
    problems.push(`${name}: console error: ${text} ${url}`);
  });
  page.on('pageerror', (err) => problems.push(`${name}: page error: ${err.message}`));
  page.on('dialog', async (dialog) => {
    problems.push(`${name}: a ${dialog.type()} dialog opened: ${dialog.message()}`);
    await dialog.dismiss().catch(() => {});
  });
  return page;
}

// Each test answers for the problems seen since the previous one.
function assertNoProblems() {
  assert.deepEqual(problems.splice(0), [], 'the page logged errors or opened dialogs');
}

async function newPage(name, viewport = DESKTOP) {
  const context = await browser.newContext({ viewport, serviceWorkers: 'block' });
  // Nothing but webhookd itself may be reached from the page.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${BASE}/`) || url.startsWith('data:')) return route.continue();
    problems.push(`${name}: request to another origin: ${url}`);
    return route.abort();
  });
  return watch(await context.newPage(), name);
}

// The pointer is parked and a passing toast cleared, so the picture shows the page.
async function shot(page, name) {
  await page.mouse.move(0, 0);
  await page.evaluate(() => {
    document.getElementById('toast').replaceChildren();
    return document.fonts && document.fonts.ready;
  });
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

async function signIn(page, key) {
  await page.goto(`${BASE}/ui/`);
  await page.locator('#api-key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#session .role').waitFor();
}

async function heading(page) {
  return (await page.locator('main h1').first().textContent()).trim();
}

let page; // the admin's desktop page, shared by the scenarios in order
const state = {};

before(async () => {
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverBase = `http://127.0.0.1:${receiver.address().port}`;
  browser = await launchChromium();
  page = await newPage('admin');
});

after(async () => {
  if (browser) await browser.close();
  receiver.close();
  console.log(`screenshots: ${SHOTS}`);
});

test('the console\'s sources build the page with DOM calls only', () => {
  const uiDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'public');
  const files = readdirSync(uiDir, { recursive: true }).map(String).filter((f) => /\.(js|html|css)$/.test(f));
  assert.ok(files.includes('app.js') && files.includes('index.html'));
  const banned = [
    /\.innerHTML\b/, /\.outerHTML\b/, /insertAdjacentHTML/, /document\.write/, /\beval\(/,
    /new Function\(/, /createContextualFragment/, /setAttribute\(\s*['"]style['"]/, /\.style\./,
    /localStorage/, /(from|import\(|fetch\(|url\()\s*['"]?https?:/,
  ];
  for (const file of files) {
    const text = readFileSync(join(uiDir, file), 'utf8');
    for (const pattern of banned) {
      assert.doesNotMatch(text, pattern, `${relative('.', file)} uses ${pattern}`);
    }
  }
  const html = readFileSync(join(uiDir, 'index.html'), 'utf8');
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/, 'no inline style or handler');
  assert.doesNotMatch(html, /https?:/, 'nothing from another origin');
});

test('payload text is cut out and indented without touching a value', async () => {
  const { rawMember, indent } = await import('../public/json_text.js');
  const body = '{"id":"evt_1","payload" : {"n":12345678901234567890,"f":1.10,"s":"a,\\"b\\":{c}","e":[],"o":{}},"x":null}';
  assert.equal(rawMember(body, 'payload'),
    '{"n":12345678901234567890,"f":1.10,"s":"a,\\"b\\":{c}","e":[],"o":{}}');
  assert.equal(rawMember(body, 'x'), 'null');
  assert.equal(rawMember(body, 'missing'), null);
  assert.equal(indent('{"a":[1,2.50],"b":{},"c":"x: [y]"}'),
    '{\n  "a": [\n    1,\n    2.50\n  ],\n  "b": {},\n  "c": "x: [y]"\n}');
});

test('a JSON Schema becomes the rows of the catalog\'s field table', async () => {
  const { schemaFields } = await import('../public/schema_fields.js');
  const { rows, truncated } = schemaFields({
    type: 'object',
    required: ['amount', 'items'],
    definitions: { money: { type: 'number', minimum: 0 }, node: { properties: { next: { $ref: '#/definitions/node' } } } },
    properties: {
      amount: { $ref: '#/definitions/money', description: 'Total' },
      currency: { enum: ['EUR', 'USD'] },
      note: { type: ['string', 'null'], maxLength: 200 },
      items: {
        type: 'array', minItems: 1,
        items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string', pattern: '^BK-' } } },
      },
      tags: { type: 'array', items: { type: 'string', format: 'uuid' } },
      list: { $ref: '#/definitions/node' },
      'odd key': { type: 'boolean' },
    },
  });
  assert.equal(truncated, false);
  const byPath = Object.fromEntries(rows.map((r) => [r.path, r]));
  assert.deepEqual(rows.map((r) => r.path),
    ['amount', 'currency', 'note', 'items', 'items[].sku', 'tags', 'list', 'list.next', '["odd key"]']);
  assert.deepEqual(byPath.amount, { path: 'amount', type: 'number', required: true, constraints: ['minimum 0'], description: 'Total' });
  assert.equal(byPath.currency.type, 'string');
  assert.deepEqual(byPath.currency.constraints, ['one of "EUR", "USD"']);
  assert.equal(byPath.note.type, 'string or null');
  assert.equal(byPath.items.type, 'array of object');
  assert.equal(byPath['items[].sku'].required, true);
  assert.deepEqual(byPath['items[].sku'].constraints, ['pattern ^BK-']);
  assert.equal(byPath.tags.type, 'array of string');
  assert.deepEqual(byPath.tags.constraints, ['each: format uuid']);
  assert.equal(byPath['list.next'].type, 'see #/definitions/node', 'a recursive $ref stops');
  assert.deepEqual(schemaFields(null), { rows: [], truncated: false });
});

test('a client certificate\'s end is warned about 14 days ahead', async () => {
  const { certificateExpiry } = await import('../public/views/destination_shared.js');
  const now = Date.parse('2026-03-01T00:00:00Z');
  assert.equal(certificateExpiry(null, now), null);
  assert.equal(certificateExpiry('not a time', now), null);
  assert.deepEqual(certificateExpiry('2026-02-01T00:00:00Z', now), { state: 'expired', days: 0 });
  assert.deepEqual(certificateExpiry('2026-03-01T00:00:00Z', now), { state: 'expired', days: 0 });
  assert.deepEqual(certificateExpiry('2026-03-01T06:00:00Z', now), { state: 'soon', days: 1 });
  assert.deepEqual(certificateExpiry('2026-03-15T00:00:00Z', now), { state: 'soon', days: 14 });
  assert.deepEqual(certificateExpiry('2026-03-15T00:00:01Z', now), { state: 'ok', days: 15 });
});

test('a destination\'s transport follows its URL\'s scheme, and its broker is its scheme and hosts', async () => {
  const { transportOf, brokerOrigin } = await import('../public/views/destination_shared.js');
  assert.equal(transportOf('https://example.com/hook'), 'http');
  assert.equal(transportOf('HTTP://example.com/'), 'http');
  assert.equal(transportOf('amqp://rabbit.example.com/orders'), 'amqp');
  assert.equal(transportOf('amqps://rabbit.example.com'), 'amqp');
  assert.equal(transportOf('nats://nats.example.com:4222'), 'nats');
  assert.equal(transportOf(' redis://127.0.0.1:6390/0 '), 'redis');
  assert.equal(transportOf('kafka://k1:9092,k2:9092'), 'kafka');
  assert.equal(transportOf('ftp://example.com/'), null);
  assert.equal(transportOf('example.com'), null);
  assert.equal(transportOf(''), null);
  assert.equal(brokerOrigin('https://example.com/hook'), null);
  assert.equal(brokerOrigin('redis://Cache.example:6379/0'), brokerOrigin('redis://cache.example/3'));
  assert.equal(brokerOrigin('amqp://rabbit/orders'), 'amqp://rabbit:5672');
  assert.notEqual(brokerOrigin('redis://127.0.0.1:6390/0'), brokerOrigin('kafka://127.0.0.1:6390'));
  assert.notEqual(brokerOrigin('redis://127.0.0.1:6390'), brokerOrigin('redis://127.0.0.1:6391'));
  assert.equal(brokerOrigin('kafka://k1,k2:9093'), 'kafka://k1:9092,k2:9093');
  assert.equal(brokerOrigin('nats://[::1]:4222'), 'nats://[::1]:4222');
});

test('the console is served with its security headers', async () => {
  const res = await fetch(`${BASE}/ui/`);
  assert.equal(res.status, 200);
  const csp = res.headers.get('content-security-policy') || '';
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(res.headers.get('x-frame-options'), 'DENY');
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
  const html = await res.text();
  assert.doesNotMatch(html, /<script>|style=|https?:\/\//, 'no inline script or style, no other origin');
  const redirect = await fetch(`${BASE}/ui`, { redirect: 'manual' });
  assert.equal(redirect.status, 301);
  assert.equal(redirect.headers.get('location'), '/ui/');
  const missing = await fetch(`${BASE}/ui/missing.js`);
  assert.equal(missing.status, 404);
  assert.match(missing.headers.get('content-type') || '', /problem\+json/);
});

test('signs in with an admin key pasted into the form', async () => {
  await page.goto(`${BASE}/ui/`);
  assert.equal(await heading(page), 'Sign in to webhookd');
  await shot(page, '01-sign-in');
  await page.locator('#api-key').fill('whk_not_a_real_key_at_all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('This key was not accepted').waitFor();

  await page.locator('#api-key').fill(ADMIN_KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  assert.equal(await page.locator('#session .role').textContent(), 'Admin');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('webhookd.key')), ADMIN_KEY);
  assert.ok(!page.url().includes(ADMIN_KEY));
  assert.equal(await page.evaluate(() => localStorage.length), 0, 'nothing in localStorage');
  // Keyboard: the first Tab lands on a real link.
  await page.locator('body').focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.tagName), 'A');
  assertNoProblems();
});

test('creates a destination, sends a test event and sees it succeed', async () => {
  await page.goto(`${BASE}/ui/#/destinations/new`);
  await page.getByRole('heading', { level: 1, name: 'New destination' }).waitFor();
  await page.locator('#dest-url').fill(`${receiverBase}/ok`);
  await page.locator('#dest-description').fill('Order events for the warehouse');
  await page.locator('#dest-event-types').fill('order.*, test.ping');
  await page.locator('#dest-headers').fill('X-Team: fulfilment');
  await shot(page, '04-destination-form');
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.getByRole('heading', { level: 1, name: 'Order events for the warehouse' }).waitFor();
  const secret = await page.locator('#secret-value').textContent();
  assert.match(secret, /^whsec_/);
  await page.getByRole('button', { name: 'Hide' }).click();
  await page.locator('#reveal-secret').waitFor();
  assert.equal(await page.locator('#secret-value').count(), 0, 'the secret is hidden again');
  state.okId = (await page.locator('.page-header .subtitle').textContent()).trim();
  assert.match(state.okId, /\S/);

  await page.locator('#send-test').click();
  await page.locator('#test-result .test-status').getByText('succeeded').waitFor({ timeout: 20000 });
  assert.ok(received.ok >= 1, 'the receiver got the test event');
  assert.equal(received.okHeaders['x-team'], 'fulfilment');
  // Header values are write-only: the page names the header and never shows its value.
  const settings = await page.locator('main').textContent();
  assert.match(settings, /X-Team:\s*set/);
  assert.ok(!settings.includes('fulfilment'), 'a header value was shown');
  await shot(page, '03-destination');

  await page.locator('#test-result a[href^="#/deliveries/"]').click();
  await page.locator('.timeline .attempt').first().waitFor();
  const attempt = page.locator('.timeline .attempt').first();
  assert.match(await attempt.textContent(), /Attempt 1/);
  assert.match(await attempt.textContent(), /success/i);
  assert.match(await attempt.locator('.http-code').textContent(), /200/);
  assert.match(await attempt.locator('pre').textContent(), /thanks/);
  await shot(page, '06-delivery');
  assertNoProblems();
});

test('edits, disables, enables and deletes destinations', async () => {
  await page.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(state.okId)}`);
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Edit destination' }).waitFor();
  assert.equal(await page.locator('#dest-headers').inputValue(), 'X-Team: set');
  await page.locator('#dest-headers').fill('X-Team: set\nX-Region: eu');
  await page.locator('#dest-description').fill('Order events for the warehouse');
  await page.locator('#dest-max-in-flight').fill('8');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { level: 1, name: 'Order events for the warehouse' }).waitFor();
  assert.equal((await api('GET', `/v1/destinations/${encodeURIComponent(state.okId)}`)).json.max_in_flight, 8);
  // "set" kept X-Team's value; the new header went in beside it.
  const sentBefore = received.ok;
  await page.locator('#send-test').click();
  await page.locator('#test-result .test-status').getByText('succeeded').waitFor({ timeout: 20000 });
  assert.ok(received.ok > sentBefore);
  assert.equal(received.okHeaders['x-team'], 'fulfilment');
  assert.equal(received.okHeaders['x-region'], 'eu');

  // A refused change shows the server's words next to the field.
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.locator('#dest-url').fill('ftp://example.com/');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#dest-url-error').waitFor();
  assert.match(await page.locator('.alert-error').textContent(), /url/i);
  await page.getByRole('link', { name: 'Cancel' }).click();

  await page.locator('#toggle-enabled').getByText('Disable').waitFor();
  await page.locator('#toggle-enabled').click();
  await page.locator('#toggle-enabled').getByText('Enable').waitFor();
  assert.equal((await api('GET', `/v1/destinations/${encodeURIComponent(state.okId)}`)).json.enabled, false);
  await page.locator('#toggle-enabled').click();
  await page.locator('#toggle-enabled').getByText('Disable').waitFor();
  assert.equal((await api('GET', `/v1/destinations/${encodeURIComponent(state.okId)}`)).json.enabled, true);

  const doomed = await api('POST', '/v1/destinations', { url: `${receiverBase}/ok`, description: 'Short-lived' });
  assert.equal(doomed.status, 201, doomed.text);
  await page.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(doomed.json.id)}`);
  await page.locator('#delete').click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  assert.equal((await api('GET', `/v1/destinations/${encodeURIComponent(doomed.json.id)}`)).status, 200);
  await page.locator('#delete').click();
  await dialog.getByRole('button', { name: 'Delete destination' }).click();
  await page.getByRole('heading', { level: 1, name: 'Destinations' }).waitFor();
  assert.equal((await api('GET', `/v1/destinations/${encodeURIComponent(doomed.json.id)}`)).status, 404);
  assertNoProblems();
});

test('lists destinations and events, and shows an event payload', async () => {
  await page.goto(`${BASE}/ui/#/destinations`);
  await page.getByRole('link', { name: 'Order events for the warehouse' }).waitFor();
  await shot(page, '02-destinations');

  // A payload with a number JSON.parse would round: it must be shown as sent.
  const published = await api('POST', '/v1/events', {
    type: 'order.created',
    payload: { id: 12345678901234567890, total: 19.90, items: [{ sku: 'A-1', qty: 2 }] },
    destination_id: state.okId,
  });
  assert.equal(published.status, 202, published.text);
  // The body above was stringified by JSON: post the exact text instead.
  const exact = await fetch(`${BASE}/v1/events`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
    body: '{"type":"order.paid","payload":{"id":12345678901234567890,"amount":"19.90","rate":1.10}}',
  });
  assert.equal(exact.status, 202);
  const event = await exact.json();

  await page.goto(`${BASE}/ui/#/events`);
  await page.getByRole('link', { name: event.id, exact: true }).waitFor();
  await shot(page, '05-events-list');
  await page.locator('#filter-type').fill('order.paid');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/type=order\.paid/);
  // The event's link is in the unfiltered list too: wait for that list to be replaced
  // (a filter that does not filter times out here).
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length <= 1);
  await page.getByRole('link', { name: event.id, exact: true }).waitFor();
  assert.equal(await page.locator('tbody tr').count(), 1);

  // Lists page with "Load more" (50 a page).
  const bulk = await Promise.all(Array.from({ length: 55 }, (_, i) =>
    api('POST', '/v1/events', { type: 'bulk.item', payload: { i } })));
  assert.ok(bulk.every((r) => r.status === 202));
  await page.goto(`${BASE}/ui/#/events?type=bulk.item`);
  await page.locator('tbody tr').nth(49).waitFor();
  assert.equal(await page.locator('tbody tr').count(), 50);
  await page.getByRole('button', { name: 'Load more' }).click();
  await page.locator('tbody tr').nth(54).waitFor();
  assert.equal(await page.locator('tbody tr').count(), 55);
  assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);

  await page.goto(`${BASE}/ui/#/events?type=order.paid`);
  await page.getByRole('link', { name: event.id, exact: true }).click();
  await page.locator('#payload').waitFor();
  const payload = await page.locator('#payload').textContent();
  // JSON.parse would show 12345678901234567000: the page shows the digits it received.
  assert.match(payload, /12345678901234567890/, 'big integers keep every digit');
  await shot(page, '05-event');
  const served = await api('GET', `/v1/events/${encodeURIComponent(event.id)}`);
  if (served.text.includes('1.10')) assert.match(payload, /1\.10/, 'trailing zeros are kept');
  assertNoProblems();
});

test('dead letters appear, are replayed from the page and get delivered', async () => {
  const created = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/fail`, description: 'Billing (flaky)', event_types: ['invoice.*'],
  });
  assert.equal(created.status, 201, created.text);
  state.failId = created.json.id;
  for (let i = 0; i < 2; i++) {
    const r = await api('POST', '/v1/events', { type: 'invoice.issued', payload: { n: i } });
    assert.equal(r.status, 202, r.text);
  }
  const filter = `#/dead-letters?destination_id=${encodeURIComponent(state.failId)}`;
  await eventually('two dead letters', async () => {
    const r = await api('GET', `/v1/admin/dead-letters?destination_id=${encodeURIComponent(state.failId)}`);
    return r.status === 200 && r.json.data.length === 2;
  });
  await page.goto(`${BASE}/ui/${filter}`);
  await page.locator('tbody tr').nth(1).waitFor();
  assert.equal(await page.locator('tbody tr').count(), 2);
  assert.match(await page.locator('tbody').textContent(), /exhausted/);
  await shot(page, '07-dead-letters');

  failAnswers = 200;
  await page.locator('#replay-all').click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByRole('heading', { name: 'Replay 2 dead letters?' }).waitFor();
  await shot(page, '08-replay-confirm');
  await dialog.getByRole('button', { name: 'Replay 2' }).click();
  await page.locator('#replay-result').getByText('2 dead letters replayed').waitFor();

  await page.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(state.failId)}`);
  await eventually('both deliveries succeeded', async () => {
    await page.reload();
    await page.locator('.card tbody tr').first().waitFor();
    const text = await page.locator('.card tbody').last().textContent();
    return (text.match(/succeeded/g) || []).length === 2;
  }, { timeout: 30000, interval: 1000 });

  // A replayed delivery keeps its failed attempts and adds the successful one.
  await page.locator('.card tbody').last().locator('a[href^="#/deliveries/"]').first().click();
  await page.locator('.timeline .attempt').nth(3).waitFor();
  const outcomes = await page.locator('.timeline .attempt .badge').allTextContents();
  assert.deepEqual(outcomes.map((o) => o.toLowerCase()), ['retryable', 'retryable', 'retryable', 'success']);
  assert.match(await page.locator('.timeline').textContent(), /upstream exploded/);
  await shot(page, '06-delivery-retried');
  assertNoProblems();
});

test('"Replay all" without a filter tells the API that every dead letter is meant', async () => {
  failAnswers = 500;
  const created = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/fail`, description: 'Refunds (down)', event_types: ['refund.*'],
  });
  assert.equal(created.status, 201, created.text);
  const published = await api('POST', '/v1/events', { type: 'refund.issued', payload: { n: 1 } });
  assert.equal(published.status, 202, published.text);
  await eventually('a dead letter', async () => {
    const r = await api('GET', `/v1/admin/dead-letters?destination_id=${encodeURIComponent(created.json.id)}`);
    return r.status === 200 && r.json.data.length === 1;
  });
  failAnswers = 200;

  await page.goto(`${BASE}/ui/#/dead-letters`);
  await page.locator('tbody tr').first().waitFor();
  const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/v1/admin/dead-letters/replay'));
  await page.locator('#replay-all').click();
  await page.locator('dialog[open]').getByRole('button', { name: /^Replay \d/ }).click();
  // An empty body is refused (422): replaying everything must be asked for.
  assert.deepEqual((await sent).postDataJSON(), { all: true });
  await page.locator('#replay-result').getByText(/dead letters? replayed/).waitFor();
  assertNoProblems();
});

test('rotates a secret', async (t) => {
  await page.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(state.okId)}`);
  await page.locator('#rotate-secret').click();
  const dialog = page.locator('dialog[open]');
  await dialog.locator('#grace-period').fill('1h');
  await dialog.getByRole('button', { name: 'Rotate' }).click();
  const outcome = await Promise.race([
    page.locator('#rotated').waitFor().then(() => 'rotated'),
    dialog.locator('.alert-error').waitFor().then(() => 'error'),
  ]);
  if (outcome === 'error') {
    const text = await dialog.locator('.alert-error').textContent();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    if (/no route/.test(text)) {
      console.log('NOTICE: secret rotation skipped: this webhookd answers 404 to POST /v1/destinations/{id}/secret/rotate');
      t.skip('POST /v1/destinations/{id}/secret/rotate answers 404');
      return;
    }
    assert.fail(`rotation failed: ${text}`);
  }
  const shown = (await page.locator('#rotated code').textContent()).trim();
  assert.match(shown, /^whsec_/);
  const now = await api('GET', `/v1/destinations/${encodeURIComponent(state.okId)}/secret`);
  assert.equal(now.json.secret, shown);
  assertNoProblems();
});

// The catalog's own types, named apart from the other scenarios' event types (a schema
// would check their payloads).
const PAID = 'payment.captured';
const PAID_SCHEMA = {
  type: 'object',
  required: ['amount', 'currency'],
  properties: {
    amount: { type: 'number', minimum: 0, description: 'In the currency\u2019s smallest unit' },
    currency: { enum: ['EUR', 'USD'] },
    items: {
      type: 'array',
      items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string', pattern: '^[A-Z]+-' } } },
    },
  },
};

test('the catalog lists a type and shows its fields and examples', async () => {
  // The examples as text: the page must show 12345678901234567890 as sent.
  const created = await api('POST', '/v1/event-types', `{"name": ${JSON.stringify(PAID)},
    "description": "A payment was captured: the money is ours.",
    "schema": ${JSON.stringify(PAID_SCHEMA)},
    "examples": [{"amount": 150, "currency": "EUR", "items": [{"sku": "BK-1"}], "ref": 12345678901234567890},
                 {"amount": 20, "currency": "USD", "items": [{"sku": "CD-2"}]}]}`);
  assert.equal(created.status, 201, created.text);
  const old = await api('POST', '/v1/event-types', {
    name: 'payment.refunded.v0', description: 'Use payment.refunded', deprecated: true,
  });
  assert.equal(old.status, 201, old.text);

  await page.goto(`${BASE}/ui/#/catalog`);
  await page.getByRole('heading', { level: 1, name: 'Catalog' }).waitFor();
  const oldRow = page.locator('tbody tr', { has: page.getByRole('link', { name: 'payment.refunded.v0' }) });
  await oldRow.waitFor();
  assert.match(await oldRow.locator('.badge').textContent(), /deprecated/);
  const builtinRow = page.locator('tbody tr', { has: page.getByRole('link', { name: 'webhookd.delivery.dead_lettered' }) });
  assert.equal(await builtinRow.locator('.badge').textContent(), 'webhookd');
  await shot(page, '12-catalog');

  await page.getByRole('link', { name: PAID, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: PAID }).waitFor();
  assert.match(await page.locator('#type-description-text').textContent(), /money is ours/);
  const fields = page.locator('#schema-fields tbody tr');
  await fields.first().waitFor();
  const rows = {};
  for (const row of await fields.all()) {
    const cells = (await row.locator('td').allTextContents()).map((c) => c.trim());
    rows[cells[0]] = cells.slice(1);
  }
  assert.deepEqual(Object.keys(rows).sort(), ['amount', 'currency', 'items', 'items[].sku']);
  assert.deepEqual(rows.amount, ['number', 'yes', 'minimum 0', 'In the currency\u2019s smallest unit']);
  assert.deepEqual(rows.currency.slice(0, 3), ['string', 'yes', 'one of "EUR", "USD"']);
  assert.deepEqual(rows['items[].sku'].slice(0, 3), ['string', 'yes', 'pattern ^[A-Z]+-']);
  assert.equal(rows.items[1], 'no');
  const examples = page.locator('#examples pre');
  assert.equal(await examples.count(), 2);
  assert.match(await examples.first().textContent(), /"ref": 12345678901234567890/, 'examples keep every digit');
  assert.match(await examples.nth(1).textContent(), /"sku": "CD-2"/);
  await page.locator('#edit-type').waitFor();
  await shot(page, '13-event-type');

  // Edit: the description and the deprecated mark; the schema and examples stay as they are.
  await page.locator('#edit-type').click();
  await page.getByRole('heading', { level: 1, name: 'Edit event type' }).waitFor();
  assert.match(await page.locator('#type-examples').inputValue(), /12345678901234567890/);
  await page.locator('#type-description').fill('A payment was captured.');
  await page.locator('#type-deprecated').check();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#deprecated-note').waitFor();
  const saved = await api('GET', `/v1/event-types/${PAID}`);
  assert.equal(saved.json.description, 'A payment was captured.');
  assert.equal(saved.json.deprecated, true);
  assert.deepEqual(saved.json.schema, PAID_SCHEMA);
  assert.match(saved.text, /12345678901234567890/);
  assert.equal((await api('PATCH', `/v1/event-types/${PAID}`, { deprecated: false })).status, 200);

  // Delete, confirmed.
  await page.goto(`${BASE}/ui/#/catalog/types/payment.refunded.v0`);
  await page.locator('#delete-type').click();
  await page.locator('dialog[open]').getByRole('button', { name: 'Delete event type' }).click();
  await page.getByRole('heading', { level: 1, name: 'Catalog' }).waitFor();
  assert.equal((await api('GET', '/v1/event-types/payment.refunded.v0')).status, 404);
  assertNoProblems();
});

test('webhookd\'s own event types are read-only in the catalog', async () => {
  const name = 'webhookd.delivery.dead_lettered';
  await page.goto(`${BASE}/ui/#/catalog/types/${name}`);
  await page.getByRole('heading', { level: 1, name }).waitFor();
  await page.locator('#builtin-note').waitFor();
  assert.equal(await page.locator('.page-header .badge').textContent(), 'webhookd');
  assert.match(await page.locator('#schema-fields').textContent(), /one of "exhausted", "permanent_failure"/);
  assert.equal(await page.locator('#edit-type').count(), 0, 'no Edit');
  assert.equal(await page.locator('#delete-type').count(), 0, 'no Delete');
  assert.equal(await page.getByRole('link', { name: 'Edit' }).count(), 0);
  // Its edit address shows no form either.
  await page.goto(`${BASE}/ui/#/catalog/types/${name}/edit`);
  await page.getByText('read-only').waitFor();
  assert.equal(await page.locator('#event-type-form').count(), 0);
  assertNoProblems();
});

test('the event type form shows the API\'s schema and example errors next to the fields', async () => {
  await page.goto(`${BASE}/ui/#/catalog`);
  await page.locator('#new-event-type').click();
  await page.getByRole('heading', { level: 1, name: 'New event type' }).waitFor();
  await page.locator('#type-name').fill('shipment.sent');
  // Not JSON: said at once, nothing is sent.
  await page.locator('#type-schema').fill('{"type": "object",');
  await page.getByRole('button', { name: 'Create event type' }).click();
  await page.locator('#type-schema-error').getByText('not valid JSON').waitFor();
  // JSON, but not a schema: the server's words, with the place it names.
  await page.locator('#type-schema').fill('{"type": "object", "properties": {"weight": {"type": "numbr"}}}');
  await page.getByRole('button', { name: 'Create event type' }).click();
  await page.locator('#type-schema-error').getByText('/schema/properties/weight/type').waitFor();
  assert.equal(await page.locator('#type-schema').getAttribute('aria-invalid'), 'true');
  assert.match(await page.locator('.alert-error').textContent(), /Not created/);
  await shot(page, '14-event-type-form-error');
  assert.equal((await api('GET', '/v1/event-types/shipment.sent')).status, 404);
  // An example the schema refuses.
  await page.locator('#type-schema').fill('{"type": "object", "properties": {"weight": {"type": "number"}}}');
  await page.locator('#type-examples').fill('[{"weight": "heavy"}]');
  await page.getByRole('button', { name: 'Create event type' }).click();
  await page.locator('#type-examples-error').getByText('/examples/0/weight').waitFor();
  assert.equal(await page.locator('#type-schema-error').isHidden(), true, 'the schema error is gone');
  // Fixed: created, and the page of the new type follows.
  await page.locator('#type-examples').fill('[{"weight": 1.50}]');
  await page.getByRole('button', { name: 'Create event type' }).click();
  await page.getByRole('heading', { level: 1, name: 'shipment.sent' }).waitFor();
  const stored = await api('GET', '/v1/event-types/shipment.sent');
  assert.equal(stored.status, 200, stored.text);
  assert.deepEqual(stored.json.schema, { type: 'object', properties: { weight: { type: 'number' } } });
  assert.deepEqual(stored.json.examples, [{ weight: 1.5 }]);
  assertNoProblems();
});

test('the destination form offers the catalog and tests a filter against an example', async () => {
  await page.goto(`${BASE}/ui/#/destinations/new`);
  await page.getByRole('heading', { level: 1, name: 'New destination' }).waitFor();
  await page.locator('#dest-url').fill(`${receiverBase}/ok`);
  await page.locator('#dest-description').fill('Large euro payments');
  // A catalog type ticked goes into the event types; a pattern covers the ones it takes.
  await page.locator('#catalog-picker').getByLabel(PAID).check();
  assert.equal(await page.locator('#dest-event-types').inputValue(), PAID);
  await page.locator('#dest-event-types').fill('payment.*');
  assert.equal(await page.locator('#catalog-picker').getByLabel(PAID).isChecked(), true);
  assert.equal(await page.locator('#catalog-picker').getByLabel(PAID).isDisabled(), true);
  await page.locator('#dest-event-types').fill(PAID);

  const verdict = page.locator('#filter-result');
  await page.locator('#filter-example').selectOption({ label: `${PAID} \u2014 example 1` });
  assert.match(await page.locator('#filter-payload').inputValue(), /"amount": 150/);
  await page.locator('#dest-filter').fill('$.amount >= 100 && $.currency == "EUR"');
  await page.locator('#filter-test').click();
  await verdict.locator('#filter-verdict', { hasText: /^matches$/ }).waitFor();
  // The picture starts at the filter, so the filter, its test and the verdict show together.
  await page.evaluate(() => window.scrollTo(0,
    document.querySelector('.filter-editor').getBoundingClientRect().top + window.scrollY - 72));
  await shot(page, '15-destination-filter');
  await page.locator('#filter-example').selectOption({ label: `${PAID} \u2014 example 2` });
  await page.locator('#filter-test').click();
  await verdict.locator('#filter-verdict', { hasText: /^does not match$/ }).waitFor();
  // A pasted payload, and one whose number is beyond what JSON.parse keeps.
  await page.locator('#filter-payload').fill('{"amount": 12345678901234567891, "currency": "EUR"}');
  await page.locator('#dest-filter').fill('$.amount == 12345678901234567891');
  await page.locator('#filter-test').click();
  await verdict.locator('#filter-verdict', { hasText: /^matches$/ }).waitFor();
  // An invalid filter: the server's reason.
  await page.locator('#dest-filter').fill('$.amount >=');
  await page.locator('#filter-test').click();
  await verdict.locator('.alert-error').getByText('is not a valid SQL/JSON path predicate').waitFor();
  // Saving it is refused, with the reason next to the field.
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.locator('#dest-filter-error').getByText('SQL/JSON path').waitFor();

  await page.locator('#dest-filter').fill('$.amount >= 100 && $.currency == "EUR"');
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.getByRole('heading', { level: 1, name: 'Large euro payments' }).waitFor();
  assert.equal(await page.locator('#dest-filter-value').textContent(), '$.amount >= 100 && $.currency == "EUR"');
  const id = (await page.locator('.page-header .subtitle').textContent()).trim();
  const created = await api('GET', `/v1/destinations/${encodeURIComponent(id)}`);
  assert.equal(created.json.filter, '$.amount >= 100 && $.currency == "EUR"');
  assert.deepEqual(created.json.event_types, [PAID]);

  // Edit: the filter comes back in its field; emptied, it is cleared.
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Edit destination' }).waitFor();
  assert.equal(await page.locator('#dest-filter').inputValue(), '$.amount >= 100 && $.currency == "EUR"');
  assert.equal(await page.locator('#catalog-picker').getByLabel(PAID).isChecked(), true);
  await page.locator('#dest-filter').fill('');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { level: 1, name: 'Large euro payments' }).waitFor();
  assert.equal((await api('GET', `/v1/destinations/${encodeURIComponent(id)}`)).json.filter, null);
  assert.equal(await page.locator('#dest-filter-value').count(), 0);
  assertNoProblems();
});

test('the destination form keeps mutual TLS settings, the key write-only', async () => {
  const pki = makePki();
  const label = 'Ledger over mutual TLS';
  await page.goto(`${BASE}/ui/#/destinations/new`);
  await page.getByRole('heading', { level: 1, name: 'New destination' }).waitFor();
  await page.locator('#dest-url').fill(`${receiverBase}/ok`);
  await page.locator('#dest-description').fill(label);
  await page.locator('#dest-tls-cert').fill(pki.cert);
  await page.locator('#dest-tls-ca').fill(pki.ca);
  // Not the certificate's key: the server's words go next to the key.
  await page.locator('#dest-tls-key').fill(pki.otherKey);
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.locator('#dest-tls-key-error').getByText('does not match').waitFor();
  assert.equal(await page.locator('#dest-tls-key').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#dest-tls-cert-error').isHidden(), true);
  assert.match(await page.locator('.alert-error').textContent(), /Not created/);
  const listed = await api('GET', '/v1/destinations?limit=200');
  assert.ok(!listed.json.data.some((x) => x.description === label), 'nothing was created');

  await page.locator('#dest-tls-key').fill(pki.key);
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.getByRole('heading', { level: 1, name: label }).waitFor();
  const id = (await page.locator('.page-header .subtitle').textContent()).trim();
  const path = `/v1/destinations/${encodeURIComponent(id)}`;
  const created = (await api('GET', path)).json;
  assert.equal(created.tls.client_certificate, pki.cert);
  assert.equal(created.tls.ca_certificate, pki.ca);
  assert.equal(created.tls.client_key, 'set');
  // The page: the certificate's end with its warning, the key set, never the key.
  assert.equal(await page.locator('#tls-expires time').getAttribute('datetime'), created.tls.expires_at);
  assert.equal(await page.locator('#tls-expiry-badge').textContent(), 'certificate expires in 10 days');
  assert.match(await page.locator('#tls-key').textContent(), /Client key:\s*set/);
  assert.match(await page.locator('#tls-ca').textContent(), /own CA/);
  const keyBody = pki.key.split('\n')[1];
  for (const html of [await page.content(), (await api('GET', path)).text, (await api('GET', '/v1/destinations?limit=200')).text]) {
    assert.ok(!html.includes('PRIVATE KEY'), 'a private key was shown');
    assert.ok(!html.includes(keyBody), 'a private key was shown');
  }
  await shot(page, '18-destination-tls');
  // The list warns too.
  await page.goto(`${BASE}/ui/#/destinations`);
  const row = page.locator('tbody tr', { has: page.getByRole('link', { name: label }) });
  await row.locator('.cert-badge', { hasText: 'certificate expires in 10 days' }).waitFor();

  // Editing another field leaves the TLS settings alone: the key is kept.
  await page.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(id)}/edit`);
  await page.getByRole('heading', { level: 1, name: 'Edit destination' }).waitFor();
  await page.locator('#dest-tls-key-set').waitFor();
  assert.equal(await page.locator('#dest-tls-key').inputValue(), '', 'the key field starts empty');
  assert.equal(await page.locator('#dest-tls-cert').inputValue(), pki.cert);
  assert.ok(!(await page.content()).includes('PRIVATE KEY'));
  await page.evaluate(() => window.scrollTo(0,
    document.querySelector('#tls-settings').getBoundingClientRect().top + window.scrollY - 72));
  await shot(page, '19-destination-tls-form');
  await page.locator('#dest-description').fill(`${label} (ledger)`);
  const patch = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(path));
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { level: 1, name: `${label} (ledger)` }).waitFor();
  assert.deepEqual(JSON.parse((await patch).postData()), { description: `${label} (ledger)` });
  let now = (await api('GET', path)).json;
  assert.equal(now.tls.client_key, 'set');
  assert.equal(now.tls.client_certificate, pki.cert);

  // Dropping the CA sends the settings with "set" for the key, which is kept.
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.locator('#dest-tls-key-set').waitFor();
  await page.locator('#dest-tls-ca').fill('');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#tls-ca', { hasText: 'system' }).waitFor();
  now = (await api('GET', path)).json;
  assert.deepEqual(now.tls, { ...created.tls, ca_certificate: null });

  // Another key on edit: refused next to the key field, nothing changed.
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.locator('#dest-tls-key').fill(pki.otherKey);
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#dest-tls-key-error').getByText('does not match').waitFor();
  assert.equal((await api('GET', path)).json.tls.client_key, 'set');

  // Removed: the page says none, and so does the API.
  await page.locator('#dest-tls-remove').click();
  assert.equal(await page.locator('#dest-tls-cert').inputValue(), '');
  assert.equal(await page.locator('#dest-tls-key-set').count(), 0);
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#tls-none').waitFor();
  assert.equal((await api('GET', path)).json.tls, null);
  assertNoProblems();
});

test('the destination form keeps OAuth 2.0 client credentials, the secret write-only', async () => {
  const label = 'Ledger behind OAuth';
  const clientSecret = 'cs-console-7d41c0e9b2';
  await page.goto(`${BASE}/ui/#/destinations/new`);
  await page.getByRole('heading', { level: 1, name: 'New destination' }).waitFor();
  await page.locator('#dest-url').fill(`${receiverBase}/ok`);
  await page.locator('#dest-description').fill(label);
  // Not an http(s) URL: the server's words go under the token URL.
  await page.locator('#dest-oauth-token-url').fill('ftp://auth.example.com/token');
  await page.locator('#dest-oauth-client-id').fill('console-client');
  await page.locator('#dest-oauth-client-secret').fill(clientSecret);
  await page.locator('#dest-oauth-scope').fill('webhooks:write');
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.locator('#dest-oauth-token-url-error').getByText('http or https').waitFor();
  assert.equal(await page.locator('#dest-oauth-token-url').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#dest-oauth-client-id-error').isHidden(), true);
  assert.match(await page.locator('.alert-error').textContent(), /Not created/);
  const listed = await api('GET', '/v1/destinations?limit=200');
  assert.ok(!listed.json.data.some((x) => x.description === label), 'nothing was created');

  await page.locator('#dest-oauth-token-url').fill(`${receiverBase}/token`);
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.getByRole('heading', { level: 1, name: label }).waitFor();
  const id = (await page.locator('.page-header .subtitle').textContent()).trim();
  const path = `/v1/destinations/${encodeURIComponent(id)}`;
  const created = (await api('GET', path)).json;
  assert.deepEqual(created.auth, {
    type: 'oauth2_client_credentials', token_url: `${receiverBase}/token`, client_id: 'console-client',
    client_secret: 'set', scope: 'webhooks:write',
  });
  // The page: token URL, client id, scope and the secret set, never the secret.
  assert.equal(await page.locator('#oauth-token-url').textContent(), `${receiverBase}/token`);
  assert.equal(await page.locator('#oauth-client-id').textContent(), 'console-client');
  assert.equal(await page.locator('#oauth-scope').textContent(), 'webhooks:write');
  assert.match(await page.locator('#oauth-secret').textContent(), /Client secret:\s*secret set/);
  for (const html of [await page.content(), (await api('GET', path)).text, (await api('GET', '/v1/destinations?limit=200')).text]) {
    assert.ok(!html.includes(clientSecret), 'a client secret was shown');
  }
  await shot(page, '20-destination-oauth');

  // Editing another field leaves the OAuth settings alone: the secret is kept.
  await page.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(id)}/edit`);
  await page.getByRole('heading', { level: 1, name: 'Edit destination' }).waitFor();
  await page.locator('#dest-oauth-secret-set').waitFor();
  assert.equal(await page.locator('#dest-oauth-client-secret').inputValue(), '', 'the secret field starts empty');
  assert.equal(await page.locator('#dest-oauth-token-url').inputValue(), `${receiverBase}/token`);
  assert.equal(await page.locator('#dest-oauth-scope').inputValue(), 'webhooks:write');
  assert.ok(!(await page.content()).includes(clientSecret));
  await page.evaluate(() => window.scrollTo(0,
    document.querySelector('#oauth-settings').getBoundingClientRect().top + window.scrollY - 72));
  await shot(page, '21-destination-oauth-form');
  await page.locator('#dest-description').fill(`${label} (ledger)`);
  let patch = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(path));
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { level: 1, name: `${label} (ledger)` }).waitFor();
  assert.deepEqual(JSON.parse((await patch).postData()), { description: `${label} (ledger)` });
  assert.deepEqual((await api('GET', path)).json.auth, created.auth);
  // The kept secret is the one typed at creation: a delivery asks for a token with it
  // and sends the token.
  await page.locator('#send-test').click();
  await page.locator('#test-result .test-status').getByText('succeeded').waitFor({ timeout: 20000 });
  assert.equal(received.tokenHeaders.authorization,
    `Basic ${Buffer.from(`console-client:${clientSecret}`).toString('base64')}`);
  assert.equal(received.okHeaders.authorization, 'Bearer console-token');

  // A new scope sends the settings with "set" for the secret, which is kept.
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.locator('#dest-oauth-secret-set').waitFor();
  await page.locator('#dest-oauth-scope').fill('');
  patch = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(path));
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#oauth-scope', { hasText: 'none' }).waitFor();
  assert.deepEqual(JSON.parse((await patch).postData()), { auth: { ...created.auth, scope: null } });
  assert.deepEqual((await api('GET', path)).json.auth, { ...created.auth, scope: null });

  // Removed: the page says none, and so does the API.
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.locator('#dest-oauth-remove').click();
  assert.equal(await page.locator('#dest-oauth-token-url').inputValue(), '');
  assert.equal(await page.locator('#dest-oauth-secret-set').count(), 0);
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#oauth-none').waitFor();
  assert.equal((await api('GET', path)).json.auth, null);
  assertNoProblems();
});

// The fieldsets of the form's Transport section that show.
async function shownBrokerFieldsets(p) {
  return p.evaluate(() => [...document.querySelectorAll('#broker-settings fieldset')]
    .filter((f) => !f.hidden).map((f) => f.id));
}

// Every value the page's inputs and text areas hold.
async function inputValues(p) {
  return p.evaluate(() => [...document.querySelectorAll('input, textarea')].map((x) => x.value));
}

test('the destination form follows the URL to a broker\'s settings, the password write-only', async () => {
  const label = 'Orders into a Redis stream';
  const password = 'rp-console-5f2a9c81e4';
  const newPassword = 'kp-console-0b7d33a6f1';
  // Nothing listens there, and nothing is published to it: its own event type.
  const port = await closedPort();
  const redisUrl = `redis://127.0.0.1:${port}/0`;
  const kafkaUrl = `kafka://127.0.0.1:${port}`;
  await page.goto(`${BASE}/ui/#/destinations/new`);
  await page.getByRole('heading', { level: 1, name: 'New destination' }).waitFor();
  // An http URL takes no broker settings; a redis one shows Redis's and the credentials.
  await page.locator('#dest-url').fill(`${receiverBase}/ok`);
  assert.equal(await page.locator('#dest-transport-name').textContent(), 'HTTP');
  assert.deepEqual(await shownBrokerFieldsets(page), []);
  await page.locator('#dest-url').fill(redisUrl);
  assert.equal(await page.locator('#dest-transport-name').textContent(), 'Redis Streams');
  assert.deepEqual(await shownBrokerFieldsets(page), ['broker-redis', 'broker-credentials']);
  assert.equal(await page.locator('#dest-broker-topic').isVisible(), false);
  await page.locator('#dest-description').fill(label);
  await page.locator('#dest-event-types').fill('console.broker');
  await page.locator('#dest-broker-password').fill(password);
  // No stream: the server's words go under the stream.
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.locator('#dest-broker-stream-error').getByText('required').waitFor();
  assert.equal(await page.locator('#dest-broker-stream').getAttribute('aria-invalid'), 'true');
  assert.match(await page.locator('#dest-broker-stream').getAttribute('aria-describedby'), /\bdest-broker-stream-error\b/);
  assert.equal(await page.locator('#dest-broker-password').getAttribute('aria-invalid'), null);
  assert.match(await page.locator('.alert-error').textContent(), /Not created/);
  const listed = await api('GET', '/v1/destinations?limit=200');
  assert.ok(!listed.json.data.some((x) => x.description === label), 'nothing was created');

  await page.locator('#dest-broker-stream').fill('console-events');
  await page.locator('#dest-broker-max-len').fill('5000');
  const post = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/v1/destinations'));
  await page.getByRole('button', { name: 'Create destination' }).click();
  await page.getByRole('heading', { level: 1, name: label }).waitFor();
  assert.deepEqual(JSON.parse((await post).postData()).broker, { stream: 'console-events', max_len: 5000, password });
  const id = (await page.locator('.page-header .subtitle').textContent()).trim();
  const path = `/v1/destinations/${encodeURIComponent(id)}`;
  const created = (await api('GET', path)).json;
  assert.equal(created.url, redisUrl);
  assert.deepEqual(created.broker, { stream: 'console-events', max_len: 5000, password: 'set' });
  // The page: the transport, its settings and the password set, never the password.
  assert.equal(await page.locator('#broker-transport').textContent(), 'Redis Streams');
  assert.equal(await page.locator('#broker-stream').textContent(), 'console-events');
  assert.equal(await page.locator('#broker-max-len').textContent(), '5000');
  assert.match(await page.locator('#broker-password').textContent(), /Password:\s*password set/);
  assert.match(await page.locator('#broker-username').textContent(), /Username:\s*none/);
  for (const html of [await page.content(), (await api('GET', path)).text, (await api('GET', '/v1/destinations?limit=200')).text]) {
    assert.ok(!html.includes(password), 'a broker password was shown');
  }
  await shot(page, '25-destination-broker');

  // The form: Redis's fieldset only, the settings as stored, the password set and in no
  // input. Editing another field leaves the broker settings alone.
  await page.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(id)}/edit`);
  await page.getByRole('heading', { level: 1, name: 'Edit destination' }).waitFor();
  await page.locator('#dest-broker-password-set').waitFor();
  assert.deepEqual(await shownBrokerFieldsets(page), ['broker-redis', 'broker-credentials']);
  assert.equal(await page.locator('#dest-broker-stream').inputValue(), 'console-events');
  assert.equal(await page.locator('#dest-broker-max-len').inputValue(), '5000');
  assert.equal(await page.locator('#dest-broker-password').inputValue(), '', 'the password field starts empty');
  assert.equal(await page.locator('#dest-broker-username').inputValue(), '');
  assert.equal(await page.locator('#dest-broker-username-set').count(), 0, 'no username is set');
  assert.ok(!(await inputValues(page)).some((v) => v.includes(password) || v === 'set'), 'a credential is in an input');
  assert.ok(!(await page.content()).includes(password));
  await page.evaluate(() => window.scrollTo(0,
    document.querySelector('#broker-settings').getBoundingClientRect().top + window.scrollY - 72));
  await shot(page, '26-destination-broker-form');
  await page.locator('#dest-description').fill(`${label} (trimmed)`);
  let patch = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(path));
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { level: 1, name: `${label} (trimmed)` }).waitFor();
  assert.deepEqual(JSON.parse((await patch).postData()), { description: `${label} (trimmed)` });
  assert.deepEqual((await api('GET', path)).json.broker, created.broker);

  // To Kafka: its topic shows and Redis's settings go. Without a topic, the 422 is on it.
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.locator('#dest-broker-password-set').waitFor();
  await page.locator('#dest-url').fill(kafkaUrl);
  assert.equal(await page.locator('#dest-transport-name').textContent(), 'Apache Kafka');
  assert.deepEqual(await shownBrokerFieldsets(page), ['broker-kafka', 'broker-credentials']);
  assert.equal(await page.locator('#dest-broker-topic').isVisible(), true);
  assert.equal(await page.locator('#dest-broker-stream').isVisible(), false);
  // The password was given for the Redis server: the page says it must be typed again.
  assert.match(await page.locator('#dest-broker-password-status').textContent(), /type it again/);
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#dest-broker-topic-error').getByText('required').waitFor();
  assert.equal(await page.locator('#dest-broker-topic').getAttribute('aria-invalid'), 'true');
  assert.match(await page.locator('#dest-broker-topic').getAttribute('aria-describedby'), /\bdest-broker-topic-error\b/);
  assert.match(await page.locator('.alert-error').textContent(), /Not saved/);
  let now = (await api('GET', path)).json;
  assert.equal(now.url, redisUrl);
  assert.deepEqual(now.broker, created.broker);

  // With a topic, keeping the password is refused next to the password.
  await page.locator('#dest-broker-topic').fill('console-events');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#dest-broker-password-error:not([hidden])').waitFor();
  assert.equal(await page.locator('#dest-broker-password').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#dest-broker-topic').getAttribute('aria-invalid'), null);
  assert.equal((await api('GET', path)).json.url, redisUrl);

  // A new password: saved, and Kafka's settings replace Redis's.
  await page.locator('#dest-broker-password').fill(newPassword);
  patch = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(path));
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#broker-transport', { hasText: 'Apache Kafka' }).waitFor();
  assert.deepEqual(JSON.parse((await patch).postData()),
    { url: kafkaUrl, broker: { topic: 'console-events', password: newPassword } });
  now = (await api('GET', path)).json;
  assert.equal(now.url, kafkaUrl);
  assert.deepEqual(now.broker, { topic: 'console-events', password: 'set' });
  assert.equal(await page.locator('#broker-topic').textContent(), 'console-events');
  assert.match(await page.locator('#broker-password').textContent(), /password set/);
  assert.equal(await page.locator('#broker-stream').count(), 0);
  const html = await page.content();
  assert.ok(!html.includes(password) && !html.includes(newPassword), 'a broker password was shown');
  assertNoProblems();
});

test('a portal link key is taken out of the address at once', async () => {
  // Works with any key; the tenant portal below needs the portal-links route.
  const fresh = await newPage('fragment');
  await fresh.goto(`${BASE}/ui/#key=${encodeURIComponent(ADMIN_KEY)}`);
  await fresh.locator('#link-confirm').waitFor();
  assert.ok(!fresh.url().includes(ADMIN_KEY), 'the key left the address bar');
  assert.ok(!fresh.url().includes('key='));
  assert.equal(await fresh.evaluate(() => window.location.hash), '');
  assert.equal(await fresh.evaluate(() => sessionStorage.getItem('webhookd.key')), null);
  await fresh.getByText('This link signs you in with an admin key').waitFor();
  await fresh.locator('#link-continue').click();
  await fresh.locator('#session .role', { hasText: 'Admin' }).waitFor();
  await fresh.getByRole('button', { name: 'Sign out' }).click();
  await fresh.getByRole('heading', { name: 'Sign in to webhookd' }).waitFor();
  assert.equal(await fresh.evaluate(() => sessionStorage.getItem('webhookd.key')), null);
  await fresh.context().close();
  assertNoProblems();
});

// A link someone else made must not sign anyone in silently: the tab would work in the
// maker's tenant (login CSRF). A new tab has no key of its own.
test('a portal link opened in a new tab names the tenant and signs in only on Continue', async () => {
  const tenant = `phish-${Date.now()}`;
  const link = await api('POST', `/v1/admin/tenants/${tenant}/portal-links`, { ttl: '1h' });
  assert.equal(link.status, 201, link.text);
  const made = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/ok`, description: 'The maker\'s destination', tenant_id: tenant,
  });
  assert.equal(made.status, 201, made.text);
  const fragment = new URL(link.json.url).hash;
  const stored = (tab) => tab.evaluate(() => sessionStorage.getItem('webhookd.key'));

  // Cancel: nothing is kept, the sign-in form says so.
  const tab = watch(await page.context().newPage(), 'new-tab');
  await tab.goto(`${BASE}/ui/${fragment}`);
  await tab.locator('#link-continue').waitFor();
  assert.equal(await tab.evaluate(() => window.location.href), `${BASE}/ui/`, 'the fragment is gone');
  assert.equal(await tab.locator('#link-tenant').textContent(), tenant);
  assert.match(await tab.locator('#link-target').textContent(),
    new RegExp(`^This link signs you in to the webhook portal of tenant ${tenant}\\. Continue\\?$`));
  assert.equal(await tab.locator('#link-replaces').count(), 0, 'no key was signed in before');
  assert.equal(await stored(tab), null, 'not signed in before Continue');
  assert.equal(await tab.locator('#session .role').count(), 0);
  await shot(tab, '08b-portal-link-confirm');
  await tab.locator('#link-cancel').click();
  await tab.getByRole('heading', { name: 'Sign in to webhookd' }).waitFor();
  await tab.getByText('The link was not used; no key was kept.').waitFor();
  assert.equal(await stored(tab), null, 'Cancel keeps no key');
  assert.ok(!tab.url().includes('key='));

  // Continue: the link's key is kept and the portal opens.
  await tab.goto(`${BASE}/ui/${fragment}`);
  await tab.locator('#link-continue').waitFor();
  assert.equal(await stored(tab), null);
  await tab.locator('#link-continue').click();
  await tab.locator('#session .role', { hasText: 'Tenant portal' }).waitFor();
  assert.equal(await stored(tab), link.json.key);
  await tab.getByRole('link', { name: 'The maker\'s destination' }).waitFor();
  assert.ok(!tab.url().includes('key='));
  await tab.close();
  assertNoProblems();
});

test('a link with another key asks before it replaces the key in use', async () => {
  const other = await api('POST', '/v1/admin/tenants/csrf-check/portal-links', { ttl: '1h' });
  assert.equal(other.status, 201, other.text);
  const tab = await newPage('switch');
  await signIn(tab, ADMIN_KEY);
  assert.equal(await tab.locator('#session .role').textContent(), 'Admin');
  const fragment = new URL(other.json.url).hash;
  // Cancel: nothing changes.
  await tab.goto(`${BASE}/ui/${fragment}`);
  await tab.getByRole('heading', { name: 'Open this link?' }).waitFor();
  await tab.locator('#link-continue').waitFor();
  assert.ok(!tab.url().includes('key='));
  await tab.locator('#link-replaces').waitFor();
  // csrf-check has no rows yet: the page says it cannot name the tenant.
  await tab.getByText('a tenant whose name the key does not reveal').waitFor();
  assert.equal(await tab.evaluate(() => sessionStorage.getItem('webhookd.key')), ADMIN_KEY);
  await tab.locator('#link-cancel').click();
  await tab.locator('#session .role').waitFor();
  assert.equal(await tab.locator('#session .role').textContent(), 'Admin');
  assert.equal(await tab.evaluate(() => sessionStorage.getItem('webhookd.key')), ADMIN_KEY);
  // Continue: the link's key takes over.
  await tab.goto(`${BASE}/ui/${fragment}`);
  await tab.locator('#link-continue').click();
  await tab.locator('#session .role', { hasText: 'Tenant portal' }).waitFor();
  assert.equal(await tab.evaluate(() => sessionStorage.getItem('webhookd.key')), other.json.key);
  await tab.context().close();
  assertNoProblems();
});

test('a tenant portal link shows that tenant only', async (t) => {
  const tenant = `acme-${Date.now()}`;
  const link = await api('POST', `/v1/admin/tenants/${tenant}/portal-links`, { ttl: '1h' });
  if (link.status === 404 || link.status === 405) {
    console.log('NOTICE: tenant portal skipped: POST /v1/admin/tenants/{t}/portal-links answers', link.status);
    t.skip('no portal-links route');
    return;
  }
  assert.equal(link.status, 201, link.text);
  const mine = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/ok`, description: `Portal of ${tenant}`, tenant_id: tenant,
  });
  assert.equal(mine.status, 201, mine.text);
  const other = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/ok`, description: 'Somebody else', tenant_id: `${tenant}-other`,
  });
  assert.equal(other.status, 201, other.text);

  // The link is built on WEBHOOKD_PUBLIC_URL; open its fragment on the server under test.
  const fragment = new URL(link.json.url).hash;
  assert.match(fragment, /^#key=/);
  const portal = await newPage('portal');
  await portal.goto(`${BASE}/ui/${fragment}`);
  assert.equal(await portal.locator('#link-tenant').textContent(), tenant);
  await portal.locator('#link-continue').click();
  await portal.locator('#session .role').waitFor();
  assert.equal(await portal.locator('#session .role').textContent(), 'Tenant portal');
  assert.ok(!portal.url().includes('key='));
  await portal.getByRole('link', { name: `Portal of ${tenant}` }).waitFor();
  const body = await portal.locator('main').textContent();
  assert.ok(!body.includes('Somebody else'), 'another tenant is not shown');
  assert.ok(!body.includes('Order events for the warehouse'), 'untenanted destinations are not shown');
  assert.equal(await portal.getByRole('link', { name: 'Overview' }).count(), 0);
  await shot(portal, '09-portal');
  await portal.context().close();
  assertNoProblems();
});

// ---- inbound sources ----

// A GitHub delivery as GitHub signs it: sha256= and the hex HMAC-SHA256 of the body.
async function sendGithub(sourceId, secret, delivery, payload) {
  const body = JSON.stringify(payload);
  const res = await fetch(`${BASE}/in/${sourceId}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'issues',
      'X-GitHub-Delivery': delivery,
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
    signal: AbortSignal.timeout(10000),
  });
  return { status: res.status, json: await res.json().catch(() => null) };
}

test('a source is created with its provider\'s fields, receives, rotates and is deleted', async () => {
  await page.goto(`${BASE}/ui/#/sources/new`);
  const form = page.locator('#source-form');
  // Only the fields the provider reads are shown.
  await form.locator('#provider').selectOption('twilio');
  assert.ok(await form.locator('#url').isVisible(), 'Twilio asks for the URL it signs');
  assert.ok(!(await form.locator('#hmac_header').isVisible()));
  await form.locator('#provider').selectOption('hmac');
  assert.ok(await form.locator('#hmac_header').isVisible(), 'a generic signer asks for its header');
  assert.ok(await form.locator('#event_type').isVisible());
  assert.ok(!(await form.locator('#url').isVisible()));
  await form.locator('#provider').selectOption('stripe');
  assert.ok(await form.locator('#tolerance').isVisible(), 'Stripe signs a timestamp');
  await form.locator('#provider').selectOption('github');
  assert.ok(!(await form.locator('#tolerance').isVisible()), 'GitHub signs no timestamp');
  assert.ok(!(await form.locator('#url').isVisible()) && !(await form.locator('#hmac_header').isVisible()));
  await form.locator('#secret').fill('console-github-secret');
  await form.locator('#description').fill('GitHub org hooks');
  await shot(page, '30-source-form');
  await form.getByRole('button', { name: 'Create source' }).click();
  await page.locator('#ingest-url').waitFor();
  const id = decodeURIComponent(page.url().split('#/sources/')[1]);
  assert.match(id, /^src_/);
  assert.match(await page.locator('#ingest-url').textContent(), new RegExp(`/in/${id}$`));
  assert.ok(!(await page.locator('main').textContent()).includes('console-github-secret'), 'the secret is never shown');

  // A signed delivery becomes an event, listed on the source's page and linking back.
  const sent = await sendGithub(id, 'console-github-secret', 'console-delivery-1', { action: 'opened', n: 1 });
  assert.equal(sent.status, 200, JSON.stringify(sent.json));
  const again = await sendGithub(id, 'console-github-secret', 'console-delivery-1', { action: 'opened', n: 1 });
  assert.deepEqual(again.json, sent.json, 'a duplicate answers the first event\'s id');
  assert.equal((await sendGithub(id, 'a-forger', 'console-forged', { n: 0 })).status, 401);
  await page.reload();
  // The latest requests, newest first, with what became of each.
  const requests = page.locator('#source-requests');
  await requests.getByRole('table').waitFor();
  const outcomes = await requests.locator('tbody tr td:nth-child(2)').allTextContents();
  assert.deepEqual(outcomes.map((o) => o.trim()), ['unverified', 'duplicate', 'accepted']);
  const row = page.locator('main').getByRole('link', { name: sent.json.event_id }).first();
  await row.waitFor();
  assert.match(await page.locator('main').textContent(), /console-delivery-1/);
  assert.match(await page.locator('main').textContent(), /github\.issues\.opened/);
  await shot(page, '31-source');
  await row.click();
  await page.locator('#event-source').waitFor();
  assert.equal(await page.locator('#event-source').textContent(), id);
  await page.locator('#event-source').click();
  await page.locator('#ingest-url').waitFor();

  // Rotation: the new secret verifies at once, the old one within its grace.
  await page.locator('#rotate-source-secret').click();
  const dialog = page.locator('dialog[open]');
  await dialog.locator('#new-secret').fill('console-github-secret-2');
  await dialog.locator('#source-grace-period').fill('1h');
  await dialog.getByRole('button', { name: 'Rotate' }).click();
  await page.locator('#source-rotated').waitFor();
  assert.equal((await sendGithub(id, 'console-github-secret-2', 'console-delivery-2', { n: 2 })).status, 200);
  assert.equal((await sendGithub(id, 'console-github-secret', 'console-delivery-3', { n: 3 })).status, 200);
  assert.equal((await sendGithub(id, 'a-wrong-secret', 'console-delivery-4', { n: 4 })).status, 401);

  // Listed, then deleted: its address answers 404 from then on.
  await page.goto(`${BASE}/ui/#/sources`);
  await page.getByRole('link', { name: 'GitHub org hooks' }).first().waitFor();
  await page.goto(`${BASE}/ui/#/sources/${encodeURIComponent(id)}`);
  await page.locator('#delete-source').click();
  await page.locator('dialog[open]').getByRole('button', { name: 'Delete source' }).click();
  await eventually('the list after the delete', async () => (await heading(page)) === 'Sources');
  assert.equal((await sendGithub(id, 'console-github-secret-2', 'console-delivery-5', { n: 5 })).status, 404);
  assertNoProblems();
});

test('a tenant portal lists its own sources only', async (t) => {
  const tenant = `src-${Date.now()}`;
  const link = await api('POST', `/v1/admin/tenants/${tenant}/portal-links`, { ttl: '1h' });
  if (link.status !== 201) {
    t.skip('no portal-links route');
    return;
  }
  const mine = await api('POST', '/v1/sources', {
    provider: 'shopify', secret: 'shop-secret', tenant_id: tenant, description: `Shop of ${tenant}`,
  });
  assert.equal(mine.status, 201, mine.text);
  const other = await api('POST', '/v1/sources', {
    provider: 'shopify', secret: 'shop-secret', tenant_id: `${tenant}-other`, description: 'Another shop',
  });
  assert.equal(other.status, 201, other.text);
  const portal = await newPage('portal-sources');
  await portal.goto(`${BASE}/ui/${new URL(link.json.url).hash}`);
  await portal.locator('#link-continue').click();
  await portal.locator('#session .role').waitFor();
  await portal.goto(`${BASE}/ui/#/sources`);
  await portal.getByRole('link', { name: `Shop of ${tenant}` }).waitFor();
  assert.ok(!(await portal.locator('main').textContent()).includes('Another shop'));
  // Another tenant's source is as unknown as a made-up id.
  await portal.goto(`${BASE}/ui/#/sources/${encodeURIComponent(other.json.id)}`);
  await portal.locator('.alert-error').waitFor();
  await shot(portal, '32-portal-sources');
  await portal.context().close();
  assertNoProblems();
});

// ---- subjects: finding and erasing ----

const UNFINISHED = ['pending', 'in_flight'];

// How many deliveries of these events are not finished yet.
async function unfinishedDeliveries(eventIds) {
  let n = 0;
  for (const id of eventIds) {
    const r = await api('GET', `/v1/events/${encodeURIComponent(id)}`);
    assert.equal(r.status, 200, r.text);
    n += (r.json.deliveries || []).filter((d) => UNFINISHED.includes(d.status)).length;
  }
  return n;
}

async function publishNamed(fields) {
  const r = await api('POST', '/v1/events', { type: 'gdpr.profile', ...fields });
  assert.equal(r.status, 202, r.text);
  return r.json.id;
}

async function searchSubject(p, subject, rows) {
  await p.locator('#filter-subject').fill(subject);
  await p.getByRole('button', { name: 'Apply' }).click();
  await p.waitForURL(/subject=/);
  // The unfiltered list held more rows: wait for it to be replaced.
  await p.waitForFunction((n) => document.querySelectorAll('main tbody tr').length === n, rows);
}

// Watches the page's erasure requests, to tell that a cancelled dialog sent none.
function erasuresSent(p) {
  const sent = [];
  p.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/v1/subjects/erase')) sent.push(r.postDataJSON());
  });
  return sent;
}

async function confirmErasure(p, subject) {
  const dialog = p.locator('dialog[open]');
  const erase = dialog.getByRole('button', { name: 'Erase', exact: true });
  assert.equal(await erase.isDisabled(), true, 'Erase waits for the subject typed again');
  await dialog.locator('#erase-confirm-subject').fill(`${subject} `);
  assert.equal(await erase.isDisabled(), true, 'a subject that differs does not confirm');
  await dialog.locator('#erase-confirm-subject').fill(subject);
  await erase.click();
}

test('an admin finds the events naming a subject and erases them', async () => {
  const n = Date.now();
  // Markup in a subject must show as text.
  const subject = `user:<b>${n}</b>`;
  const tenant = `gdpr-${n}`;
  const ok = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/ok`, description: 'Profiles', event_types: ['gdpr.unused'],
  });
  assert.equal(ok.status, 201, ok.text);
  const tenantOk = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/ok`, description: 'Profiles of a tenant', event_types: ['gdpr.unused'], tenant_id: tenant,
  });
  assert.equal(tenantOk.status, 201, tenantOk.text);
  // A fifo destination blocked by a dead letter: the next delivery of the key stays
  // pending, for the erasure to cancel.
  const fifo = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/down`, description: 'Blocked (fifo)', event_types: ['gdpr.unused'],
    ordering: 'fifo', on_dead_letter: 'block',
  });
  assert.equal(fifo.status, 201, fifo.text);
  await publishNamed({ payload: { n: 0 }, ordering_key: 'k', destination_id: fifo.json.id });
  await eventually('the fifo key to be blocked by a dead letter', async () => {
    const r = await api('GET', `/v1/admin/dead-letters?destination_id=${encodeURIComponent(fifo.json.id)}`);
    return r.status === 200 && r.json.data.length === 1;
  });

  const named = [
    await publishNamed({ payload: { email: 'ann@example.com' }, subjects: [subject], destination_id: ok.json.id }),
    await publishNamed({
      payload: { email: 'ann@acme.example' }, subjects: [subject, 'user:other'], tenant_id: tenant,
      destination_id: tenantOk.json.id,
    }),
    await publishNamed({ payload: { email: 'ann@fifo.example' }, subjects: [subject], ordering_key: 'k', destination_id: fifo.json.id }),
  ];
  const unnamed = await publishNamed({ payload: { n: 1 }, subjects: ['user:other'], destination_id: ok.json.id });
  await eventually('only the blocked delivery to be unfinished', async () =>
    (await unfinishedDeliveries([...named, unnamed])) === 1);

  await visit(page, '#/events');
  await searchSubject(page, subject, 3);
  for (const id of named) await page.getByRole('link', { name: id, exact: true }).waitFor();
  assert.equal(await page.getByRole('link', { name: unnamed, exact: true }).count(), 0);
  await shot(page, '30-events-of-a-subject');

  // The event's subjects, as text.
  await page.getByRole('link', { name: named[1], exact: true }).click();
  const subjects = page.locator('#event-subjects li');
  await subjects.first().waitFor();
  assert.deepEqual(await subjects.allTextContents(), [subject, 'user:other']);
  assert.equal(await page.locator('#event-subjects b').count(), 0, 'no markup from a subject');

  // Filtered to a tenant, the erasure stays in it; Cancel sends nothing.
  const sent = erasuresSent(page);
  await visit(page, `#/events?subject=${encodeURIComponent(subject)}&tenant_id=${tenant}`);
  await page.getByRole('link', { name: named[1], exact: true }).waitFor();
  await page.locator('#erase-subject').click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByRole('heading', { name: `Erase everything about "${subject}"?` }).waitFor();
  assert.match(await dialog.locator('#erase-confirm-message').textContent(), /^This erases the payload of 1 event,/);
  assert.match(await dialog.locator('#erase-confirm-scope').textContent(), new RegExp(`within tenant "${tenant}" only`));
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });

  await visit(page, `#/events?subject=${encodeURIComponent(subject)}`);
  await page.locator('main tbody tr').nth(2).waitFor();
  await page.locator('#erase-subject').click();
  await dialog.getByRole('heading', { name: `Erase everything about "${subject}"?` }).waitFor();
  assert.equal(await dialog.locator('#erase-confirm-message').textContent(),
    'This erases the payloads of 3 events, the receivers\' answers stored with them, and cancels their unfinished deliveries. It cannot be undone.');
  assert.match(await dialog.locator('#erase-confirm-scope').textContent(), /across every tenant/);
  await shot(page, '31-erase-subject-confirm');
  assert.deepEqual(sent, [], 'nothing was erased before the confirmation');
  await confirmErasure(page, subject);
  await page.locator('#erase-result').getByText('Erased 3 events; cancelled 1 delivery.', { exact: true }).waitFor();
  assert.deepEqual(sent, [{ subject }]);
  await page.getByText('No events name this subject').waitFor();
  await shot(page, '32-subject-erased');

  for (const id of named) {
    const r = await api('GET', `/v1/events/${encodeURIComponent(id)}`);
    assert.equal(r.json.payload, null, 'the payload is erased');
    assert.ok(r.json.erased_at);
  }
  const blocked = await api('GET', `/v1/events/${encodeURIComponent(named[2])}`);
  assert.deepEqual(blocked.json.deliveries.map((d) => [d.status, d.last_error]), [['cancelled', 'erased']]);
  const kept = await api('GET', `/v1/events/${encodeURIComponent(unnamed)}`);
  assert.deepEqual(kept.json.payload, { n: 1 }, 'an event not naming the subject is untouched');

  await visit(page, `#/events/${encodeURIComponent(named[1])}`);
  await page.locator('#payload-erased').waitFor();
  assert.match(await page.locator('#payload-erased').textContent(), /^Payload erased at \S/);
  assert.equal(await page.locator('#payload').count(), 0);
  assert.deepEqual(await page.locator('#event-subjects li').allTextContents(), ['user:other']);
  await shot(page, '33-event-erased');

  await visit(page, `#/events?subject=${encodeURIComponent(subject)}`);
  await page.getByText('No events name this subject').waitFor();
  assertNoProblems();
});

test('a tenant portal finds and erases a subject within its own tenant', async (t) => {
  const n = Date.now();
  const tenant = `gdpr-portal-${n}`;
  const subject = `email:ann-${n}@example.com`;
  const link = await api('POST', `/v1/admin/tenants/${tenant}/portal-links`, { ttl: '1h' });
  if (link.status === 404 || link.status === 405) {
    t.skip('no portal-links route');
    return;
  }
  assert.equal(link.status, 201, link.text);
  const destinationOf = async (tenantId) => {
    const r = await api('POST', '/v1/destinations', {
      url: `${receiverBase}/ok`, description: `Profiles of ${tenantId}`, event_types: ['gdpr.unused'], tenant_id: tenantId,
    });
    assert.equal(r.status, 201, r.text);
    return r.json.id;
  };
  const mineDst = await destinationOf(tenant);
  const otherDst = await destinationOf(`${tenant}-other`);
  const mine = [
    await publishNamed({ payload: { v: 1 }, subjects: [subject], tenant_id: tenant, destination_id: mineDst }),
    await publishNamed({ payload: { v: 2 }, subjects: [subject], tenant_id: tenant, destination_id: mineDst }),
  ];
  const unnamed = await publishNamed({ payload: { v: 0 }, tenant_id: tenant, destination_id: mineDst });
  const others = await publishNamed({
    payload: { v: 3 }, subjects: [subject], tenant_id: `${tenant}-other`, destination_id: otherDst,
  });
  await eventually('the deliveries to finish', async () =>
    (await unfinishedDeliveries([...mine, unnamed, others])) === 0);

  const portal = await newPage('portal-erase');
  await portal.goto(`${BASE}/ui/${new URL(link.json.url).hash}`);
  await portal.locator('#link-continue').click();
  await portal.locator('#session .role', { hasText: 'Tenant portal' }).waitFor();
  await visit(portal, '#/events');
  await portal.locator('main tbody tr').nth(2).waitFor();
  await searchSubject(portal, subject, 2);
  for (const id of mine) await portal.getByRole('link', { name: id, exact: true }).waitFor();
  assert.equal(await portal.getByRole('link', { name: unnamed, exact: true }).count(), 0);
  assert.equal(await portal.getByRole('link', { name: others, exact: true }).count(), 0,
    'another tenant\'s event is not found');

  const sent = erasuresSent(portal);
  await portal.locator('#erase-subject').click();
  const dialog = portal.locator('dialog[open]');
  await dialog.getByRole('heading', { name: `Erase everything about "${subject}"?` }).waitFor();
  assert.match(await dialog.locator('#erase-confirm-message').textContent(), /^This erases the payloads of 2 events,/);
  assert.match(await dialog.locator('#erase-confirm-scope').textContent(), /within your tenant/);
  await shot(portal, '34-portal-erase-confirm');
  await confirmErasure(portal, subject);
  await portal.locator('#erase-result').getByText('Erased 2 events; cancelled 0 deliveries.', { exact: true }).waitFor();
  assert.deepEqual(sent, [{ subject }]);
  await portal.getByText('No events name this subject').waitFor();

  await visit(portal, `#/events/${encodeURIComponent(mine[0])}`);
  await portal.locator('#payload-erased').waitFor();
  assert.equal(await portal.locator('#payload').count(), 0);
  await visit(portal, `#/events?subject=${encodeURIComponent(subject)}`);
  await portal.getByText('No events name this subject').waitFor();
  await portal.context().close();

  const kept = await api('GET', `/v1/events/${encodeURIComponent(others)}`);
  assert.deepEqual([kept.json.payload, kept.json.subjects, kept.json.erased_at], [{ v: 3 }, [subject], null],
    'another tenant\'s event naming the same subject is untouched');
  assertNoProblems();
});

test('a tenant portal reads the catalog and changes nothing', async (t) => {
  const link = await api('POST', '/v1/admin/tenants/catalog-reader/portal-links', { ttl: '1h' });
  if (link.status === 404 || link.status === 405) {
    t.skip('no portal-links route');
    return;
  }
  assert.equal(link.status, 201, link.text);
  const portal = await newPage('portal-catalog');
  await portal.goto(`${BASE}/ui/${new URL(link.json.url).hash}`);
  await portal.locator('#link-continue').click();
  await portal.locator('#session .role', { hasText: 'Tenant portal' }).waitFor();
  await portal.getByRole('link', { name: 'Catalog' }).click();
  await portal.getByRole('heading', { level: 1, name: 'Catalog' }).waitFor();
  await portal.getByRole('link', { name: PAID, exact: true }).click();
  await portal.getByRole('heading', { level: 1, name: PAID }).waitFor();
  await portal.locator('#schema-fields').getByText('items[].sku').waitFor();
  assert.equal(await portal.locator('#examples pre').count(), 2);
  assert.equal(await portal.locator('#edit-type').count(), 0, 'no Edit in the portal');
  assert.equal(await portal.locator('#delete-type').count(), 0, 'no Delete in the portal');
  await shot(portal, '16-portal-event-type');
  await portal.goto(`${BASE}/ui/#/catalog`);
  await portal.getByRole('link', { name: PAID, exact: true }).waitFor();
  assert.equal(await portal.locator('#new-event-type').count(), 0, 'no New event type in the portal');
  await portal.goto(`${BASE}/ui/#/catalog/new`);
  await portal.getByText('This key may not see this page.').waitFor();
  assert.equal(await portal.locator('#event-type-form').count(), 0);
  // The tenant's destination form offers the catalog, without webhookd's own types.
  await portal.goto(`${BASE}/ui/#/destinations/new`);
  await portal.locator('#catalog-picker').getByLabel(PAID).waitFor();
  assert.doesNotMatch(await portal.locator('#catalog-picker').textContent(), /webhookd\./);
  await portal.context().close();
  assertNoProblems();
});

test('strings from the API are shown as text, never run', async () => {
  const created = await api('POST', '/v1/destinations', {
    url: `${receiverBase}/xss`, description: XSS_DESCRIPTION,
  });
  assert.equal(created.status, 201, created.text);
  const id = created.json.id;
  const r = await api('POST', '/v1/events', { type: 'test.ping', payload: { html: XSS_DESCRIPTION }, destination_id: id });
  assert.equal(r.status, 202, r.text);
  const deliveryId = r.json.deliveries[0].id;

  await page.goto(`${BASE}/ui/#/destinations`);
  await page.getByRole('link', { name: XSS_DESCRIPTION }).waitFor();
  await page.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(id)}`);
  await page.getByRole('heading', { level: 1, name: XSS_DESCRIPTION }).waitFor();
  assert.equal(await heading(page), XSS_DESCRIPTION);

  await eventually('the /xss delivery succeeded', async () =>
    (await api('GET', `/v1/deliveries/${deliveryId}`)).json.status === 'succeeded');
  await page.goto(`${BASE}/ui/#/deliveries/${encodeURIComponent(deliveryId)}`);
  const pre = page.locator('.timeline pre').first();
  await pre.waitFor();
  assert.equal(await pre.textContent(), XSS_BODY);
  await page.goto(`${BASE}/ui/#/events/${encodeURIComponent(r.json.id)}`);
  await page.locator('#payload').getByText('<script>alert(2)</script>').waitFor();

  assert.equal(await page.locator('img[src="x"]').count(), 0, 'no <img src=x> was created');
  assert.equal(await page.locator('b').count(), 0, 'no markup from a response body');
  const scripts = await page.evaluate(() => [...document.scripts].map((s) => s.src));
  assert.deepEqual(scripts, [`${BASE}/ui/app.js`]);
  assertNoProblems();
});

test('the overview shows the figures and the destinations needing attention', async () => {
  // Disable one so that "Needs attention" has something to show.
  const patched = await api('PATCH', `/v1/destinations/${encodeURIComponent(state.failId)}`, { enabled: false });
  assert.equal(patched.status, 200, patched.text);
  await page.goto(`${BASE}/ui/#/overview`);
  await page.locator('.figure').first().waitFor();
  assert.match(await page.locator('.figures').textContent(), /Pending/);
  await page.getByRole('link', { name: 'Billing (flaky)' }).first().waitFor();
  // Its receiver answers 500: it is among the most failing of the last hour, with its
  // failed attempts counted (it was dead-lettered, so at least one).
  const failing = page.getByRole('table', { name: 'Destinations with the most failures in the last hour' });
  const row = rowOf(failing, 'Billing (flaky)');
  await row.waitFor();
  const failed = Number((await row.locator('td').nth(2).textContent()).replace(/[^0-9]/g, ''));
  assert.ok(failed >= 1, `failed attempts: ${failed}`);
  // Either the charts or the words saying there is no series.
  await page.locator('svg.chart, .empty-title:text("No series available")').first().waitFor();
  await shot(page, '00-overview');
  assertNoProblems();
});

// ---- health tells what the attempts tell ----

// A loopback port nobody listens on: attempts to it fail to connect.
async function closedPort() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// A destination of its own event type (so fan-out from other tests leaves it alone) and
// `events` events sent straight to it.
async function destinationWithEvents(fields, events) {
  const created = await api('POST', '/v1/destinations', { event_types: ['console.health'], ...fields });
  assert.equal(created.status, 201, created.text);
  const d = created.json;
  for (let i = 0; i < events; i++) {
    const r = await api('POST', '/v1/events', {
      type: 'console.health', payload: { n: i }, destination_id: d.id,
      ...(d.tenant_id ? { tenant_id: d.tenant_id } : {}),
    });
    assert.equal(r.status, 202, r.text);
  }
  return d;
}

async function destinationHealth(id) {
  return (await api('GET', `/v1/destinations/${encodeURIComponent(id)}`)).json.health;
}

// Opens a page of the console afresh: going to the address the tab is at already would
// not load it again, and would leave what it showed before.
async function visit(p, hash) {
  const url = `${BASE}/ui/${hash}`;
  if (p.url() === url) await p.reload();
  else await p.goto(url);
}

// The row of a table that links to `name`.
function rowOf(where, name) {
  return where.locator('tbody tr', { has: where.page().getByRole('link', { name, exact: true }) });
}

test('a destination whose every attempt got a 404 needs attention and says it is failing', async () => {
  const name = 'Endpoint moved (404)';
  const d = await destinationWithEvents({ url: `${receiverBase}/moved`, description: name }, 2);
  // The premise: a 404 is permanent, so the circuit stays closed and counts nothing,
  // while failing_since is set.
  const health = await eventually('failing_since to be set', async () => {
    const h = await destinationHealth(d.id);
    return h && h.failing_since ? h : null;
  });
  assert.equal(health.circuit, 'closed');
  assert.equal(health.consecutive_failures, 0);

  await visit(page, '#/overview');
  const needy = page.getByRole('table', { name: 'Destinations that need attention' });
  await rowOf(needy, name).waitFor();
  assert.match(await rowOf(needy, name).locator('.health-badge').textContent(), /^failing$/);
  assert.equal(await rowOf(needy, 'Order events for the warehouse').count(), 0,
    'a destination whose attempts succeed is not listed');

  await visit(page, '#/destinations');
  const list = page.getByRole('table', { name: 'Destinations', exact: true });
  await rowOf(list, name).waitFor();
  assert.equal(await rowOf(list, name).locator('.health-badge').textContent(), 'failing');
  assert.equal(await rowOf(list, 'Order events for the warehouse').locator('.health-badge').textContent(), 'healthy');

  // The page says what failed, and never "0 failures" beside a failing destination.
  await visit(page, `#/destinations/${encodeURIComponent(d.id)}`);
  await page.getByRole('heading', { level: 1, name }).waitFor();
  assert.equal(await page.locator('#health-state .health-badge').textContent(), 'failing');
  await page.locator('#latest-attempt .http-code', { hasText: '404' }).waitFor();
  const card = await page.locator('#health-card').textContent();
  assert.doesNotMatch(card, /Consecutive failures/);
  assert.match(card, /Retryable failures in a row/);
  assert.match(card, /not retryable/);
  assert.match(await page.getByRole('table', { name: 'Deliveries of this destination' }).textContent(), /404/);
  await shot(page, '22-destination-failing-404');
  assertNoProblems();
});

test('a destination whose circuit opened on 500s needs attention and says so', async () => {
  const name = 'Down for maintenance (500)';
  // Four events of three attempts each: 12 retryable failures, past the default
  // threshold of 10.
  const d = await destinationWithEvents({ url: `${receiverBase}/down`, description: name }, 4);
  await eventually('the circuit to open', async () => {
    const h = await destinationHealth(d.id);
    return h && (h.circuit === 'open' || h.circuit === 'half_open');
  }, { timeout: 60000 });

  await visit(page, '#/overview');
  const needy = page.getByRole('table', { name: 'Destinations that need attention' });
  await rowOf(needy, name).waitFor();
  assert.match(await rowOf(needy, name).locator('.health-badge').textContent(), /^circuit (open|half open)$/);

  await visit(page, '#/destinations');
  const list = page.getByRole('table', { name: 'Destinations', exact: true });
  await rowOf(list, name).waitFor();
  assert.match(await rowOf(list, name).locator('.health-badge').textContent(), /^circuit (open|half open)$/);

  await visit(page, `#/destinations/${encodeURIComponent(d.id)}`);
  await page.getByRole('heading', { level: 1, name }).waitFor();
  assert.match(await page.locator('#health-state .health-badge').textContent(), /^circuit (open|half open)$/);
  const failures = Number((await page.locator('#retryable-failures .count').textContent()).trim());
  assert.ok(failures >= 10, `retryable failures in a row: ${failures}`);
  assertNoProblems();
});

test('the deliveries tables show the last error, in the console and in the portal', async (t) => {
  const tenant = `nobody-home-${Date.now()}`;
  const name = 'Nobody listening';
  const d = await destinationWithEvents({
    url: `http://127.0.0.1:${await closedPort()}/hook`, description: name, tenant_id: tenant,
  }, 1);
  // Its last attempt's error: curl's words carry the milliseconds the connection took
  // ("after 0 ms"), so an earlier attempt's error may not be the one shown by the time a
  // page is read.
  const delivery = await eventually('the delivery to be dead-lettered', async () => {
    const r = await api('GET', `/v1/deliveries?destination_id=${encodeURIComponent(d.id)}`);
    const x = r.json && r.json.data && r.json.data[0];
    return x && x.status === 'dead_lettered' && x.last_error ? x : null;
  });
  const error = delivery.last_error;

  await visit(page, `#/destinations/${encodeURIComponent(d.id)}`);
  const table = page.getByRole('table', { name: 'Deliveries of this destination' });
  await table.getByText(error).waitFor();
  await visit(page, `#/events/${encodeURIComponent(delivery.event_id)}`);
  await page.getByRole('table', { name: 'Deliveries of this event' }).getByText(error).waitFor();

  const link = await api('POST', `/v1/admin/tenants/${tenant}/portal-links`, { ttl: '1h' });
  if (link.status === 404 || link.status === 405) {
    t.skip('no portal-links route');
    return;
  }
  assert.equal(link.status, 201, link.text);
  const portal = await newPage('portal-errors');
  await portal.goto(`${BASE}/ui/${new URL(link.json.url).hash}`);
  await portal.locator('#link-continue').click();
  await portal.locator('#session .role', { hasText: 'Tenant portal' }).waitFor();
  // The portal has no overview: its destinations page names the ones needing attention.
  const needy = portal.getByRole('table', { name: 'Destinations that need attention' });
  await rowOf(needy, name).waitFor();
  assert.equal(await rowOf(needy, name).locator('.health-badge').textContent(), 'failing');
  await shot(portal, '23-portal-needs-attention');
  await visit(portal, `#/destinations/${encodeURIComponent(d.id)}`);
  const portalTable = portal.getByRole('table', { name: 'Deliveries of this destination' });
  await portalTable.getByText(error).waitFor();
  await portalTable.scrollIntoViewIfNeeded();
  await shot(portal, '24-portal-delivery-error');
  await portal.context().close();
  assertNoProblems();
});

test('a destination without a description shows its URL once', async () => {
  const url = `${receiverBase}/ok/undescribed`;
  const created = await api('POST', '/v1/destinations', { url, event_types: ['console.undescribed'] });
  assert.equal(created.status, 201, created.text);
  await visit(page, '#/destinations');
  const row = rowOf(page.getByRole('table', { name: 'Destinations', exact: true }), url);
  await row.waitFor();
  assert.equal((await row.textContent()).split(url).length - 1, 1, 'the URL is shown once');
  assertNoProblems();
});

test('a publisher key sees no admin pages but may send a test event', async (t) => {
  if (!PUBLISHER_KEY) {
    console.log('NOTICE: publisher role skipped: WEBHOOKD_PUBLISHER_KEY is not set');
    t.skip('no publisher key');
    return;
  }
  const pub = await newPage('publisher');
  await signIn(pub, PUBLISHER_KEY);
  assert.equal(await pub.locator('#session .role').textContent(), 'Publisher');
  await pub.getByRole('heading', { level: 1, name: 'Destinations' }).waitFor();
  assert.equal(await pub.getByRole('link', { name: 'Overview' }).count(), 0);
  assert.equal(await pub.getByRole('link', { name: 'Dead letters' }).count(), 0);
  await pub.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(state.okId)}`);
  await pub.locator('#send-test').waitFor();
  await pub.context().close();
  assertNoProblems();
});

test('reads well on a phone', async () => {
  const phone = await newPage('phone', PHONE);
  await signIn(phone, ADMIN_KEY);
  await phone.goto(`${BASE}/ui/#/destinations`);
  await phone.getByRole('link', { name: 'Order events for the warehouse' }).waitFor();
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  await shot(phone, '10-phone-destinations');
  await phone.goto(`${BASE}/ui/#/destinations/${encodeURIComponent(state.okId)}`);
  await phone.locator('.card').first().waitFor();
  await shot(phone, '11-phone-destination');
  const detailOverflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(detailOverflow <= 0, `the destination page is ${detailOverflow}px wider than the screen`);
  await phone.goto(`${BASE}/ui/#/catalog/types/${PAID}`);
  await phone.locator('#schema-fields').waitFor();
  await shot(phone, '17-phone-event-type');
  const typeOverflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(typeOverflow <= 0, `the event type page is ${typeOverflow}px wider than the screen`);
  await phone.context().close();
  assertNoProblems();
});

// ---- a destination's activity and its recovery ----

// How many pixels of a PNG are within 40 of `rgb` in each channel, counted by a blank
// page's canvas (no CSP there, and no decoder to carry in these tests).
async function pixelsNear(png, rgb) {
  const blank = await browser.newPage();
  try {
    return await blank.evaluate(async ([data, [r, g, b]]) => {
      const img = new Image();
      img.src = `data:image/png;base64,${data}`;
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.width;
      canvas.height = img.height;
      const c2d = canvas.getContext('2d');
      c2d.drawImage(img, 0, 0);
      const px = c2d.getImageData(0, 0, img.width, img.height).data;
      let n = 0;
      for (let i = 0; i < px.length; i += 4) {
        if (Math.abs(px[i] - r) < 40 && Math.abs(px[i + 1] - g) < 40 && Math.abs(px[i + 2] - b) < 40) n++;
      }
      return n;
    }, [png.toString('base64'), rgb]);
  } finally {
    await blank.close();
  }
}

const RETRYABLE_BAR = [0xe8, 0xa3, 0x3d];
const SUCCEEDED_BAR = [0x2f, 0x9e, 0x5a];
const P50_LINE = [0x3b, 0x5b, 0xdb];

// Dead letters of `d` (its receiver answers 500, three attempts 100 ms apart).
async function deadLetters(d, count, key = ADMIN_KEY) {
  await eventually(`${count} dead letters`, async () => {
    const r = await api('GET', `/v1/deliveries?destination_id=${encodeURIComponent(d.id)}&status=dead_lettered&limit=50`, undefined, key);
    return r.status === 200 && r.json.data.length >= count;
  });
}

// Draws the charts and recovers on `p`'s destination page, as whoever `p` is signed in as.
async function chartsAndRecovery(p, d, shotName) {
  await visit(p, `#/destinations/${encodeURIComponent(d.id)}`);
  // uPlot (bundled from npm, served by webhookd itself) draws each chart on a canvas.
  await p.locator('#outcome-chart .uchart canvas').waitFor();
  await p.locator('#latency-chart .uchart canvas').waitFor();
  assert.equal(await p.locator('#activity-card .chart-empty').count(), 0);
  const png = await eventually('the bars on the canvas', async () => {
    const shot = await p.locator('#outcome-chart .uchart').screenshot();
    return await pixelsNear(shot, RETRYABLE_BAR) > 20 ? shot : null;
  });
  assert.ok(await pixelsNear(png, SUCCEEDED_BAR) === 0, 'nothing succeeded, so no green bar');
  const lines = await p.locator('#latency-chart .uchart').screenshot();
  assert.ok(await pixelsNear(lines, P50_LINE) > 10, 'the latency line is drawn');
  await shot(p, `${shotName}-activity`);

  // Longer windows draw too; the month's buckets are days.
  await p.locator('#activity-card button[data-window="month"]').click();
  await p.locator('#activity-card button[data-window="month"][aria-pressed="true"]').waitFor();
  await eventually('the month\'s bars', async () =>
    await pixelsNear(await p.locator('#outcome-chart .uchart').screenshot(), RETRYABLE_BAR) > 20);

  // An until before since is the API's 422, shown as the page shows errors.
  await p.locator('#recover-until').fill('2000-01-01T00:00');
  await p.locator('#recover-submit').click();
  await p.locator('#recover-status .alert-error').waitFor();
  assert.match(await p.locator('#recover-status').textContent(), /Could not recover/);

  await p.locator('#recover-until').fill('');
  await p.locator('#recover-submit').click();
  await p.locator('#recovery-status', { hasText: 'done' }).waitFor({ timeout: 30000 });
  const replayed = Number(await p.locator('#recovery-replayed').textContent());
  assert.ok(replayed > 0, `replayed ${replayed}`);
  await shot(p, `${shotName}-recovered`);
}

test('a destination page charts its attempts and recovers its dead letters since an hour ago', async () => {
  const admin = await newPage('admin-insight');
  await signIn(admin, ADMIN_KEY);
  const d = await destinationWithEvents({ url: `${receiverBase}/down`, description: 'Down for recovery' }, 2);
  await deadLetters(d, 2);
  await chartsAndRecovery(admin, d, '30-destination');
  const quiet = await destinationWithEvents({ url: `${receiverBase}/ok`, description: 'Quiet' }, 0);
  await visit(admin, `#/destinations/${encodeURIComponent(quiet.id)}`);
  await admin.locator('#outcome-chart .uchart canvas').waitFor();
  await admin.locator('#activity-card .chart-empty').first().waitFor();
  const empty = await admin.locator('#outcome-chart .uchart').screenshot();
  assert.equal(await pixelsNear(empty, RETRYABLE_BAR), 0, 'no bars');
  assert.match(await admin.locator('#activity-card').textContent(), /No attempts in this window/);
  await admin.context().close();
  assertNoProblems();
});

test('a tenant portal shows its feed\'s waiting and leased messages', async (t) => {
  const tenant = `feed-${Date.now()}`;
  const link = await api('POST', `/v1/admin/tenants/${tenant}/portal-links`, { ttl: '1h' });
  if (link.status === 404 || link.status === 405) {
    t.skip('no portal-links route');
    return;
  }
  assert.equal(link.status, 201, link.text);
  const feed = await destinationWithEvents({ url: 'feed:', description: 'Batch job feed', tenant_id: tenant }, 3);
  const { key } = link.json;
  // The consumer leases one of the three.
  const read = await api('GET', `/v1/destinations/${encodeURIComponent(feed.id)}/messages?limit=1`, undefined, key);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.json.data.length, 1);
  const portal = await newPage('portal-feed');
  await portal.goto(`${BASE}/ui/${new URL(link.json.url).hash}`);
  await portal.locator('#link-continue').click();
  await portal.locator('#session .role').waitFor();
  await visit(portal, `#/destinations/${encodeURIComponent(feed.id)}`);
  await portal.locator('#feed-card #feed-waiting').waitFor();
  assert.equal(await portal.locator('#feed-waiting').textContent(), '2');
  assert.equal(await portal.locator('#feed-leased').textContent(), '1');
  await shot(portal, '32-portal-feed');
  // Another tenant's key finds no such feed.
  const otherLink = await api('POST', `/v1/admin/tenants/${tenant}-other/portal-links`, { ttl: '1h' });
  const other = await api('GET', `/v1/destinations/${encodeURIComponent(feed.id)}/messages/counts`, undefined, otherLink.json.key);
  assert.equal(other.status, 404, other.text);
  await portal.context().close();
  assertNoProblems();
});

test('a tenant portal charts and recovers its own destination, not another tenant\'s', async (t) => {
  const tenant = `insight-${Date.now()}`;
  const link = await api('POST', `/v1/admin/tenants/${tenant}/portal-links`, { ttl: '1h' });
  if (link.status === 404 || link.status === 405) {
    t.skip('no portal-links route');
    return;
  }
  assert.equal(link.status, 201, link.text);
  const mine = await destinationWithEvents({ url: `${receiverBase}/down`, description: 'Mine, down', tenant_id: tenant }, 2);
  const other = await destinationWithEvents({ url: `${receiverBase}/down`, description: 'Theirs', tenant_id: `${tenant}-other` }, 1);
  await deadLetters(mine, 2);
  const fragment = new URL(link.json.url).hash;
  const portal = await newPage('portal-insight');
  await portal.goto(`${BASE}/ui/${fragment}`);
  await portal.locator('#link-continue').click();
  await portal.locator('#session .role').waitFor();
  await chartsAndRecovery(portal, mine, '31-portal');

  await visit(portal, `#/destinations/${encodeURIComponent(other.id)}`);
  await portal.locator('main .alert-error').waitFor();
  assert.equal(await portal.locator('#activity-card').count(), 0);
  assert.equal(await portal.locator('#recover-card').count(), 0);
  const { key } = link.json;
  const stats = await api('GET', `/v1/destinations/${encodeURIComponent(other.id)}/stats?step=1m&since=${encodeURIComponent(new Date(Date.now() - 3600000).toISOString())}`, undefined, key);
  assert.equal(stats.status, 404, stats.text);
  const recover = await api('POST', `/v1/destinations/${encodeURIComponent(other.id)}/recover`, { since: new Date(Date.now() - 3600000).toISOString() }, key);
  assert.equal(recover.status, 404, recover.text);
  await portal.context().close();
  assertNoProblems();
});
