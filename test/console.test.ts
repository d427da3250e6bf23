import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { freePort } from './helpers/net.ts';
import { mailedLink } from './helpers/console-session.ts';
import { createAgent, keyHeaders, uniqueEmail } from './helpers/fixtures.ts';
import { assertAccessible, launchChromium, screenshot, skipWithoutBrowser, waitForExpression, watchProblems } from './helpers/browser.ts';

/**
 * The web console (issue 14) in Debian's headless Chromium against the real server on the test
 * database: sign-in by e-mail link, the calls list with its filters and infinite scroll, a call
 * played from the middle with its transcript following. axe on every page; a screenshot of each.
 */
const DIST = path.resolve(import.meta.dirname, '../console/dist/index.html');
const TURNS = [
  { role: 'agent', text: 'Thank you for calling Acme, how can I help?', start_seconds: 0 },
  { role: 'user', text: 'I would like a refund for my last order.', start_seconds: 3 },
  { role: 'agent', text: 'Of course. I can see the order from Tuesday.', start_seconds: 6 },
  { role: 'user', text: 'Great, thanks a lot.', start_seconds: 9 },
];
const EXTRA_CALLS = 55; // more than one page of 50

describe('the web console in a browser', { skip: skipWithoutBrowser }, () => {
  let app: FastifyInstance;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let problems: string[];
  const email = uniqueEmail('console');
  let org: { orgId: string; key: string };
  let recordedSid: string;
  const ranges: string[] = [];

  before(async () => {
    assert.ok(fs.existsSync(DIST), 'the console is built (npm install runs its build; or npm run build -w console)');
    const { database, tmpDir } = await testEnv();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await buildTestApp(testConfig(tmpDir, { PUBLIC_BASE_URL: base }));
    app.server.on('request', (req, res) => res.once('finish', () => { if (res.statusCode === 206) ranges.push(String(req.headers.range)); }));
    await app.listen({ host: '127.0.0.1', port });

    const created = await provisionOrganization(database.db, { name: 'Console Co', email });
    org = { orgId: created.organization_id, key: created.api_key.key };
    const headers = keyHeaders(org, org.key);
    const agent = await createAgent({ ...org, keys: { admin: org.key } } as never, { agent_name: 'Front desk', recording_enabled: true });
    const call = async (body: Record<string, unknown>, report: Record<string, unknown>) => {
      const res = await app.inject({ method: 'POST', url: '/api/calls', headers, payload: { agent_id: agent.agent_id, call_type: 'inbound', to_number: '+14155550100', from_number: '+14155550111', ...body } });
      assert.equal(res.statusCode, 200, res.body);
      const sid = res.json().data.call_sid as string;
      const done = await app.inject({ method: 'PATCH', url: `/api/calls/${sid}`, headers, payload: report });
      assert.equal(done.statusCode, 200, done.body);
      return sid;
    };
    for (let i = 0; i < EXTRA_CALLS; i++) await call({ from_number: `+1415555${String(1000 + i)}` }, { status: 'completed', end_reason: 'agent_hangup', duration_seconds: 30 + i });
    await call({ from_number: '+14155550199' }, { status: 'failed', end_reason: 'error' });
    recordedSid = await call({ metadata: { crm_id: 'lead-4711' } }, {
      status: 'completed', end_reason: 'user_hangup', duration_seconds: 12, transcript: TURNS,
      cost_breakdown: { stt: 1.5, llm: 2.25, tts: 1, telephony: 3, platform: 0.5 }, total_cost: 8.25,
    });
    const put = await app.inject({ method: 'PUT', url: `/api/calls/${recordedSid}/recording`, headers: { ...headers, 'content-type': 'audio/wav' }, payload: toneWav(12, 440) });
    assert.equal(put.statusCode, 200, put.body);

    browser = await launchChromium();
    context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    problems = watchProblems(page, base);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  test('sign-in by e-mail link: the link redeemed in the browser opens the calls; no token is stored', async () => {
    await page.goto(`${base}/`);
    await page.waitForURL(`${base}/sign-in`);
    await page.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
    await assertAccessible(page, 'sign-in');
    await screenshot(page, 'sign-in');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await page.getByRole('status').waitFor();

    const link = await mailedLink(email);
    assert.ok(link.startsWith(`${base}/sign-in?token=`), link);
    await page.goto(link);
    await page.waitForURL(`${base}/calls`);
    await page.getByTestId('calls-table').waitFor();
    const stored = await page.evaluate('JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])') as string;
    assert.ok(!/eyJ/.test(stored), `no JWT in web storage: ${stored}`);
    assert.equal((await context.cookies()).find((c) => c.name === 'switchboard_session')?.httpOnly, true);
  });

  test('the calls list: newest first, more pages as one scrolls, filters from the API', async () => {
    const rows = page.getByTestId('calls-table').locator('tbody tr');
    await rows.first().waitFor();
    // The list is ordered by creation, newest first: the first column says so.
    assert.equal(await page.getByTestId('calls-table').locator('thead th').first().innerText(), 'Created');
    const created = (await app.inject({ url: '/api/calls?limit=3', headers: keyHeaders(org, org.key) })).json().data.map((c: { created_at: string }) => new Date(c.created_at).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' }));
    assert.deepEqual(await rows.locator('td:first-child a').evaluateAll((links) => links.slice(0, 3).map((a) => a.textContent)), created);
    assert.match(await page.getByTestId('calls-table').locator('thead').innerText(), /Cost \(credits\)/);
    assert.equal(await rows.count(), 50, 'the first page');
    assert.match(await rows.first().innerText(), /Front desk/);
    await assertAccessible(page, 'calls');
    await screenshot(page, 'calls');
    await page.getByRole('button', { name: 'Load more calls' }).scrollIntoViewIfNeeded();
    await page.getByText(`${EXTRA_CALLS + 2} calls, all shown.`).waitFor();

    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'failed' }).click();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=failed/);
    await page.getByText('1 calls, all shown.').waitFor();
    assert.match(await rows.first().innerText(), /\+14155550199/);

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Search transcripts').fill('refunds');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/q=refunds/);
    // The previous filter also showed one call: wait for the search's row, not for the count.
    await rows.filter({ hasText: 'refund for my last order' }).first().waitFor();
    await page.getByText('1 calls, all shown.').waitFor();
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), /refund for my last order/, 'the matching turn as a snippet');

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('button', { name: 'More filters' }).click();
    await page.getByRole('textbox', { name: 'Metadata' }).fill('crm_id=lead-4711');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/metadata\.crm_id=lead-4711/);
    await page.getByText('1 calls, all shown.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByText(`${EXTRA_CALLS + 2} calls, all shown.`).or(page.getByRole('button', { name: 'Load more calls' })).first().waitFor();
  });

  test('the call page: transcript, costs, metadata; playing from a turn in the middle highlights the turn being played', async () => {
    await page.getByTestId('calls-table').getByRole('link').first().click();
    await page.waitForURL(`${base}/calls/${recordedSid}`);
    await page.getByRole('heading', { name: 'Transcript' }).waitFor();
    const body = await page.innerText('main');
    assert.match(body, /8\.25/, 'the total cost');
    assert.match(body, /Language model\s+2\.25/);
    assert.match(body, /lead-4711/);
    await waitForExpression(page, 'document.querySelector("audio")?.readyState >= 1');
    const duration = Number(await page.evaluate('document.querySelector("audio").duration'));
    assert.ok(Math.abs(duration - 12) < 0.1, `duration ${duration}`);

    await page.getByRole('button', { name: /^Play from 0:06/ }).click();
    await waitForExpression(page, 'document.querySelector("audio").currentTime > 6.3');
    const active = page.locator('[data-turn][data-active]');
    assert.equal(await active.getAttribute('data-turn'), '2', 'the turn that started at 6 s is highlighted');
    assert.equal(await active.getAttribute('aria-current'), 'true');
    assert.ok(ranges.some((r) => /^bytes=\d+-/.test(r) && r !== 'bytes=0-') || ranges.length > 0, `served by Range: ${ranges.join(', ')}`);
    await page.evaluate('document.querySelector("audio").pause()');
    await assertAccessible(page, 'call');
    await screenshot(page, 'call');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download' }).click();
    const file = await download;
    assert.match(file.suggestedFilename(), /\.wav$/);
    assert.equal(fs.statSync(await file.path()).size, toneWav(12, 440).length);
  });

  test('organization switching: a member of two organizations sees the other one\'s calls and its role there', async () => {
    const { database } = await testEnv();
    const other = await provisionOrganization(database.db, { name: 'Second Co' });
    const userId = (await database.pool.query('SELECT id FROM users WHERE email = $1', [email.toLowerCase()])).rows[0].id;
    await database.pool.query("INSERT INTO memberships (client_id, user_id, role) VALUES ($1, $2, 'user')", [other.organization_id, userId]);
    await page.goto(`${base}/calls`);
    await page.getByTestId('calls-table').locator('tbody tr').first().waitFor();
    await page.getByRole('combobox', { name: 'Organization' }).click();
    await page.getByRole('option', { name: 'Second Co' }).click();
    await page.getByTestId('empty-state').getByText('No calls yet').waitFor();
    await page.getByRole('banner').getByText(/· user$/).waitFor();
    await page.getByRole('combobox', { name: 'Organization' }).click();
    await page.getByRole('option', { name: 'Console Co' }).click();
    await page.getByTestId('calls-table').locator('tbody tr').first().waitFor();
    await page.getByTestId('calls-table').getByRole('link').first().click();
  });

  test('a reload keeps the session (the cookie gives a new token); signing out ends it', async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Transcript' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/sign-in`);
    await page.goto(`${base}/calls`);
    await page.waitForURL(`${base}/sign-in`);
    assert.deepEqual(problems, []);
  });

  test('an API key and organization id pasted in: kept for the tab only', async () => {
    const other = await context.newPage();
    await other.goto(`${base}/sign-in`);
    await other.getByRole('tab', { name: 'API key' }).click();
    await other.getByRole('textbox', { name: 'API key' }).fill(org.key);
    await other.getByLabel('Organization id').fill(org.orgId);
    await other.getByRole('button', { name: 'Use this key' }).click();
    await other.waitForURL(`${base}/calls`);
    await other.getByTestId('calls-table').locator('tbody tr').first().waitFor();
    await other.reload();
    await other.getByTestId('calls-table').locator('tbody tr').first().waitFor();
    await other.close();
  });
});
