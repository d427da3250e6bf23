import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import S3rver from 's3rver';
import { S3ObjectStore } from '../src/adapters/storage/s3-object-store.ts';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg } from './helpers/fixtures.ts';
import { createCall } from './helpers/calls.ts';

/**
 * What a PUT can meet on its way to the store: the connection closed under it without an answer (what
 * a client gets when the store closes a kept-alive connection for idleness just as the request goes
 * out on it: "socket hang up"), a 503 SlowDown, or a 403 that no attempt will change.
 */
type Fault = 'hang-up' | 'slow-down' | 'forbidden';
const ANSWERS = {
  'slow-down': [503, 'SlowDown', 'Please reduce your request rate.'],
  forbidden: [403, 'AccessDenied', 'Access Denied'],
} as const;

/** s3rver behind a proxy that meets the next PUTs with the faults queued, and passes everything else on. */
async function faultyStore(dir: string) {
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'switchboard-retry', configs: [] }] });
  const { port } = await s3.run();
  const faults: Fault[] = [];
  /** Every PUT that reached the proxy: the fault it met, or `passed`. */
  const puts: string[] = [];
  const proxy = http.createServer((req, res) => {
    const fault = req.method === 'PUT' ? faults.shift() : undefined;
    if (req.method === 'PUT') puts.push(fault ?? 'passed');
    if (fault === 'hang-up') return req.socket.destroy();
    if (fault) {
      const [status, code, message] = ANSWERS[fault];
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`));
      return;
    }
    const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return {
    endpoint, faults, puts,
    async close() {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      await s3.close();
    },
  };
}

describe('S3 store: a PUT of a file that meets a transient failure is sent again', () => {
  let faulty: Awaited<ReturnType<typeof faultyStore>>;
  let store: S3ObjectStore;
  let app: FastifyInstance;
  let file: string;
  const body = toneWav(0.4, 520);
  before(async () => {
    const { tmpDir } = await testEnv();
    faulty = await faultyStore(path.join(tmpDir, 's3rver-put-retry'));
    const config = testConfig(tmpDir, {
      STORAGE_BACKEND: 's3', S3_BUCKET: 'switchboard-retry', S3_ENDPOINT: faulty.endpoint, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    store = new S3ObjectStore(config.storage as never);
    app = await buildTestApp(config, { store });
    file = path.join(tmpDir, 'put-retry-body.wav');
    fs.writeFileSync(file, body);
  });
  after(async () => {
    await app?.close();
    await faulty?.close();
  });

  /** The faults the next PUTs meet, none left over from an earlier test. */
  const arm = (...faults: Fault[]) => {
    faulty.puts.length = 0;
    faulty.faults.splice(0, Infinity, ...faults);
  };
  const stored = async (key: string) => {
    const res = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: key }));
    return Buffer.from(await res.Body!.transformToByteArray());
  };
  const keys = async (prefix: string) => ((await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);

  test('a hang-up, then a 503: the third attempt stores the file whole', async () => {
    arm('hang-up', 'slow-down');
    const result = await store.putFile('retry/whole.wav', file, 'audio/wav');
    assert.equal(result.size, body.length);
    assert.deepEqual(faulty.puts, ['hang-up', 'slow-down', 'passed']);
    assert.ok((await stored('retry/whole.wav')).equals(body));
  });

  test('no further attempt after a refusal (403), nor beyond the three attempts of every command', async () => {
    arm('forbidden');
    await assert.rejects(store.putFile('retry/refused.wav', file, 'audio/wav'), { name: 'AccessDenied' });
    assert.deepEqual(faulty.puts, ['forbidden']);

    arm('hang-up', 'hang-up', 'hang-up', 'hang-up');
    await assert.rejects(store.putFile('retry/lost.wav', file, 'audio/wav'), { code: 'ECONNRESET' });
    assert.deepEqual(faulty.puts, ['hang-up', 'hang-up', 'hang-up']);
    arm();
    assert.deepEqual(await keys('retry/refused.wav'), []);
    assert.deepEqual(await keys('retry/lost.wav'), []);
  });

  test('a recording whose PUT hangs up once is stored: 200, the upload byte for byte, one object', async () => {
    const org = await createOrg();
    const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
    arm('hang-up');
    const res = await app.inject({
      method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers: asRole(org, 'agent_manager', { 'content-type': 'audio/wav' }), payload: body,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(faulty.puts, ['hang-up', 'passed']);
    assert.equal(res.json().data.recording_bytes, body.length);
    const download = await app.inject({ url: `/api/calls/${call.call_sid}/recording/download`, headers: asRole(org, 'user') });
    assert.equal(download.statusCode, 200);
    assert.ok(download.rawPayload.equals(body));
    assert.equal((await keys(`${org.orgId}/recordings/${call.call_sid}/`)).length, 1);
  });
});
