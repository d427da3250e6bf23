import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAccessible, screenshot, skipWithoutBrowser } from './helpers/browser.ts';
import { signedInConsole, type ConsoleSession } from './helpers/console-session.ts';
import { makePdf } from './helpers/files.ts';
import { uniquePhoneNumber } from './helpers/fixtures.ts';

/**
 * The console's Agents and Knowledge base pages in headless Chromium against the real server:
 * an agent created and edited (a validation error shown at its field), a delete refused with the
 * 409 explained; a PDF dropped in, indexed live to completed, found by search with its page,
 * reprocessed and deleted. axe on every page.
 */
describe('the console: agents and knowledge base', { skip: skipWithoutBrowser }, () => {
  let s: ConsoleSession;
  before(async () => { s = await signedInConsole('Agents and KB Co'); });
  after(async () => { await s?.close(); });

  test('agents: create, a field refused by the API shown at the field, edit, and a delete refused while a number routes to it', async () => {
    const { page, base, app, headers } = s;
    await page.goto(`${base}/agents`);
    await page.getByRole('link', { name: 'New agent' }).click();
    await page.getByRole('textbox', { name: 'Name' }).fill('Reception');
    await page.getByRole('textbox', { name: 'Language' }).fill('English');
    await page.getByRole('combobox', { name: 'Language model' }).click();
    await page.getByRole('option', { name: 'anthropic' }).click();
    await page.getByRole('combobox', { name: 'Model', exact: true }).fill('claude-sonnet'); // a typed value with suggestions
    await assertAccessible(page, 'agent-new');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('alert').filter({ hasText: 'Language: Use a language code like EN or EN-US' }).waitFor(); // the API's errors, in words
    assert.equal(await page.getByRole('textbox', { name: 'Language' }).getAttribute('aria-invalid'), 'true', 'the error is at its field');

    await page.getByRole('textbox', { name: 'Language' }).fill('EN-GB');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.waitForURL(/\/agents\/agent_[a-f0-9]{12}$/);
    const agentId = page.url().split('/').pop()!;
    const stored = (await app.inject({ url: `/api/agents/${agentId}`, headers })).json().data;
    assert.equal(stored.llm_provider, 'anthropic');
    assert.equal(stored.language, 'EN-GB');

    await page.getByRole('switch', { name: 'Record calls' }).check();
    // The create's notice may have closed itself by now (a busy machine): wait for this save's answer,
    // then for its notice.
    const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/api/agents/${agentId}`);
    await page.getByRole('button', { name: 'Save changes' }).click();
    assert.equal((await saved).status(), 200);
    await page.getByText('Saved “Reception”').last().waitFor();
    assert.equal((await app.inject({ url: `/api/agents/${agentId}`, headers })).json().data.recording_enabled, true);
    await screenshot(page, 'agent');

    const number = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers, payload: {
      phone_number: uniquePhoneNumber(), provider: 'sip', sip_trunk_name: 'main', sip_username: 'u', sip_password: 'console-test-password',
      sip_server_address: 'sip.example.com', inbound_room_name: 'reception-',
    } });
    assert.equal(number.statusCode, 200, number.body);
    const assigned = await app.inject({ method: 'PATCH', url: `/api/phone-numbers/${number.json().data.phone_number_id}`, headers, payload: { agent_id: agentId } });
    assert.equal(assigned.statusCode, 200, assigned.body);
    await page.goto(`${base}/agents`);
    await page.getByTestId('agents').locator('tr', { hasText: 'Reception' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByText(/assigned phone number/).waitFor();
    await page.getByRole('dialog').getByText(/Phone numbers still route calls to this agent/).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await assertAccessible(page, 'agents');
    await screenshot(page, 'agents');
  });

  test('knowledge base: a dropped PDF uploads, is indexed live to completed, is found by search with its page, reprocessed and deleted', async () => {
    const { page, base } = s;
    await page.goto(`${base}/knowledge-base`);
    await page.getByText('Drop documents here').waitFor();
    await assertAccessible(page, 'knowledge-base-empty');
    const pdf = await makePdf(['Welcome to Acme.', 'Our refund policy allows returns within thirty days of delivery.']);
    await page.locator('input[type="file"]').setInputFiles({ name: 'policies.pdf', mimeType: 'application/pdf', buffer: pdf });
    const row = page.getByTestId('documents').locator('tr', { hasText: 'policies.pdf' });
    await row.and(page.locator('[data-status="completed"]')).waitFor({ timeout: 30_000 });
    assert.match(await row.innerText(), /completed\s+2\b/i, `two pages: ${await row.innerText()}`);

    await page.getByRole('textbox', { name: 'Search the documents' }).fill('refund policy returns');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const hits = page.getByTestId('search-hits');
    await hits.getByText('policies.pdf, page 2').first().waitFor();
    assert.match(await hits.innerText(), /thirty days/);
    await assertAccessible(page, 'knowledge-base');
    await screenshot(page, 'knowledge-base');

    await row.getByRole('button', { name: 'Reprocess' }).click();
    await row.and(page.locator('[data-status="completed"]')).waitFor({ timeout: 30_000 });
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    assert.deepEqual(s.problems, []);
  });
});
