import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAccessible, screenshot, skipWithoutBrowser } from './helpers/browser.ts';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { signedInConsole, type ConsoleSession } from './helpers/console-session.ts';
import { createAgent, uniqueEmail, uniquePhoneNumber } from './helpers/fixtures.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

/**
 * The console's Phone numbers, Integrations, Tools and Team pages in headless Chromium against the
 * real server, with the carrier and a tool's webhook as stand-ins on loopback: a number imported and
 * assigned, an integration validated, a tool tested (status, latency, body), an invitation sent and
 * cancelled, the last admin's demotion refused with the API's detail. axe on every page.
 */
describe('the console: numbers, integrations, tools and team', { skip: skipWithoutBrowser }, () => {
  let s: ConsoleSession;
  let carrier: CarrierStandIn;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    carrier = await startCarrierStandIn();
    receiver = await startReceiver({ host: '127.0.0.2', answer: () => ({ status: 200, body: '{"slots":["10:00","11:30"]}', headers: { 'content-type': 'application/json' } }) });
    s = await signedInConsole('Telephony Co', { CARRIER_A_API_URL: carrier.url, CARRIER_A_TIMEOUT_MS: '2000' });
  });
  after(async () => {
    await s?.close();
    await carrier?.close();
    await receiver?.close();
  });

  test('integrations: added with credentials and validated with the provider as soon as saved, the result shown', async () => {
    const { page, base } = s;
    await page.goto(`${base}/integrations`);
    await page.getByRole('textbox', { name: 'Name' }).fill('Main carrier');
    await page.getByRole('textbox', { name: 'carrier_a account SID' }).fill(carrier.account.sid);
    await page.getByRole('textbox', { name: 'Auth token' }).fill(carrier.account.token);
    await page.getByRole('button', { name: 'Add integration' }).click();
    const row = page.getByTestId('integrations').locator('tr', { hasText: 'Main carrier' });
    await page.getByTestId('validation-result').filter({ hasText: /active/ }).waitFor();
    await row.getByText('active').waitFor();
    await assertAccessible(page, 'integrations');
    await screenshot(page, 'integrations');
  });

  test('phone numbers: a SIP number imported, then assigned to an agent', async () => {
    const { page, base, app, headers, org } = s;
    const agent = await createAgent({ ...org, keys: { admin: org.key } } as never, { agent_name: 'Night line' });
    const number = uniquePhoneNumber();
    await page.goto(`${base}/phone-numbers`);
    await page.getByRole('button', { name: 'Import a number' }).click();
    await page.getByRole('textbox', { name: 'Number (E.164)' }).fill(number);
    await page.getByRole('textbox', { name: 'Trunk name' }).fill('main');
    await page.getByRole('textbox', { name: 'Inbound room prefix' }).fill('night-');
    await page.getByRole('textbox', { name: 'Username' }).fill('trunk-user');
    await page.getByRole('textbox', { name: 'Password' }).fill('trunk-password-1');
    await assertAccessible(page, 'phone-number-import');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await page.getByRole('combobox', { name: `Agent answering ${number}` }).click();
    await page.getByRole('option', { name: 'Night line' }).click();
    for (let i = 0; i < 50; i++) {
      const listed = (await app.inject({ url: '/api/phone-numbers', headers })).json().data.find((n: { phone_number: string }) => n.phone_number === number);
      if (listed?.agent_id === agent.agent_id) break;
      assert.ok(i < 49, 'the number was assigned');
      await new Promise((r) => setTimeout(r, 100));
    }
    await assertAccessible(page, 'phone-numbers');
    await screenshot(page, 'phone-numbers');
  });

  test('tools: created, then tested: status, latency and the body are shown', async () => {
    const { page, base } = s;
    await page.goto(`${base}/tools`);
    await page.getByRole('button', { name: 'New tool' }).click();
    await page.getByRole('textbox', { name: 'Name' }).fill('check_slots');
    await page.getByRole('textbox', { name: 'Description' }).fill('Free appointment slots');
    await page.getByRole('textbox', { name: 'Webhook URL' }).fill(`${receiver.url}/slots`);
    await page.getByRole('button', { name: 'Add parameter' }).click();
    await page.getByRole('textbox', { name: 'Parameter 1 name' }).fill('date');
    await page.getByRole('textbox', { name: 'Parameter 1 description' }).fill('The day, YYYY-MM-DD');
    await page.getByRole('checkbox', { name: 'Required' }).check();
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByRole('textbox', { name: 'Header 1 name' }).fill('X-Clinic');
    await page.getByRole('textbox', { name: 'Header 1 value' }).fill('north');
    await assertAccessible(page, 'tool form');
    await page.getByRole('button', { name: 'Create tool' }).click();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    // What the API keeps is what the form said (its parameters and headers replace the tool's whole lists).
    const listed = await s.app.inject({ url: '/api/tools', headers: s.headers });
    const saved = listed.json().data.find((t: { tool_name: string }) => t.tool_name === 'check_slots');
    assert.deepEqual(saved.parameters, [{ name: 'date', type: 'string', description: 'The day, YYYY-MM-DD', required: true }]);
    assert.deepEqual(saved.headers, { 'X-Clinic': 'north' });
    await page.getByTestId('tools').locator('tr', { hasText: 'check_slots' }).getByRole('button', { name: 'Test' }).click();
    const result = page.getByTestId('tool-test-result');
    await result.getByText(/Answered: status 200, \d+ ms/).waitFor();
    assert.match(await result.innerText(), /10:00/);
    await assertAccessible(page, 'tools');
    await screenshot(page, 'tools');
  });

  test('team: an invitation sent and cancelled; the last admin\'s demotion refused with the API\'s detail', async () => {
    const { page, base, email } = s;
    await page.goto(`${base}/team`);
    const invited = uniqueEmail('invited');
    await page.getByRole('textbox', { name: 'E-mail address' }).fill(invited);
    await page.getByRole('button', { name: 'Invite' }).click();
    const invitation = page.getByTestId('invitations').locator('tr', { hasText: invited });
    await invitation.waitFor();
    await assertAccessible(page, 'team');
    await screenshot(page, 'team');
    await invitation.getByRole('button', { name: 'Cancel invitation' }).click();
    await invitation.waitFor({ state: 'detached' });

    await page.getByRole('combobox', { name: `Role of ${email}` }).click();
    await page.getByRole('option', { name: 'user' }).click();
    await page.getByRole('alert').filter({ hasText: /admin/i }).waitFor();
    assert.deepEqual(s.problems, []);
  });
});
