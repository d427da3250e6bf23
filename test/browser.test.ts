import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { freePort } from './helpers/net.ts';
import { asRole, createAgent, createOrg } from './helpers/fixtures.ts';
import { balanceOf, createCall } from './helpers/calls.ts';

/**
 * End to end in Debian's headless Chromium (installed by .ci/run, which sets REQUIRE_BROWSER=1 so
 * a missing browser fails there): an <audio> element plays and seeks a signed recording link, and
 * an admin pays on the local checkout page.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = fs.existsSync(CHROMIUM);
if (!available && process.env.REQUIRE_BROWSER) throw new Error(`REQUIRE_BROWSER is set but there is no browser at ${CHROMIUM}`);

describe('in a browser (headless Chromium)', { skip: available ? false : `no browser at ${CHROMIUM} (apt-get install chromium)` }, () => {
  let app: FastifyInstance;
  let browser: Browser;
  let base: string;
  const partial: string[] = [];
  before(async () => {
    const { database, tmpDir } = await testEnv();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await buildTestApp(testConfig(tmpDir, { PUBLIC_BASE_URL: base }));
    app.server.on('request', (req, res) => res.once('finish', () => { if (res.statusCode === 206) partial.push(String(req.headers.range)); }));
    await app.listen({ host: '127.0.0.1', port });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
    });
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  test('an <audio> element loads the stream URL, knows the duration and seeks (served by Range requests)', async () => {
    const org = await createOrg();
    const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
    const put = await app.inject({ method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers: asRole(org, 'agent_manager', { 'content-type': 'audio/wav' }), payload: toneWav(6, 440) });
    assert.equal(put.statusCode, 200, put.body);
    const link = (await app.inject({ url: `/api/calls/${call.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data;
    assert.ok(link.url.startsWith(base));

    const page = await browser.newPage();
    await page.goto(`${base}/api/health`); // any page of another origin than about:blank
    // Runs in the page (a string: the test's TypeScript has no DOM types).
    const result = await page.evaluate(`(async (src) => {
      const audio = document.createElement('audio');
      audio.muted = true;
      audio.preload = 'auto';
      document.body.append(audio);
      const once = (name) => new Promise((resolve, reject) => {
        audio.addEventListener(name, resolve, { once: true });
        audio.addEventListener('error', () => reject(new Error('media error ' + (audio.error && audio.error.code))), { once: true });
      });
      audio.src = src;
      await once('loadedmetadata');
      const duration = audio.duration;
      audio.currentTime = 4.5;
      await once('seeked');
      await audio.play();
      await new Promise((r) => setTimeout(r, 300));
      return { duration, position: audio.currentTime, seekable: audio.seekable.length ? audio.seekable.end(0) : 0 };
    })(${JSON.stringify(link.url)})`) as { duration: number; position: number; seekable: number };
    await page.close();
    assert.ok(Math.abs(result.duration - 6) < 0.05, JSON.stringify(result));
    assert.ok(result.position >= 4.5 && result.position < 6, JSON.stringify(result));
    assert.ok(result.seekable > 5.9, 'the whole file is seekable');
    assert.ok(partial.length > 0, 'the browser fetched by Range and got 206');
  });

  test('an admin buys credits on the local checkout page: Pay once, the balance and the ledger change once', async () => {
    const org = await createOrg('Browser Buyers');
    const checkout = (await app.inject({ method: 'POST', url: '/api/billing/credits/purchase', headers: asRole(org, 'admin'), payload: { amount: 12 } })).json();
    const page = await browser.newPage();
    await page.goto(checkout.checkout_url);
    const summary = await page.textContent('body');
    assert.match(summary ?? '', /Browser Buyers/);
    assert.match(summary ?? '', /1,200/, '$12 at 100 credits per dollar');
    await page.click('button:has-text("Pay")');
    await page.waitForSelector('text=credits were added');
    await page.goBack();
    await page.reload();
    assert.match((await page.textContent('h1')) ?? '', /completed/, 'the page shows the session paid');
    await page.close();
    assert.equal(await balanceOf(org.orgId), 1200);
    const ledger = (await app.inject({ url: '/api/billing/transactions', headers: asRole(org, 'user') })).json().data;
    assert.equal(ledger.length, 1);
  });

  test('the API reference renders offline under the strict CSP: Scalar, served by this server', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const violations: string[] = [];
    // Anything not from this server is refused, as it would be with the machine offline.
    await page.route('**/*', (route) => (route.request().url().startsWith(base) ? route.continue() : (elsewhere.push(route.request().url()), route.abort())));
    page.on('console', (message) => { if (/Content Security Policy|Refused to/.test(message.text())) violations.push(message.text()); });
    await page.goto(`${base}/api/docs`);
    await page.waitForSelector('text=Liveness', { timeout: 30_000 });
    await page.click('text=Agents');
    await page.waitForSelector('text=Create an agent', { timeout: 10_000 });
    await page.waitForSelector('text=Front desk', { timeout: 10_000 }); // the request example, from the document
    await page.close();
    assert.deepEqual(violations, []);
    // Scalar may try an optional resource of its own site; the reference works without it.
    assert.ok(elsewhere.every((url) => !url.includes('/api/')), elsewhere.join(', '));
  });
});
