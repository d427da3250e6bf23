import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAccessible, screenshot, skipWithoutBrowser } from './helpers/browser.ts';
import { signedInConsole, type ConsoleSession } from './helpers/console-session.ts';

/**
 * The console for the voice runtime (issue 30 item 10, issue 31 item 2): the agent form's
 * integration pickers and runtime fields, an agent that cannot take calls saying why, the call page
 * with tool turns, per-turn latency, the call's p50/p95 and its error; the studio's `{{variables}}`
 * with sample values and the unsaved-changes guard.
 */
describe('the console: voice runtime and agent studio', { skip: skipWithoutBrowser }, () => {
  let s: ConsoleSession;
  before(async () => { s = await signedInConsole('Runtime Console Co'); });
  after(async () => { await s?.close(); });

  const post = async (url: string, payload: object) => {
    const res = await s.app.inject({ method: 'POST', url, headers: s.headers, payload });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };

  test('agent page: pickers list the matching integrations, newest active by default, and the missing text-to-speech integration is named', async () => {
    const { page, base } = s;
    const older = await post('/api/integrations', { name: 'Deepgram old', provider: 'deepgram', credentials: { api_key: 'k1' } });
    await new Promise((r) => setTimeout(r, 20)); // distinct creation times: "newest" is well defined
    await post('/api/integrations', { name: 'Deepgram main', provider: 'deepgram', credentials: { api_key: 'k2' } });
    await post('/api/integrations', { name: 'OpenAI', provider: 'openai', category: 'llm', credentials: { api_key: 'k3' } });
    const agent = await post('/api/agents', { agent_name: 'Front desk', stt_provider: 'deepgram', llm_provider: 'openai', tts_provider: 'elevenlabs', system_prompt: 'Be brief.' });

    await page.goto(`${base}/agents/${agent.agent_id}`);
    const readiness = page.getByTestId('readiness');
    await readiness.getByText('This agent cannot take calls yet').waitFor();
    const text = await readiness.innerText();
    assert.match(text, /No active elevenlabs integration for its text to speech/);
    assert.doesNotMatch(text, /deepgram|openai/, 'the providers with an active integration are not named');

    const stt = page.getByRole('combobox', { name: 'STT integration' });
    assert.equal(await stt.inputValue(), 'Newest active (Deepgram main)');
    await stt.click();
    const options = await page.getByRole('option').allInnerTexts();
    assert.deepEqual(options.map((o) => o.trim()), ['Newest active (Deepgram main)', 'Deepgram main', 'Deepgram old'], 'the deepgram integrations only, newest first');
    await page.getByRole('option', { name: 'Deepgram old' }).click();
    assert.equal(await page.getByRole('combobox', { name: 'LLM integration' }).inputValue(), 'Newest active (OpenAI)');
    assert.equal(await page.getByRole('combobox', { name: 'TTS integration' }).inputValue(), 'Newest active (none yet)');

    await page.getByRole('switch', { name: 'Caller can interrupt the agent' }).uncheck();
    await page.getByRole('textbox', { name: 'Transfer number' }).fill('+14155550199');
    await page.getByRole('textbox', { name: 'Silence timeout (seconds)' }).fill('45');
    await assertAccessible(page, 'agent-runtime');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved “Front desk”').first().waitFor();
    const stored = (await s.app.inject({ url: `/api/agents/${agent.agent_id}`, headers: s.headers })).json().data;
    assert.equal(stored.stt_integration_id, older.integration_id);
    assert.equal(stored.llm_integration_id, null, 'newest active is the API\'s null');
    assert.equal(stored.interruptible, false);
    assert.equal(stored.transfer_number, '+14155550199');
    assert.equal(stored.silence_timeout_seconds, 45);

    await post('/api/integrations', { name: 'Voices', provider: 'elevenlabs', credentials: { api_key: 'k4' } });
    await page.reload();
    await readiness.getByText('Ready to take calls').waitFor();
    await screenshot(page, 'agent-runtime');
  });

  test('call page: tool turns, each agent turn\'s latency, the call\'s p50/p95 and its error', async () => {
    const { page, base, app, headers } = s;
    const agent = await post('/api/agents', { agent_name: 'Orders', system_prompt: 'Help with orders.' });
    const call = await post('/api/calls', { agent_id: agent.agent_id, call_type: 'inbound', to_number: '+14155550100', from_number: '+14155550111' });
    const report = await app.inject({ method: 'PATCH', url: `/api/calls/${call.call_sid}`, headers, payload: {
      status: 'failed', end_reason: 'error', duration_seconds: 20, latency_p50_ms: 640, latency_p95_ms: 910,
      error: { provider: 'elevenlabs', code: 'refused', message: 'The voice service refused the API key' },
      transcript: [
        { role: 'user', text: 'Where is order A-1?', start_seconds: 1, end_seconds: 3 },
        { role: 'tool', text: 'lookup_order', start_seconds: 3.2, tool: { name: 'lookup_order', arguments: { order_id: 'A-1' }, result: { shipped: true }, status: 200, duration_ms: 180 } },
        { role: 'agent', text: 'It has shipped.', start_seconds: 4, end_seconds: 5, interrupted: true, latency: { stt_ms: 150, llm_first_token_ms: 250, tts_first_byte_ms: 120, total_ms: 640 } },
      ],
    } });
    assert.equal(report.statusCode, 200, report.body);

    await page.goto(`${base}/calls/${call.call_sid}`);
    const error = page.getByTestId('call-error');
    await error.waitFor();
    assert.match(await error.innerText(), /elevenlabs \(refused\)[\s\S]*The voice service refused the API key/);
    const tool = page.getByTestId('tool-call');
    const toolText = await tool.innerText();
    assert.match(toolText, /lookup_order · status 200 · 180 ms/);
    assert.match(toolText, /"order_id": "A-1"/);
    assert.match(toolText, /"shipped": true/);
    const latency = await page.getByTestId('turn-latency').innerText();
    assert.match(latency, /Latency 640 ms \(speech to text 150 ms · model first token 250 ms · speech first byte 120 ms\)/);
    assert.match(latency, /Interrupted by the caller/);
    const details = await page.getByRole('table').first().innerText();
    assert.match(details, /Latency p50\s+640 ms/);
    assert.match(details, /Latency p95\s+910 ms/);
    await assertAccessible(page, 'call-runtime');
    await screenshot(page, 'call-runtime');
  });

  test('studio: {{variables}} listed with sample values kept in the browser, and leaving with unsaved changes asks first', async () => {
    const { page, base } = s;
    const agent = await post('/api/agents', { agent_name: 'Greeter', system_prompt: 'You call {{first_name}} about {{ topic }}.', first_message: 'Hello {{first_name}}, this is {{company}}.' });
    await page.goto(`${base}/agents/${agent.agent_id}`);
    const variables = page.getByTestId('variables');
    await variables.getByRole('textbox').first().waitFor();
    const labels = await variables.locator('label').allInnerTexts();
    assert.deepEqual(labels, ['Sample value of {{first_name}}', 'Sample value of {{topic}}', 'Sample value of {{company}}'], 'each variable once, in order of use');
    await page.getByRole('textbox', { name: 'Sample value of {{first_name}}' }).fill('Ada');
    await page.reload();
    assert.equal(await page.getByRole('textbox', { name: 'Sample value of {{first_name}}' }).inputValue(), 'Ada', 'kept in local storage');
    await assertAccessible(page, 'agent-variables');

    // Sample values are not the agent's configuration: the form is still clean, so leaving does not ask.
    let asked = 0;
    page.on('dialog', (dialog) => { asked += 1; void (asked === 1 ? dialog.dismiss() : dialog.accept()); });
    await page.getByRole('link', { name: '← All agents' }).click();
    await page.waitForURL(`${base}/agents`);
    assert.equal(asked, 0);

    await page.goto(`${base}/agents/${agent.agent_id}`);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Greeter two');
    await page.getByRole('link', { name: '← All agents' }).click();
    for (const until = Date.now() + 15_000; asked === 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
    assert.equal(asked, 1, 'a confirm was shown');
    assert.equal(new URL(page.url()).pathname, `/agents/${agent.agent_id}`, 'dismissed: still on the agent');
    assert.equal(await page.getByRole('textbox', { name: 'Name', exact: true }).inputValue(), 'Greeter two', 'the edit is kept');
    await page.getByRole('link', { name: '← All agents' }).click();
    await page.waitForURL(`${base}/agents`);
    assert.equal(asked, 2, 'accepted: left');
    assert.equal((await s.app.inject({ url: `/api/agents/${agent.agent_id}`, headers: s.headers })).json().data.agent_name, 'Greeter');
  });
});
