import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAccessible, screenshot, skipWithoutBrowser } from './helpers/browser.ts';
import { signedInConsole, type ConsoleSession } from './helpers/console-session.ts';
import { createAgent, uniquePhoneNumber } from './helpers/fixtures.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

/**
 * The console's Webhooks (extensions §1) and Campaigns pages in headless Chromium against the real
 * server: an endpoint added (its secret shown once), a test event delivered and retried from the
 * delivery log; a campaign created from a CSV (bad rows reported), started, paused and cancelled.
 */
describe('the console: webhooks and campaigns', { skip: skipWithoutBrowser }, () => {
  let s: ConsoleSession;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    receiver = await startReceiver({ host: '127.0.0.2', answer: () => ({ status: 200, body: 'ok' }) });
    s = await signedInConsole('Webhooks Co');
  });
  after(async () => {
    await s?.close();
    await receiver?.close();
  });

  test('webhooks: an endpoint added with its secret shown once; a test event delivered, then retried from the log', async () => {
    const { page, base } = s;
    await page.goto(`${base}/webhooks`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('textbox', { name: 'URL' }).fill(`${receiver.url}/hooks`);
    await page.getByRole('textbox', { name: 'Description' }).fill('CRM sync');
    await page.getByRole('dialog').getByRole('button', { name: 'Add endpoint' }).click();
    assert.match(await page.getByTestId('webhook-secret').innerText(), /^whsec_/);
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });

    const hook = page.getByTestId('webhook').filter({ hasText: 'CRM sync' });
    await hook.getByRole('button', { name: 'Send test' }).click();
    const delivery = hook.getByTestId('deliveries').locator('tr', { hasText: 'webhook.test' });
    await delivery.getByText('succeeded').waitFor();
    assert.match(await delivery.innerText(), /#1: 200/);
    const before = receiver.received.length;
    await delivery.getByRole('button', { name: 'Retry' }).click();
    await delivery.getByText(/#2: 200/).waitFor();
    assert.equal(receiver.received.length, before + 1, 'sent once more');
    await assertAccessible(page, 'webhooks');
    await screenshot(page, 'webhooks');
  });

  test('campaigns: created from a CSV with its bad row reported, then started, paused and cancelled', async () => {
    const { page, base, app, headers, org } = s;
    await createAgent({ ...org, keys: { admin: org.key } } as never, { agent_name: 'Reminder agent' });
    const number = uniquePhoneNumber();
    const imported = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers, payload: {
      phone_number: number, provider: 'sip', supports_outbound: true, sip_trunk_name: 'out', sip_username: 'u', sip_password: 'campaign-password',
      sip_server_address: 'sip.example.com', inbound_room_name: 'out-',
    } });
    assert.equal(imported.statusCode, 200, imported.body);

    await page.goto(`${base}/campaigns`);
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByRole('textbox', { name: 'Name' }).fill('Spring reminders');
    await page.getByRole('combobox', { name: 'Agent' }).click();
    await page.getByRole('option', { name: 'Reminder agent' }).click();
    await page.getByRole('combobox', { name: 'Calling from' }).click();
    await page.getByRole('option', { name: number }).click();
    const csv = 'phone_number,first_name\n+14155550101,Ada\nnot-a-number,Bob\n+14155550102,Cy\n';
    await page.getByLabel('Contacts (CSV: phone_number, then variables)').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await assertAccessible(page, 'campaign-new');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('status').filter({ hasText: 'with 2 contacts (1 rows refused)' }).waitFor();
    await page.getByText('Row 2: invalid phone number').waitFor(); // the second data row
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });

    const card = page.getByTestId('campaign').filter({ hasText: 'Spring reminders' });
    await card.getByText('2 contacts: 2 pending').waitFor();
    await card.getByRole('button', { name: 'Start' }).click();
    await card.getByRole('button', { name: 'Pause' }).click();
    await card.getByRole('button', { name: 'Resume' }).waitFor();
    await assertAccessible(page, 'campaigns');
    await screenshot(page, 'campaigns');
    await card.getByRole('button', { name: 'Cancel' }).click();
    await card.getByText('cancel', { exact: false }).first().waitFor();
    for (let i = 0; i < 50; i++) {
      const status = (await app.inject({ url: '/api/campaigns', headers })).json().data.find((c: { name: string }) => c.name === 'Spring reminders')?.status;
      if (status === 'cancelled') break;
      assert.ok(i < 49, `cancelled (is ${status})`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(s.problems, []);
  });
});
