// The README's console section, after its walkthrough (run.sh ran it on this webhookd):
// "Open /ui/ and paste an API key: the overview, destinations with their health, events
// and their payloads, every delivery's attempt timeline, and the dead letters with
// replay. A customer gets the same pages for its own tenant alone through a portal link."
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from '../../console/tests/browser.mjs';

const BASE = process.env.WEBHOOKD_URL;
const KEY = process.env.WEBHOOKD_ADMIN_KEY;
const PORTAL_URL = process.env.PORTAL_URL;
const RECEIVER = process.env.RECEIVER;

let browser;
let page;

before(async () => {
  browser = await launchChromium();
  page = await (await browser.newContext()).newPage();
});
after(async () => {
  if (browser) await browser.close();
});

async function mainText(p) {
  return (await p.locator('main').textContent()) || '';
}

test('pasting the admin key opens the overview', async () => {
  await page.goto(`${BASE}/ui/`);
  await page.locator('#api-key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
});

test('the destinations the walkthrough made are listed with their health', async () => {
  await page.goto(`${BASE}/ui/#/destinations`);
  await page.getByRole('heading', { level: 1, name: 'Destinations' }).waitFor();
  await page.getByText(`${RECEIVER}/hook`, { exact: false }).first().waitFor();
  const text = await mainText(page);
  for (const path of ['/hook', '/big', '/acme', '/refunds']) {
    assert.ok(text.includes(`${RECEIVER}${path}`), `${path} is listed`);
  }
});

test('the published events are there, with their payload and their deliveries', async () => {
  await page.goto(`${BASE}/ui/#/events?type=order.created`);
  await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
  const first = page.locator('main a[href*="#/events/evt_"]').first();
  await first.waitFor();
  // Newest first: the tenant's order 125, then order 123.
  const links = page.locator('main a[href*="#/events/evt_"]');
  assert.equal(await links.count(), 2, 'two order.created events were accepted; the 422 stored none');
  await links.last().click();
  await page.getByText('"total": 9.99').waitFor();
  // It went to the order.* destination alone (the filtered one wants a total of 100).
  const rows = page.locator('main table[aria-label="Deliveries of this event"] tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 1);
  assert.match(await rows.first().textContent(), /succeeded/i);
});

test('the dead letters show the two refunds, replayed', async () => {
  await page.goto(`${BASE}/ui/#/dead-letters`);
  await page.getByRole('heading', { level: 1, name: 'Dead letters' }).waitFor();
  await page.locator('main table tbody tr').first().waitFor();
  assert.equal(await page.locator('main table tbody tr').count(), 2);
  const text = await mainText(page);
  assert.match(text, /permanent_failure|Permanent failure/i);
});

test('acme\'s portal link shows acme alone', async () => {
  const portal = await (await browser.newContext()).newPage();
  await portal.goto(`${BASE}/ui/${new URL(PORTAL_URL).hash}`);
  assert.equal(await portal.locator('#link-tenant').textContent(), 'acme');
  await portal.locator('#link-continue').click();
  await portal.locator('#session .role', { hasText: 'Tenant portal' }).waitFor();
  await portal.goto(`${BASE}/ui/#/destinations`);
  await portal.getByText(`${RECEIVER}/acme`).first().waitFor();
  const text = await mainText(portal);
  assert.ok(!text.includes(`${RECEIVER}/hook`), 'a destination of no tenant is not shown');
  await portal.context().close();
});
