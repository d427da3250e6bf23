import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { assertAccessible, screenshot, skipWithoutBrowser } from './helpers/browser.ts';
import { signedInConsole, type ConsoleSession } from './helpers/console-session.ts';

/**
 * The calls page's Export button and the usage page (issue 18, item 6) in headless Chromium against
 * the real server: an export of the filtered calls reaches completed and its link downloads the CSV
 * whose rows are the API list's for the same filter; the usage page's per-group totals are the API's.
 */
describe('exports and usage in the console', { skip: skipWithoutBrowser }, () => {
  let s: ConsoleSession;
  const agents: Array<{ agent_id: string; agent_name: string }> = [];
  // [agent index, seconds, credits, customer]
  const CALLS: Array<[number, number, number, string]> = [
    [0, 60, 2.5, 'c-1'], [0, 90, 3, 'c-2'], [1, 30, 1.25, 'c-1'], [1, 150, 4, 'c-3'], [0, 45, 0.75, 'c-3'], [2, 20, 1.5, 'c-2'],
  ];

  before(async () => {
    s = await signedInConsole('Export Co');
    for (const name of ['Sales line', 'Support line', 'Billing line']) {
      const res = await s.app.inject({ method: 'POST', url: '/api/agents', headers: s.headers, payload: { agent_name: name } });
      assert.equal(res.statusCode, 200, res.body);
      agents.push(res.json().data);
    }
    for (const [agent, seconds, credits, customer] of CALLS) {
      const res = await s.app.inject({ method: 'POST', url: '/api/calls', headers: s.headers,
        payload: { agent_id: agents[agent]!.agent_id, call_type: 'inbound', to_number: '+14155550100', metadata: { customer_id: customer } } });
      assert.equal(res.statusCode, 200, res.body);
      const done = await s.app.inject({ method: 'PATCH', url: `/api/calls/${res.json().data.call_sid}`, headers: s.headers,
        payload: { status: 'completed', duration_seconds: seconds, total_cost: credits } });
      assert.equal(done.statusCode, 200, done.body);
    }
  });

  after(async () => { await s?.close(); });

  test('Export: the filtered calls as CSV, completed, downloaded, the rows of the API list', async () => {
    const { page, base } = s;
    const agentId = agents[0]!.agent_id;
    await page.goto(`${base}/calls?agent_id=${agentId}`);
    await page.getByTestId('calls-table').locator('tbody tr').first().waitFor();
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    await page.getByRole('button', { name: 'Start export' }).click();
    const link = page.getByRole('link', { name: 'Download CSV' });
    await link.waitFor({ timeout: 30_000 });
    await assertAccessible(page, 'calls-export');
    await screenshot(page, 'calls-export');

    const listed = (await s.app.inject({ url: `/api/calls?agent_id=${agentId}&limit=100`, headers: s.headers })).json().data as Array<Record<string, unknown>>;
    assert.equal(listed.length, CALLS.filter(([a]) => a === 0).length);
    assert.equal(await page.getByTestId('export-rows').innerText(), String(listed.length));
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const file = await download.path();
    const rows = parse(fs.readFileSync(file, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    assert.deepEqual(rows.map((r) => r.call_sid), listed.map((c) => c.call_sid), 'the list\'s calls, in its order');
    for (const [i, row] of rows.entries()) {
      assert.equal(row.agent_id, agentId);
      assert.equal(Number(row.total_cost), listed[i]!.total_cost);
      assert.equal(Number(row.duration_seconds), listed[i]!.duration_seconds);
    }
    assert.deepEqual(s.problems, []);
  });
  test('Usage: grouped by agent, each group\'s totals and the total are the API\'s; grouped by a metadata key', async () => {
    const { page, base } = s;
    const today = new Date().toISOString().slice(0, 10);
    const weekAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
    await page.goto(`${base}/calls`);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(`${base}/usage`);
    await page.goto(`${base}/usage?tz=UTC&start=${weekAgo}&end=${today}&group_by=agent&metric=cost`);
    const table = page.getByTestId('usage-table');
    await table.locator('tbody tr').nth(agents.length - 1).waitFor();
    const dayAfter = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString();
    const res = await s.app.inject({ url: `/api/analytics/usage?start=${weekAgo}T00:00:00.000Z&end=${dayAfter}&timezone=UTC&granularity=day&group_by=agent`, headers: s.headers });
    assert.equal(res.statusCode, 200, res.body);
    const api = res.json().data;
    assert.equal(api.series.length, agents.length);
    assert.equal(await table.locator('tbody tr').count(), api.series.length, 'a row per group of the API');
    const sum = (points: Array<Record<string, number>>, key: string) => Math.round(points.reduce((t, p) => t + p[key]!, 0) * 1e4) / 1e4;
    for (const series of api.series) {
      const index = agents.findIndex((a) => a.agent_id === series.group.agent_id);
      const row = table.locator(`tbody tr[data-group="${agents[index]!.agent_name}"]`);
      const mine = CALLS.filter(([a]) => a === index);
      assert.equal(sum(series.points, 'calls'), mine.length, 'the API counts the agent\'s calls');
      assert.equal(sum(series.points, 'cost'), mine.reduce((t, c) => t + c[2], 0), 'and sums their cost');
      assert.equal(Number(await row.getByTestId('group-calls').innerText()), sum(series.points, 'calls'));
      assert.equal(Number(await row.getByTestId('group-cost').innerText()), sum(series.points, 'cost'));
      assert.equal(Number(await row.getByTestId('group-duration').innerText().then((t) => t.replaceAll(',', ''))), sum(series.points, 'duration_seconds'));
    }
    assert.equal(Number(await table.getByTestId('total-calls').innerText()), api.totals.calls);
    assert.equal(Number(await table.getByTestId('total-cost').innerText()), api.totals.cost);
    assert.equal(api.totals.cost, CALLS.reduce((t, c) => t + c[2], 0));
    await page.getByRole('figure').locator('.recharts-surface').first().waitFor();
    await assertAccessible(page, 'usage');
    await screenshot(page, 'usage');

    await page.getByRole('combobox', { name: 'Group by' }).click();
    await page.getByRole('option', { name: 'metadata key' }).click();
    await page.getByRole('textbox', { name: 'Metadata key' }).fill('customer_id');
    await page.getByRole('textbox', { name: 'Metadata key' }).press('Enter');
    await page.waitForURL(/group_by=metadata.customer_id/);
    for (const customer of ['c-1', 'c-2', 'c-3']) {
      const expected = CALLS.filter((c) => c[3] === customer).reduce((t, c) => t + c[2], 0);
      await table.locator(`tbody tr[data-group="${customer}"]`).getByTestId('group-cost').filter({ hasText: new RegExp(`^${expected}$`) }).waitFor();
    }
    assert.equal(Number(await table.getByTestId('total-cost').innerText()), api.totals.cost);

    await page.getByRole('combobox', { name: 'Agent' }).click();
    await page.getByRole('option', { name: 'Support line' }).click();
    await page.waitForURL(/agent_id=/);
    const support = CALLS.filter(([a]) => a === 1);
    await table.getByTestId('total-calls').filter({ hasText: new RegExp(`^${support.length}$`) }).waitFor();
    assert.equal(Number(await table.getByTestId('total-cost').innerText()), support.reduce((t, c) => t + c[2], 0));
    assert.deepEqual(s.problems, []);
  });
});
