import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { asRole, createAgent, createOrg } from './helpers/fixtures.ts';
import { createCall, uploadRecording } from './helpers/calls.ts';

/**
 * Compression (issue 31): brotli or gzip, as the client asks, for the console's assets (compressed
 * once at build time) and the API's JSON; never on a Range request (its bytes are the ones Content-Range names) nor on audio;
 * /metrics still scraped. Each body decompressed and compared with the original.
 */
const DIST = path.resolve(import.meta.dirname, '../console/dist');
const WAV = toneWav(3, 440);

describe('compressed answers', () => {
  let app: FastifyInstance;
  let asset: { url: string; bytes: Buffer };
  before(async () => {
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, { METRICS_TOKEN: 'scrape-token-1234' }));
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(fs.readFileSync(path.join(DIST, 'index.html'), 'utf8'))![1]!;
    asset = { url: script, bytes: fs.readFileSync(path.join(DIST, script)) };
  });
  after(() => app?.close());

  const decode = (encoding: string, body: Buffer) => (encoding === 'br' ? zlib.brotliDecompressSync(body) : zlib.gunzipSync(body));

  for (const encoding of ['br', 'gzip']) {
    test(`${encoding}: the console's JavaScript and a JSON answer`, async () => {
      const js = await app.inject({ url: asset.url, headers: { 'accept-encoding': encoding } });
      assert.equal(js.statusCode, 200);
      assert.equal(js.headers['content-encoding'], encoding);
      assert.match(String(js.headers.vary), /accept-encoding/i);
      assert.ok(js.rawPayload.length < asset.bytes.length / 2, `${js.rawPayload.length} of ${asset.bytes.length} bytes`);
      assert.ok(decode(encoding, js.rawPayload).equals(asset.bytes));
      // Sent as built (brotli 11, gzip 9: console/scripts/precompress.mjs), not compressed again per request.
      assert.ok(js.rawPayload.equals(fs.readFileSync(path.join(DIST, `${asset.url}.${encoding === 'br' ? 'br' : 'gz'}`))), 'the precompressed copy');
      assert.equal((await app.inject({ url: `${asset.url}.${encoding === 'br' ? 'br' : 'gz'}` })).statusCode, 404, 'the copies are not files of their own');

      const org = await createOrg();
      for (let i = 0; i < 4; i++) await createAgent(org, { agent_name: `Agent ${i}`, system_prompt: 'Be brief and kind. '.repeat(20) });
      const plain = await app.inject({ url: '/api/agents', headers: asRole(org, 'user') });
      const json = await app.inject({ url: '/api/agents', headers: asRole(org, 'user', { 'accept-encoding': encoding }) });
      assert.equal(json.statusCode, 200);
      assert.equal(json.headers['content-encoding'], encoding);
      assert.match(String(json.headers['content-type']), /application\/json/);
      assert.deepEqual(JSON.parse(decode(encoding, json.rawPayload).toString()).data, plain.json().data);
    });
  }

  test('without Accept-Encoding, and for small bodies, nothing is compressed', async () => {
    const js = await app.inject({ url: asset.url });
    assert.equal(js.headers['content-encoding'], undefined);
    assert.ok(js.rawPayload.equals(asset.bytes));
    const health = await app.inject({ url: '/api/health', headers: { 'accept-encoding': 'br' } });
    assert.equal(health.headers['content-encoding'], undefined, `${health.rawPayload.length} bytes`);
  });

  test('Range requests are answered with the exact bytes, uncompressed: an asset and a recording', async () => {
    const part = await app.inject({ url: asset.url, headers: { 'accept-encoding': 'br, gzip', range: 'bytes=100-299' } });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-encoding'], undefined);
    assert.equal(part.headers['content-range'], `bytes 100-299/${asset.bytes.length}`);
    assert.ok(part.rawPayload.equals(asset.bytes.subarray(100, 300)));

    const org = await createOrg();
    const agent = await createAgent(org, { recording_enabled: true });
    const call = await createCall(org, agent.agent_id);
    assert.equal((await uploadRecording(org, call.call_sid, WAV)).statusCode, 200);
    const link = (await app.inject({ url: `/api/calls/${call.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data;
    const signed = new URL(link.url);
    const range = await app.inject({ url: `${signed.pathname}${signed.search}`, headers: { 'accept-encoding': 'br, gzip', range: 'bytes=1000-1999' } });
    assert.equal(range.statusCode, 206);
    assert.equal(range.headers['content-encoding'], undefined);
    assert.ok(range.rawPayload.equals(WAV.subarray(1000, 2000)));
    const whole = await app.inject({ url: `/api/calls/${call.call_sid}/recording/download`, headers: asRole(org, 'user', { 'accept-encoding': 'br, gzip' }) });
    assert.equal(whole.headers['content-encoding'], undefined, 'audio is not compressed again');
    assert.ok(whole.rawPayload.equals(WAV));
  });

  test('/metrics is still scraped, compressed when the scraper asks', async () => {
    const res = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer scrape-token-1234', 'accept-encoding': 'gzip' } });
    assert.equal(res.statusCode, 200);
    const text = res.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(res.rawPayload).toString() : res.body;
    assert.match(text, /^# HELP /m);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
  });
});
