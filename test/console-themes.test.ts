import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { assertAccessible, screenshot, skipWithoutBrowser, waitForExpression } from './helpers/browser.ts';
import { signedInConsole, type ConsoleSession } from './helpers/console-session.ts';
import { grantCredits } from './helpers/calls.ts';

/**
 * Every page of the console in light and dark mode (issue 31): the system's preference is followed
 * (prefers-color-scheme), the header's toggle overrides it, and axe finds no serious or critical
 * violation on any page in either theme. A screenshot of each page in each theme.
 */
describe('the console in light and dark mode', { skip: skipWithoutBrowser }, () => {
  let s: ConsoleSession;
  const pages: Array<[string, string]> = [];
  before(async () => {
    s = await signedInConsole('Themes Co');
    const { app, headers, org } = s;
    await grantCredits(org.orgId, 1000);
    const agent = (await app.inject({ method: 'POST', url: '/api/agents', headers, payload: { agent_name: 'Front desk', recording_enabled: true } })).json().data;
    const call = (await app.inject({ method: 'POST', url: '/api/calls', headers, payload: { agent_id: agent.agent_id, call_type: 'inbound', to_number: '+14155550100', from_number: '+14155550111' } })).json().data;
    const done = await app.inject({ method: 'PATCH', url: `/api/calls/${call.call_sid}`, headers, payload: {
      status: 'completed', end_reason: 'user_hangup', duration_seconds: 9, total_cost: 1.5,
      transcript: [{ role: 'agent', text: 'Hello, how can I help?', start_seconds: 0 }, { role: 'user', text: 'I need a plumber.', start_seconds: 3 }],
    } });
    assert.equal(done.statusCode, 200, done.body);
    await app.inject({ method: 'POST', url: '/api/knowledge-base', headers, payload: { name: 'Hours', text: 'Open Monday to Friday.' } });
    pages.push(
      ['home', '/'], ['calls', '/calls'], ['call', `/calls/${call.call_sid}`], ['agents', '/agents'], ['agent', `/agents/${agent.agent_id}`],
      ['agent-versions', `/agents/${agent.agent_id}?tab=versions`], ['agent-analysis', `/agents/${agent.agent_id}?tab=analysis`],
      ['agent-new', '/agents/new'], ['knowledge', '/knowledge-base'], ['phone-numbers', '/phone-numbers'], ['integrations', '/integrations'],
      ['tools', '/tools'], ['api-keys', '/api-keys'], ['campaigns', '/campaigns'], ['webhooks', '/webhooks'], ['team', '/team'],
      ['analytics', '/analytics'], ['usage', '/usage'], ['billing', '/billing'], ['not-found', '/no-such-page'],
    );
  });
  after(() => s?.close());

  const scheme = (page: Page) => page.evaluate('document.documentElement.getAttribute("data-mantine-color-scheme")');

  /** A page is ready when its heading is shown and nothing is loading any more. */
  async function settle(page: Page): Promise<void> {
    await page.locator('main h1').first().waitFor();
    await waitForExpression(page, '!document.querySelector("[aria-busy=true], [data-testid=skeleton], .mantine-Loader-root")');
    await page.waitForTimeout(150); // transitions (contrast is checked on the final colors)
  }

  for (const theme of ['light', 'dark'] as const) {
    test(`every page in ${theme} mode passes axe`, async () => {
      const { page, base } = s;
      await page.emulateMedia({ colorScheme: theme });
      await page.evaluate('localStorage.removeItem("switchboard-color-scheme")');
      for (const [name, path] of pages) {
        await page.goto(`${base}${path}`);
        await settle(page);
        assert.equal(await scheme(page), theme, `${name} follows prefers-color-scheme`);
        await assertAccessible(page, `${name} (${theme})`);
        await screenshot(page, `${name}-${theme}`);
      }
    });
  }

  test('the toggle overrides the system preference and is remembered', async () => {
    const { page, base } = s;
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${base}/calls`);
    await settle(page);
    assert.equal(await scheme(page), 'light');
    await page.getByRole('button', { name: 'Use dark mode' }).click();
    assert.equal(await scheme(page), 'dark');
    await page.reload();
    await settle(page);
    assert.equal(await scheme(page), 'dark', 'kept across a reload');
    await page.getByRole('button', { name: 'Use light mode' }).click();
    assert.equal(await scheme(page), 'light');
  });

  test('a person whose system asks for less motion gets a dialog without its transition; others get the transition', async () => {
    const { page, base } = s;
    /** The CSS transitions that ran inside the delete dialog (its overlay and content) as it opened. */
    const dialogTransitions = async (reducedMotion: 'reduce' | 'no-preference') => {
      await page.emulateMedia({ reducedMotion });
      await page.goto(`${base}/agents`);
      await settle(page);
      await page.evaluate(`window.dialogTransitions = 0;
        document.addEventListener('transitionrun', (e) => { if (e.target.closest('.mantine-Modal-root')) window.dialogTransitions += 1; });`);
      await page.getByTestId('agents').locator('tr', { hasText: 'Front desk' }).getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').waitFor();
      await page.waitForTimeout(100); // a transition's transitionrun is dispatched on the frame after it starts
      const count = Number(await page.evaluate('window.dialogTransitions'));
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('dialog').waitFor({ state: 'hidden' });
      return count;
    };
    assert.equal(await dialogTransitions('reduce'), 0, 'no transition with prefers-reduced-motion: reduce');
    assert.ok((await dialogTransitions('no-preference')) > 0, 'the dialog fades in otherwise');
    await page.emulateMedia({ reducedMotion: 'reduce' });
  });
});
