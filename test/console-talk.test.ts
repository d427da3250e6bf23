import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { encodeWav, pcm16ToSamples } from '@switchboard/runtime';
import { OpenAiStandin } from '../runtime/test/standins/openai.ts';
import { DeepgramStandin } from '../runtime/test/standins/stt.ts';
import { ElevenLabsStandin } from '../runtime/test/standins/tts.ts';
import { speechPcm } from '../runtime/test/helpers/speech.ts';
import { assertAccessible, screenshot, skipWithoutBrowser, waitForExpression } from './helpers/browser.ts';
import { signedInConsole, type ConsoleSession } from './helpers/console-session.ts';
import { grantCredits } from './helpers/calls.ts';
import { testEnv } from './helpers/env.ts';

/**
 * The console's "Talk to agent" (extensions.md §11) in Chromium: the microphone is Chromium's fake
 * capture device playing a WAV of eSpeak NG speech written here (12 s of silence while the agent
 * greets, the question, then silence), captured through the page's AudioWorklet at 16 kHz and sent
 * to the built-in runtime; the providers are stand-ins on 127.0.0.1.
 */
const KEY = 'sk-standin-key';
const QUESTION = 'When do you open?';

describe('the console: talk to an agent in the browser', { skip: skipWithoutBrowser }, () => {
  let s: ConsoleSession;
  let llm: OpenAiStandin;
  let stt: DeepgramStandin;
  let tts: ElevenLabsStandin;
  before(async () => {
    const { tmpDir } = await testEnv();
    const rate = 16000;
    const question = await speechPcm(QUESTION, rate);
    const silence = (seconds: number) => Buffer.alloc(rate * 2 * seconds);
    const wav = path.join(tmpDir, `talk-${process.pid}.wav`);
    // 12 s before the question: on a loaded machine the session's start and the greeting took over 4 s,
    // and a question spoken over the greeting barges in and cuts it. Chromium loops the file: the
    // silence after the question outlasts the test.
    fs.writeFileSync(wav, encodeWav({ sampleRate: rate, channels: 1, samples: pcm16ToSamples(Buffer.concat([silence(12), question, silence(60)])) }));
    llm = await new OpenAiStandin({ key: KEY, script: [{ text: 'We open at nine.' }], firstTokenMs: 30, gapMs: 5 }).start();
    stt = await new DeepgramStandin({ key: KEY, sttFinalMs: 50 }).start();
    tts = await new ElevenLabsStandin({ key: KEY, firstByteMs: 30, chunkMs: 100 }).start();
    stt.phrases.say(QUESTION);
    s = await signedInConsole('Talk Console Co', { ALLOWED_NETWORKS: '127.0.0.1/32' }, [
      '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`,
    ]);
  });
  after(async () => {
    await s?.close();
    await llm?.close(); await stt?.close(); await tts?.close();
  });

  const post = async (url: string, payload: object) => {
    const res = await s.app.inject({ method: 'POST', url, headers: s.headers, payload });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };

  test('Talk to agent: refused without credits (in the API\'s words), then the greeting heard, the question transcribed, the answer with its latency, End, then the call page', { timeout: 150_000 }, async () => {
    const { page, base, org } = s;
    for (const [provider, url] of [['openai', llm.url], ['deepgram', stt.url], ['elevenlabs', tts.url]] as const) {
      await post('/api/integrations', { name: provider, provider, ...(provider === 'openai' ? { category: 'llm' } : {}), credentials: { api_key: KEY, base_url: url } });
    }
    const agent = await post('/api/agents', {
      agent_name: 'Front desk', system_prompt: 'Be brief.', first_message: 'Hello, this is Acme.', silence_timeout_seconds: 600, stt_provider: 'deepgram', tts_provider: 'elevenlabs',
      voice_id: 'voice-standin', llm_provider: 'openai', llm_model: 'gpt-test',
    });

    await page.goto(`${base}/agents/${agent.agent_id}`);
    const panel = page.getByTestId('talk-panel');
    // Without credits the session is refused, and the panel says why in the API's words.
    await panel.getByRole('button', { name: 'Talk to agent' }).click();
    await panel.getByRole('alert').getByText('The organization has no credits left to place a call; buy credits first').waitFor();
    await grantCredits(org.orgId, 50);
    await panel.getByRole('button', { name: 'Talk again' }).click();
    // Generous waits: under a loaded CI machine (three shards and Chromium on two cores) the session's
    // start and the greeting's first audio took over 20 s once; each step fails on its own, named.
    await panel.getByRole('button', { name: 'End' }).waitFor({ timeout: 30_000 });
    await panel.getByText('Hello, this is Acme.').waitFor({ timeout: 30_000 });
    // The agent's audio arrived as frames and went through the jitter buffer to the speakers.
    await waitForExpression(page, `Number(document.querySelector('[data-testid="talk-panel"]').dataset.playedMs) > 500`, 20_000);
    assert.ok(Number(await panel.getAttribute('data-agent-audio-frames')) > 25, 'at least half a second of 20 ms frames');

    // The fake microphone says the question after 12 s: the stand-in recognises it from the audio the worklet sent.
    await panel.locator('[data-role="user"][data-final="true"]').getByText(QUESTION).waitFor({ timeout: 30_000 });
    await panel.getByText('We open at nine.').waitFor({ timeout: 20_000 });
    const latency = await panel.getByTestId('talk-latency').first().innerText();
    assert.match(latency, /^Latency \d+ ms \(speech to text \d+ ms · model first token \d+ ms · speech first byte \d+ ms\)$/);
    // The stand-in heard 16 kHz PCM in 20 ms frames from the worklet.
    const session = stt.sessions.at(-1)!;
    assert.equal(session.query.get('encoding'), 'linear16');
    assert.equal(session.query.get('sample_rate'), '16000');
    assert.ok(session.messageBytes.every((bytes) => bytes % 640 === 0), 'whole 20 ms frames of 16 kHz PCM');
    // The page's timeline (what bench/console.ts measures with): the capture's start, then the agent's
    // audio starting to play for the greeting and again for the answer, later on the audio clock.
    await waitForExpression(page, `performance.getEntriesByName('agent-audio-played').length >= 2`, 10_000);
    const [captured, played] = await page.evaluate(`['caller-audio-captured', 'agent-audio-played'].map((name) =>
      performance.getEntriesByName(name).map((mark) => mark.detail.contextTime))`) as [number[], number[]];
    assert.equal(captured.length, 1);
    assert.ok(played.length >= 2, `the greeting's and the answer's playback (${played.length})`);
    assert.ok(played.at(-1)! > captured[0]!, 'the answer plays after the capture started');
    await assertAccessible(page, 'agent-talk');
    await screenshot(page, 'agent-talk');

    await panel.getByRole('button', { name: 'End' }).click();
    const link = panel.getByTestId('talk-call-link');
    await link.waitFor({ timeout: 10_000 });
    assert.equal(await link.innerText(), 'The call (ended: user hangup)');
    await link.click();
    await page.getByRole('heading', { name: 'Preview call in the browser' }).waitFor();
    const callSid = page.url().split('/').pop()!;
    for (let i = 0; i < 100; i++) {
      const call = (await s.app.inject({ url: `/api/calls/${callSid}`, headers: s.headers })).json().data;
      if (call.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.reload();
    await page.getByText('Completed').first().waitFor();
    await page.getByText('We open at nine.').waitFor();
    const call = (await s.app.inject({ url: `/api/calls/${callSid}`, headers: s.headers })).json().data;
    assert.deepEqual([call.call_type, call.status, call.end_reason], ['preview', 'completed', 'user_hangup']);
    assert.deepEqual(call.transcript.map((t: any) => [t.role, t.text]), [['agent', 'Hello, this is Acme.'], ['user', QUESTION], ['agent', 'We open at nine.']]);
    assert.deepEqual(s.problems, []);
  });
});
