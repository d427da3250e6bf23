/**
 * The transports over real WebSockets on 127.0.0.1, through the runtime's Fastify routes: a carrier
 * stand-in that plays Media Streams in real time with synthesized speech (and echoes marks as it
 * plays them), and a browser preview client; plus the drain refusing new streams.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, test } from 'node:test';
import Fastify from 'fastify';
import WebSocket from 'ws';
import { DEFAULT_PRICES } from '../src/engine/prices.ts';
import { CARRIER_FORMAT, PREVIEW_FORMAT, ProviderError } from '../src/providers/types.ts';
import { DRAINING_CLOSE_CODE, RuntimeCalls, runtimeRoutes } from '../src/server.ts';
import { agentConfig, FakePlatform, FakeProviders, sleep, until } from './helpers/fakes.ts';
import { silenceFrame, speechFrames } from './helpers/speech.ts';

const callToken = (sub: string) => `h.${Buffer.from(JSON.stringify({ sub, organization_id: 'org_0123456789ab', scope: 'runtime' })).toString('base64url')}.s`;

async function runtime(script: ConstructorParameters<typeof FakeProviders>[0]) {
  const config = agentConfig({ language: 'es' });
  const providers = new FakeProviders(script);
  const languages: string[] = [];
  await providers.prepare(['Hello Ada, this is Acme.'], 8000);
  await providers.prepare(['Hello Ada, this is Acme.'], 16000);
  const platforms: { callSid: string; token: string; organizationId: string; platform: FakePlatform }[] = [];
  const calls = new RuntimeCalls();
  const app = Fastify();
  await app.register(runtimeRoutes, {
    apiBaseUrl: 'http://127.0.0.1:9', prices: DEFAULT_PRICES, calls,
    providersFactory: (_settings, language) => { languages.push(language); return providers; },
    platformFactory: (call) => {
      const platform = new FakePlatform(config);
      platforms.push({ ...call, platform });
      return platform;
    },
  });
  const url = (await app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
  after(() => app.close());
  return { url, providers, platforms, calls, languages };
}

test('carrier Media Streams: start with the token, paced media no faster than real time + 1 s, marks after utterances, stop ends user_hangup', async () => {
  const { url, providers, platforms, languages } = await runtime({
    stt: ['Do you open on Saturdays?'], llm: [{ text: ['Yes, from nine to noon. Anything else?'] }],
  });
  await providers.prepare([], 8000);
  const question = await speechFrames('Do you open on Saturdays?', CARRIER_FORMAT);
  const socket = new WebSocket(`${url}/api/runtime/carrier_a/stream`);
  await new Promise((resolve) => socket.once('open', resolve));
  const media: number[] = [];
  const marks: { name: string; at: number; audioBefore: number }[] = [];
  const events: string[] = [];
  let closed: number | null = null;
  // The carrier plays what it gets in real time; a mark is echoed once the audio before it has played.
  let playhead = 0;
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    events.push(message.event);
    assert.equal(message.streamSid, 'MZ0001');
    if (message.event === 'media') {
      assert.equal(Buffer.from(message.media.payload, 'base64').length, 160, '20 ms of μ-law');
      const now = performance.now();
      media.push(now);
      playhead = Math.max(playhead, now) + 20;
    }
    if (message.event === 'mark') {
      marks.push({ name: message.mark.name, at: performance.now(), audioBefore: media.length });
      setTimeout(() => socket.send(JSON.stringify({ event: 'mark', streamSid: 'MZ0001', mark: { name: message.mark.name } })), Math.max(0, playhead - performance.now()));
    }
  });
  socket.on('close', (code) => { closed = code; });

  socket.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  socket.send(JSON.stringify({
    event: 'start', sequenceNumber: '1', streamSid: 'MZ0001',
    start: {
      streamSid: 'MZ0001', accountSid: 'AC1', callSid: 'CA1', tracks: ['inbound'],
      customParameters: { call_sid: 'call_carrier00000000001', agent_id: 'agent_000000000001', token: callToken('call_carrier00000000001') },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  }));
  // The caller's line: a frame every 20 ms, in real time: silence, then the question, then silence.
  const line = [...Array(150).fill(silenceFrame(CARRIER_FORMAT)), ...question, ...Array(200).fill(silenceFrame(CARRIER_FORMAT))];
  const started = performance.now();
  for (const [index, frame] of line.entries()) {
    const due = started + index * 20 - performance.now();
    if (due > 0) await sleep(due);
    socket.send(JSON.stringify({ event: 'media', streamSid: 'MZ0001', media: { track: 'inbound', chunk: String(index), timestamp: String(index * 20), payload: frame.toString('base64') } }));
    if (index === 10) socket.send(JSON.stringify({ event: 'dtmf', streamSid: 'MZ0001', dtmf: { track: 'inbound_track', digit: '5' } }));
  }
  await until(() => marks.length >= 3, 10_000, 'marks after the answer');
  socket.send(JSON.stringify({ event: 'stop', streamSid: 'MZ0001', stop: { accountSid: 'AC1', callSid: 'CA1' } }));
  await until(() => closed !== null, 5000, 'the runtime to close the stream');

  const { platform, callSid, token, organizationId } = platforms[0]!;
  assert.equal(callSid, 'call_carrier00000000001');
  assert.equal(token, callToken('call_carrier00000000001'));
  assert.equal(organizationId, 'org_0123456789ab', 'the organization comes from the token');
  assert.equal(platform.reports[0]!.status, 'in_progress');
  assert.equal(platform.final!.end_reason, 'user_hangup');
  assert.deepEqual(platform.final!.transcript!.map((t) => t.role), ['agent', 'user', 'agent']);
  assert.equal(closed, 1000);

  // Pacing: by any moment, no more audio than the time elapsed since the first frame plus one second.
  // Times are when this process received the frames: a first frame received late (the event loop busy
  // on a loaded machine) makes every later one look early by that delay, so up to 250 ms of it is
  // allowed. An unpaced sender would be seconds ahead.
  const RECEIPT_DELAY_MS = 250;
  const first = media[0]!;
  for (const [index, at] of media.entries()) {
    const sentMs = (index + 1) * 20;
    assert.ok(sentMs <= at - first + 1000 + 20 + RECEIPT_DELAY_MS, `frame ${index}: ${sentMs} ms of audio sent ${Math.round(at - first)} ms after the first`);
  }
  // Marks: one after each sentence, behind the audio it ends.
  assert.deepEqual(marks.map((m) => m.audioBefore > 0), marks.map(() => true));
  assert.ok(marks.length === 3, `marks: ${marks.map((m) => m.name).join(', ')}`);
  assert.ok(!events.includes('clear'), 'no barge-in, no clear');
  // The adapters are made for the agent's language (ElevenLabs, Azure and the STT models need it).
  assert.deepEqual(languages, ['es']);
});

test('preview: 16 kHz PCM both ways, live transcript, speaking, turn latency, and {type: "end"} ends user_hangup', async () => {
  const { url, providers, platforms } = await runtime({
    stt: ['What time is it?'], llm: [{ text: ['It is ten past nine.'] }],
  });
  await providers.prepare([], 16000);
  const question = await speechFrames('What time is it?', PREVIEW_FORMAT);
  const token = callToken('call_preview00000000001');
  const socket = new WebSocket(`${url}/api/runtime/preview?token=${token}`);
  await new Promise((resolve) => socket.once('open', resolve));
  const json: Record<string, any>[] = [];
  const binary: number[] = [];
  socket.on('message', (data, isBinary) => {
    if (isBinary) binary.push((data as Buffer).length);
    else json.push(JSON.parse(data.toString()));
  });
  const line = [...Array(100).fill(silenceFrame(PREVIEW_FORMAT)), ...question, ...Array(150).fill(silenceFrame(PREVIEW_FORMAT))];
  const started = performance.now();
  for (const [index, frame] of line.entries()) {
    const due = started + index * 20 - performance.now();
    if (due > 0) await sleep(due);
    socket.send(frame, { binary: true });
  }
  await until(() => json.some((m) => m.type === 'turn'), 10_000, 'the turn event');
  await until(() => json.filter((m) => m.type === 'agent_speaking' && !m.speaking).length >= 2, 10_000, 'the answer to end');
  socket.send(JSON.stringify({ type: 'end' }));
  await until(() => json.some((m) => m.type === 'ended'), 5000, 'the ended event');

  assert.equal(platforms[0]!.callSid, 'call_preview00000000001', 'the call is the token\'s subject');
  assert.ok(binary.length > 50 && binary.every((length) => length === 640), 'agent audio in 20 ms frames of 16 kHz PCM');
  assert.deepEqual(json.find((m) => m.type === 'transcript' && m.role === 'user' && m.final), { type: 'transcript', role: 'user', text: 'What time is it?', final: true });
  assert.deepEqual(json.find((m) => m.type === 'transcript' && m.role === 'agent' && m.text === 'It is ten past nine.'), { type: 'transcript', role: 'agent', text: 'It is ten past nine.', final: true });
  assert.deepEqual(json.find((m) => m.type === 'agent_speaking'), { type: 'agent_speaking', speaking: true });
  const turn = json.find((m) => m.type === 'turn')!;
  assert.deepEqual(Object.keys(turn.latency).sort(), ['llm_first_token_ms', 'stt_ms', 'total_ms', 'tts_first_byte_ms']);
  assert.deepEqual(json.at(-1), { type: 'ended', end_reason: 'user_hangup' });
  assert.equal(platforms[0]!.platform.final!.end_reason, 'user_hangup');
  assert.equal(platforms[0]!.platform.final!.cost_breakdown!.telephony, 0, 'a preview has no carrier minutes');
});

test('draining: a new stream is refused with a policy close code', async () => {
  const { url, calls } = await runtime({ stt: [], llm: [] });
  await calls.drain(0);
  const socket = new WebSocket(`${url}/api/runtime/preview?token=${callToken('call_preview00000000002')}`);
  const code = await new Promise<number>((resolve) => socket.once('close', resolve));
  assert.equal(code, DRAINING_CLOSE_CODE);
});

test('switchboard runtime alone: /api/health, and /metrics with active calls, turn latency and provider errors by provider', async () => {
  const providers = new FakeProviders({ stt: [], llm: [] });
  providers.sttOpenError = new ProviderError('deepgram', 'unauthorized', 'refused');
  const { startRuntimeServer } = await import('../src/server.ts');
  const server = await startRuntimeServer({
    port: 0, host: '127.0.0.1', apiBaseUrl: 'http://127.0.0.1:9',
    providersFactory: () => providers, platformFactory: () => new FakePlatform(agentConfig()), drainSeconds: 0,
    logger: { info() {}, warn() {}, error() {} },
  });
  after(() => server.stop());
  const base = server.url;
  assert.equal((await fetch(`${base}/api/health`)).status, 200);
  const socket = new WebSocket(`${base.replace('http', 'ws')}/api/runtime/preview?token=${callToken('call_preview00000000003')}`);
  await new Promise((resolve) => socket.once('close', resolve));
  const metrics = await (await fetch(`${base}/metrics`)).text();
  assert.match(metrics, /^switchboard_runtime_active_calls 0$/m);
  assert.match(metrics, /^switchboard_runtime_provider_errors_total\{provider="deepgram"\} 1$/m);
  assert.match(metrics, /^# TYPE switchboard_runtime_turn_latency_seconds histogram$/m);
  assert.equal((await fetch(`${base}/api/calls`)).status, 404, 'only the runtime routes, health and metrics');
});
