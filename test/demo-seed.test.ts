import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testEnv, buildTestApp } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';
import { grantCredits } from './helpers/calls.ts';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('switchboard demo:seed', () => {
  let server: FastifyInstance;
  let url: string;
  before(async () => {
    const { config, database } = await testEnv();
    server = await buildTestApp(config);
    url = await server.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => server?.close());

  test('fills an organization through the public API: agents, number, tool, document and finished calls with recordings', async () => {
    const org = await createOrg();
    await grantCredits(org.orgId, 1_000_000);
    const { stdout, stderr } = await run(process.execPath, ['src/cli.ts', 'demo:seed', '--url', url, '--api-key', org.keys.agent_manager, '--org', org.orgId, '--calls', '12'], { cwd: root });
    assert.deepEqual(JSON.parse(stdout).calls, 12);
    assert.match(stderr, /calls: 12\/12/);

    const { app } = await testEnv();
    const headers = asRole(org, 'user');
    const calls = (await app.inject({ url: '/api/calls?limit=100', headers })).json().data;
    assert.equal(calls.length, 12);
    assert.ok(calls.every((c: { status: string; billing_status: string }) => ['completed', 'failed'].includes(c.status) && c.billing_status === 'billed'));
    const recorded = calls.filter((c: { recording_enabled: boolean }) => c.recording_enabled);
    assert.equal(recorded.length, 8);
    const detail = (await app.inject({ url: `/api/calls/${recorded[0].call_sid}`, headers })).json().data;
    assert.ok(detail.transcript.length >= 4 && detail.has_recording && detail.cost_breakdown.platform === 0.5);
    const download = await app.inject({ url: `/api/calls/${recorded[0].call_sid}/recording/download`, headers });
    assert.equal(download.rawPayload.toString('latin1', 0, 4), 'RIFF');
    const series = (await app.inject({ url: '/api/analytics/calls/daily', headers })).json().data.daily;
    assert.equal(series.reduce((n: number, p: { calls: number }) => n + p.calls, 0), 12);
    for (const list of ['agents', 'phone-numbers', 'tools', 'knowledge-base']) {
      assert.ok((await app.inject({ url: `/api/${list}`, headers })).json().data.length >= 1, list);
    }
  });

  test('recordings tell the truth: as long as their calls, each turn starting where its speaker is heard in their own channel', async () => {
    const org = await createOrg();
    await grantCredits(org.orgId, 1_000_000);
    await run(process.execPath, ['src/cli.ts', 'demo:seed', '--url', url, '--api-key', org.keys.agent_manager, '--org', org.orgId, '--calls', '4'], { cwd: root });
    const { app } = await testEnv();
    const headers = asRole(org, 'user');
    const calls = (await app.inject({ url: '/api/calls?limit=100', headers })).json().data.filter((c: { recording_enabled: boolean }) => c.recording_enabled);
    assert.ok(calls.length >= 2);
    for (const { call_sid } of calls) {
      const call = (await app.inject({ url: `/api/calls/${call_sid}`, headers })).json().data;
      const wav = (await app.inject({ url: `/api/calls/${call_sid}/recording/download`, headers })).rawPayload;
      const audio = parseWav(wav);
      assert.equal(audio.channels, 2, 'caller and agent each in a channel');
      assert.equal(audio.sampleRate, 8000);
      const seconds = audio.frames / audio.sampleRate;
      assert.ok(Math.abs(seconds - call.duration_seconds) <= 0.5, `recording ${seconds} s, call ${call.duration_seconds} s`);
      assert.ok(call.duration_seconds > 5, 'long enough to hold its conversation');
      for (const [index, turn] of call.transcript.entries()) {
        const speaker = turn.role === 'user' ? 0 : 1;
        const window = (channel: number) => rms(audio, channel, turn.start_seconds, turn.start_seconds + 0.4);
        assert.ok(window(speaker) > 500, `turn ${index} (${turn.role}) is heard at ${turn.start_seconds} s: rms ${window(speaker)}`);
        assert.ok(window(1 - speaker) < 50, `the other side is quiet while turn ${index} starts`);
        assert.ok(rms(audio, speaker, turn.start_seconds - 0.3, turn.start_seconds) < 50, `turn ${index} does not start before ${turn.start_seconds} s`);
      }
    }
  });

  test('refuses without its options', async () => {
    const result = await run(process.execPath, ['src/cli.ts', 'demo:seed', '--url', url], { cwd: root }).catch((e) => e);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--api-key is required/);
  });
});

interface Wav { channels: number; sampleRate: number; frames: number; samples: Int16Array }

/** A 16-bit PCM WAV read from its chunks (independently of the seed's writer). */
function parseWav(buffer: Buffer): Wav {
  assert.equal(buffer.toString('latin1', 0, 4), 'RIFF');
  let offset = 12;
  let channels = 0;
  let sampleRate = 0;
  while (offset + 8 <= buffer.length) {
    const id = buffer.toString('latin1', offset, offset + 4);
    const size = buffer.readUInt32LE(offset + 4);
    if (id === 'fmt ') {
      assert.equal(buffer.readUInt16LE(offset + 8), 1, 'PCM');
      channels = buffer.readUInt16LE(offset + 10);
      sampleRate = buffer.readUInt32LE(offset + 12);
      assert.equal(buffer.readUInt16LE(offset + 22), 16, '16-bit');
    }
    if (id === 'data') {
      const data = buffer.subarray(offset + 8, offset + 8 + size);
      const samples = new Int16Array(data.length / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
      return { channels, sampleRate, frames: samples.length / channels, samples };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

/** The energy (root mean square) of one channel between two times. */
function rms(wav: Wav, channel: number, from: number, to: number): number {
  const start = Math.max(0, Math.round(from * wav.sampleRate));
  const end = Math.min(wav.frames, Math.round(to * wav.sampleRate));
  let sum = 0;
  for (let i = start; i < end; i++) sum += wav.samples[i * wav.channels + channel]! ** 2;
  return end > start ? Math.sqrt(sum / (end - start)) : 0;
}
