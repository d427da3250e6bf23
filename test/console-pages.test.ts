import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { issueApiKey } from '../src/modules/api-keys/service.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { freePort } from './helpers/net.ts';
import { mailedLink } from './helpers/console-session.ts';
import { createAgent, keyHeaders, uniqueEmail } from './helpers/fixtures.ts';
import { assertAccessible, launchChromium, screenshot, skipWithoutBrowser, watchProblems } from './helpers/browser.ts';

/**
 * The console's pages past the calls (issue 14), each through its main flow in headless Chromium
 * against the real server: analytics agreeing with the API, API keys (shown once, revoked), buying
 * credits through the local checkout and back; a `user` sees no action its role lacks. axe on each.
 */
describe('the console pages in a browser', { skip: skipWithoutBrowser }, () => {
  let app: FastifyInstance;
  let browser: Browser;
  let page: Page;
  let base: string;
  let problems: string[];
  let org: { orgId: string; key: string; userId: string };
  const email = uniqueEmail('pages');
  const agents: Array<{ agent_id: string }> = [];
  // Calls ended now (analytics counts ended calls by their day): [agent index, seconds, credits].
  const CALLS: Array<[number, number, number]> = [[0, 60, 2.5], [0, 90, 3], [1, 30, 1.25], [1, 150, 4]];

  before(async () => {
    const { database, tmpDir } = await testEnv();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await buildTestApp(testConfig(tmpDir, { PUBLIC_BASE_URL: base }));
    await app.listen({ host: '127.0.0.1', port });
    const created = await provisionOrganization(database.db, { name: 'Pages Co', email });
    org = { orgId: created.organization_id, key: created.api_key.key, userId: created.user_id };
    const headers = keyHeaders(org, org.key);
    for (const name of ['Sales line', 'Support line']) agents.push(await createAgent({ ...org, keys: { admin: org.key } } as never, { agent_name: name }));
    for (const [agent, seconds, credits] of CALLS) {
      const res = await app.inject({ method: 'POST', url: '/api/calls', headers, payload: { agent_id: agents[agent]!.agent_id, call_type: 'inbound', to_number: '+14155550100' } });
      const sid = res.json().data.call_sid;
      const done = await app.inject({ method: 'PATCH', url: `/api/calls/${sid}`, headers, payload: { status: 'completed', duration_seconds: seconds, total_cost: credits } });
      assert.equal(done.statusCode, 200, done.body);
    }
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    problems = watchProblems(page, base);
    const link = await app.inject({ method: 'POST', url: '/api/auth/sign-in-links', payload: { email }, remoteAddress: '203.0.113.201' });
    assert.equal(link.statusCode, 200);
    await page.goto(await mailedLink(email));
    await page.waitForURL(`${base}/calls`);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  test('analytics: the totals and the table are the API\'s numbers, per day, per minute and per agent', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const weekAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
    await page.goto(`${base}/analytics?tz=UTC&start=${weekAgo}&end=${today}`);
    await page.getByTestId('analytics-table').waitFor();
    const api = (await app.inject({ url: `/api/analytics/calls/daily?start_date=${weekAgo}&end_date=${today}&timezone=UTC`, headers: keyHeaders(org, org.key) })).json().data;
    const sum = (key: string) => api.daily.reduce((t: number, p: Record<string, number>) => t + p[key]!, 0);
    assert.equal(sum('calls'), CALLS.length, 'the API counts the calls ended today');
    assert.equal(await page.getByTestId('total-calls').innerText(), String(CALLS.length));
    assert.equal(await page.getByTestId('total-minutes').innerText(), String(Math.round((sum('total_duration_seconds') / 60) * 10) / 10));
    assert.equal(Number(await page.getByTestId('total-cost').innerText()), sum('cost_credits'));
    assert.equal(await page.getByTestId('analytics-table').locator('tbody tr').count(), 7, 'a row per day of the range');
    await assertAccessible(page, 'analytics');
    await screenshot(page, 'analytics');

    await page.getByRole('combobox', { name: 'Agent' }).click();
    await page.getByRole('option', { name: 'Support line' }).click();
    await page.waitForURL(/agent=/);
    const support = CALLS.filter(([a]) => a === 1);
    await page.getByTestId('total-calls').filter({ hasText: String(support.length) }).waitFor();
    assert.equal(Number(await page.getByTestId('total-cost').innerText()), support.reduce((t, [, , c]) => t + c, 0));

    await page.getByText('Per minute (one day)').click();
    await page.waitForURL(/day=/);
    await page.getByRole('columnheader', { name: 'Minute', exact: true }).waitFor();
    const minuteCalls = await page.getByTestId('analytics-table').locator('tbody tr td:nth-child(2)').allInnerTexts();
    assert.equal(minuteCalls.reduce((t, v) => t + Number(v), 0), support.length, 'the day\'s minutes hold the agent\'s calls');
  });

  test('API keys: created and shown once, working, then revoked after a confirmation', async () => {
    await page.goto(`${base}/api-keys`);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('textbox', { name: 'Name' }).fill('Browser key');
    await page.getByRole('dialog').getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByTestId('new-key').innerText();
    assert.match(key, /^sk_[A-Za-z0-9]{40}$/);
    await page.getByRole('button', { name: 'Copy key' }).waitFor();
    await assertAccessible(page, 'api-key-created');
    assert.equal((await app.inject({ url: '/api/agents', headers: keyHeaders(org, key) })).statusCode, 200, 'the key works');
    await page.keyboard.press('Escape');
    const row = page.getByTestId('api-keys').locator('tr', { hasText: 'Browser key' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();
    await page.getByRole('dialog').waitFor({ state: 'hidden' }); // its closing transition would fool the contrast check
    assert.equal((await app.inject({ url: '/api/agents', headers: keyHeaders(org, key) })).statusCode, 401, 'refused from the next request');
    await assertAccessible(page, 'api-keys');
    await screenshot(page, 'api-keys');
  });

  test('billing: buying credits through the checkout comes back to the new balance and its ledger row', async () => {
    await page.goto(`${base}/billing`);
    await page.getByTestId('balance').filter({ hasText: '0 credits' }).waitFor();
    await assertAccessible(page, 'billing');
    await page.getByRole('textbox', { name: 'Amount (dollars)' }).fill('12');
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await page.waitForURL(/\/api\/billing\/checkout\//);
    await page.getByRole('button', { name: /Pay/ }).click();
    await page.getByText('credits were added').waitFor();
    await page.getByRole('link', { name: 'Continue' }).click();
    await page.waitForURL(`${base}/billing`);
    await page.getByTestId('balance').filter({ hasText: '1,200 credits' }).waitFor();
    // The ledger is a query of its own: its rows may come after the balance.
    await page.getByTestId('ledger').getByRole('row').filter({ hasText: 'purchase' }).waitFor();
    assert.match(await page.getByTestId('ledger').innerText(), /purchase[\s\S]*\+1,200/);
    await screenshot(page, 'billing');
    assert.deepEqual(problems, []);
  });

  test('a user-role key sees no action its role lacks', async () => {
    const { database } = await testEnv();
    const userKey = (await issueApiKey(database.db, org.orgId, { userId: org.userId, name: 'viewer', role: 'user' })).key;
    const other = await browser.newPage();
    await other.goto(`${base}/sign-in`);
    await other.getByRole('tab', { name: 'API key' }).click();
    await other.getByRole('textbox', { name: 'API key' }).fill(userKey);
    await other.getByLabel('Organization id').fill(org.orgId);
    await other.getByRole('button', { name: 'Use this key' }).click();
    await other.waitForURL(`${base}/calls`);
    await other.goto(`${base}/api-keys`);
    await other.getByTestId('api-keys').locator('tbody tr').first().waitFor();
    assert.equal(await other.getByRole('button', { name: 'Create key' }).count(), 0);
    assert.equal(await other.getByRole('button', { name: 'Revoke' }).count(), 0);
    await other.goto(`${base}/billing`);
    await other.getByTestId('balance').filter({ hasText: 'credits' }).waitFor();
    assert.equal(await other.getByRole('button', { name: 'Buy credits' }).count(), 0);
    await other.close();
  });
});
