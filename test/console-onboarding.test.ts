import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { assertAccessible, screenshot, skipWithoutBrowser } from './helpers/browser.ts';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { mailedLink, mailsTo, signedInConsole, type ConsoleSession } from './helpers/console-session.ts';
import { grantCredits } from './helpers/calls.ts';
import { uniquePhoneNumber } from './helpers/fixtures.ts';

/**
 * A new organization in the console (issue 31): the first-run checklist following the
 * organization's real state as each step is done through the API, validation errors said in words
 * next to their fields, and sign-out and the organization switcher on a 390 px wide phone.
 */
describe('the console for a new organization', { skip: skipWithoutBrowser }, () => {
  let s: ConsoleSession;
  let carrier: CarrierStandIn;
  before(async () => {
    carrier = await startCarrierStandIn();
    s = await signedInConsole('Fresh Co', { CARRIER_A_API_URL: carrier.url, CARRIER_A_TIMEOUT_MS: '2000' });
  });
  after(async () => {
    await s?.close();
    await carrier?.close();
  });

  const stepState = (page: Page, key: string) => page.getByTestId(`step-${key}`).getAttribute('data-state');
  async function waitForStep(page: Page, key: string, state: string): Promise<void> {
    await page.locator(`[data-testid="step-${key}"][data-state="${state}"]`).waitFor({ timeout: 15_000 });
  }

  /** A step's state once its own query has answered (each step loads on its own after a reload). */
  async function settledStep(page: Page, key: string): Promise<string | null> {
    await page.locator(`[data-testid="step-${key}"]:not([data-state="loading"])`).waitFor({ timeout: 15_000 });
    return stepState(page, key);
  }

  test('every list shows what it is for and the next action while it is empty', async () => {
    const { page, base } = s;
    const lists: Array<[string, RegExp, string | null]> = [
      ['/calls', /No calls yet/, null],
      ['/agents', /No agent yet/, 'Create your first agent'],
      ['/knowledge-base', /No documents yet/, null],
      ['/tools', /No tools yet/, 'Create your first tool'],
      ['/phone-numbers', /No phone numbers yet/, 'Import your first number'],
      ['/integrations', /No integrations yet/, null],
      ['/campaigns', /No campaigns yet/, 'Create your first campaign'],
      ['/webhooks', /No webhook endpoints yet/, 'Add your first endpoint'],
      ['/team', /Only you so far/, null],
    ];
    for (const [path, title, action] of lists) {
      await page.goto(`${base}${path}`);
      const empty = page.getByTestId('empty-state');
      await empty.waitFor();
      assert.match(await empty.innerText(), title, path);
      if (action) await empty.getByRole(/\/agents/.test(path) ? 'link' : 'button', { name: action }).waitFor();
      await assertAccessible(page, `empty ${path}`);
      await screenshot(page, `empty-${path.slice(1)}`);
    }
    // A new organization's bootstrap key is its one API key; revoked, the list is empty.
    const keys = (await s.app.inject({ url: '/api/api-keys', headers: s.headers })).json().data;
    assert.equal(keys.length, 1);
  });

  test('the checklist follows the organization as each step is done through the API', async () => {
    const { page, base, app, headers, org } = s;
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Get started' }).waitFor();
    for (const key of ['credits', 'integration', 'agent', 'talk', 'number', 'call']) await waitForStep(page, key, 'todo');
    assert.equal(await page.getByTestId('onboarding-progress').innerText(), '0 of 6 done');
    assert.equal(await page.getByTestId('step-credits').getByRole('link').getAttribute('href'), '/billing');
    await assertAccessible(page, 'onboarding');
    await screenshot(page, 'onboarding-new');

    // Followed live, without a reload.
    await grantCredits(org.orgId, 500);
    await waitForStep(page, 'credits', 'done');
    assert.equal(await page.getByTestId('onboarding-progress').innerText(), '1 of 6 done');

    const integration = await app.inject({ method: 'POST', url: '/api/integrations', headers,
      payload: { name: 'Main carrier', provider: 'carrier_a', credentials: { account_sid: carrier.account.sid, auth_token: carrier.account.token } } });
    assert.equal(integration.statusCode, 200, integration.body);
    await page.reload();
    await waitForStep(page, 'integration', 'done');
    assert.equal(await settledStep(page, 'agent'), 'todo');
    assert.equal(await page.getByTestId('step-talk').getByRole('link').getAttribute('href'), '/agents/new', 'no agent to talk to yet');

    const agent = (await app.inject({ method: 'POST', url: '/api/agents', headers, payload: { agent_name: 'Front desk' } })).json().data;
    await page.reload();
    await waitForStep(page, 'agent', 'done');
    assert.equal(await page.getByTestId('step-talk').getByRole('link').getAttribute('href'), `/agents/${agent.agent_id}`, 'talking is done on the agent page');

    const call = async (callType: string) => {
      const res = await app.inject({ method: 'POST', url: '/api/calls', headers, payload: { agent_id: agent.agent_id, call_type: callType, to_number: '+14155550100' } });
      assert.equal(res.statusCode, 200, res.body);
    };
    await call('preview');
    await page.reload();
    await waitForStep(page, 'talk', 'done');
    assert.equal(await settledStep(page, 'call'), 'todo', 'a talk in the browser is not a phone call');

    const number = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers, payload: {
      phone_number: uniquePhoneNumber(), provider: 'sip', supports_inbound: true, sip_trunk_name: 'main', sip_username: 'u', sip_password: 'trunk-password-1', inbound_room_name: 'r-',
    } });
    assert.ok(number.statusCode === 200 || number.statusCode === 201, number.body);
    await page.reload();
    await waitForStep(page, 'number', 'done');

    await call('inbound');
    await page.reload();
    await waitForStep(page, 'call', 'done');
    await page.getByText('You are set up.').waitFor();
    assert.equal(await page.getByTestId('onboarding-progress').innerText(), '6 of 6 done');
    await assertAccessible(page, 'onboarding-done');
    await screenshot(page, 'onboarding-done');
  });

  test('validation errors in words next to their fields: a language code, a purchase below the minimum, a private address', async () => {
    const { page, base } = s;
    await page.goto(`${base}/agents/new`);
    await page.getByRole('textbox', { name: 'Name' }).fill('Wrong language');
    const language = page.getByRole('textbox', { name: 'Language' });
    await language.fill('English');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await language.getAttribute('aria-invalid'), 'true');
    const described = (await language.getAttribute('aria-describedby'))!.split(' ');
    const texts = await Promise.all(described.map((id) => page.locator(`[id="${id}"]`).innerText().catch(() => '')));
    assert.ok(texts.includes('Use a language code like EN or EN-US'), `next to the field: ${texts.join(' | ')}`);
    const main = await page.innerText('main');
    assert.ok(!/must match|pattern|\^\[/.test(main), `no validator wording on the page: ${main}`);
    await assertAccessible(page, 'agent-error');
    await screenshot(page, 'agent-error');

    await page.goto(`${base}/billing`);
    const amount = page.getByRole('textbox', { name: 'Amount (dollars)' });
    await amount.fill('3');
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await page.getByText('The minimum purchase is $5').waitFor();
    assert.equal(await amount.inputValue(), '3', 'the amount is not changed behind the buyer\'s back');
    assert.equal(await amount.getAttribute('aria-invalid'), 'true');
    assert.ok(page.url().endsWith('/billing'), 'no checkout for a refused amount');
    await assertAccessible(page, 'billing-error');

    await page.goto(`${base}/webhooks`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const url = page.getByRole('textbox', { name: 'URL' });
    await url.fill('https://127.0.0.1/hook');
    await page.getByRole('dialog').getByRole('button', { name: /Add/ }).last().click();
    await page.getByRole('dialog').getByText(/ALLOWED_NETWORKS/).first().waitFor();
    assert.equal(await url.getAttribute('aria-invalid'), 'true');
    await assertAccessible(page, 'webhook-refused');
    await screenshot(page, 'webhook-refused');
    await page.keyboard.press('Escape');
  });

  test('an integration is validated as soon as it is saved, the provider\'s answer shown', async () => {
    const { page, base } = s;
    await page.goto(`${base}/integrations`);
    await page.getByRole('textbox', { name: 'Name' }).fill('Wrong token');
    await page.getByRole('textbox', { name: 'carrier_a account SID' }).fill(carrier.account.sid);
    await page.getByRole('textbox', { name: 'Auth token' }).fill('not-the-token');
    await page.getByRole('button', { name: 'Add integration' }).click();
    const result = page.getByTestId('validation-result');
    await result.filter({ hasText: /Wrong token/ }).waitFor();
    assert.match(await result.innerText(), /refused the credentials/);
    await page.getByTestId('integrations').locator('tr', { hasText: 'Wrong token' }).getByText('invalid').waitFor();
    await assertAccessible(page, 'integration-refused');
  });

  test('on a 390 px wide phone the menu holds the organization switcher and sign-out', async () => {
    const { app, base, browser, email } = s;
    const phone = await (await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })).newPage();
    const sentBefore = await mailsTo(email);
    await app.inject({ method: 'POST', url: '/api/auth/sign-in-links', payload: { email }, remoteAddress: '203.0.113.77' });
    await phone.goto(await mailedLink(email, sentBefore)); // this mail's link, not the session's first
    await phone.waitForURL(`${base}/calls`);
    assert.equal(await phone.getByRole('banner').getByRole('button', { name: 'Sign out' }).count(), 0, 'no room in the header: hidden there');
    const closed = await phone.getByTestId('drawer-account').getByRole('button', { name: 'Sign out' }).boundingBox();
    assert.ok(!closed || closed.x + closed.width <= 0, `the drawer is closed: ${JSON.stringify(closed)}`);
    const overflow = await phone.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth') as number;
    assert.ok(overflow <= 0, `nothing wider than the screen (${overflow} px over)`);
    await phone.getByRole('button', { name: 'Open the menu' }).click();
    await phone.getByRole('combobox', { name: 'Organization' }).waitFor();
    const signOut = phone.getByRole('button', { name: 'Sign out' });
    await signOut.waitFor();
    // The drawer slides in: read its place once it has arrived and stopped moving, at most 10 s. A
    // loaded machine can hold a frame for longer than one reading's interval, so one equal pair of
    // readings is not yet the end of the slide; on screen and unmoved is.
    const onScreen = (b: { x: number; width: number }) => b.x >= 0 && b.x + b.width <= 390;
    let box = (await signOut.boundingBox())!;
    for (let waited = 0; waited < 10_000; waited += 100) {
      await phone.waitForTimeout(100);
      const next = (await signOut.boundingBox())!;
      const still = next.x === box.x && next.y === box.y;
      box = next;
      if (still && onScreen(box)) break;
    }
    assert.ok(onScreen(box), `on screen: ${JSON.stringify(box)}`);
    await assertAccessible(phone, 'mobile-menu');
    await screenshot(phone, 'mobile-menu');
    await signOut.click();
    await phone.waitForURL(`${base}/sign-in`);
    await phone.close();
  });
});
