import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall } from './helpers/calls.ts';

/** A raw client: what it sends and when is the test's, and it reports what came back and when the server closed. */
function rawClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => {
    const started = Date.now();
    socket.once('close', () => resolve(Date.now() - started));
  });
  return { socket, closed, received: () => received };
}

const within = <T>(ms: number, promise: Promise<T>, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} not within ${ms} ms`)), ms).unref())]);

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('slow clients cannot hold the server', () => {
  let app: FastifyInstance;
  let port: number;
  let org: TestOrg;
  before(async () => {
    const { tmpDir } = await testEnv();
    // Small limits so the test runs in seconds: 1 s for headers and for a pause or an ordinary body, 4 KB/s for uploads.
    app = await buildTestApp(testConfig(tmpDir, { HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_BODY_TIMEOUT_SECONDS: '1', UPLOAD_MIN_BYTES_PER_SECOND: '4096' }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as net.AddressInfo).port;
    org = await createOrg();
  });
  after(() => app?.close());

  const head = (method: string, path: string, headers: Record<string, string | number>) =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries({ ...asRole(org, 'admin'), ...headers }).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;

  test('headers that never finish: answered 408 {detail, code} and closed at the headers timeout', async () => {
    const client = rawClient(port);
    client.socket.write('GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    const ms = await within(5_000, client.closed, 'closing a connection with unfinished headers');
    assert.ok(ms >= 900, `closed after ${ms} ms`);
    assert.match(client.received(), /^HTTP\/1\.1 408 /);
    const body = JSON.parse(client.received().split('\r\n\r\n')[1]!);
    assert.deepEqual(body, { detail: body.detail, code: 'request_timeout' });
  });

  test('an ordinary body trickled a byte at a time (each pause shorter than the limit) is cut at the body timeout', async () => {
    const client = rawClient(port);
    const payload = JSON.stringify({ agent_name: 'Trickle' });
    client.socket.write(head('POST', '/api/agents', { 'content-type': 'application/json', 'content-length': payload.length + 200 }));
    let sent = 0;
    const trickle = setInterval(() => { if (!client.socket.destroyed) client.socket.write(payload[sent++ % payload.length]!); }, 200);
    try {
      const ms = await within(5_000, client.closed, 'closing a trickling connection');
      assert.ok(ms >= 900 && ms < 4_000, `closed after ${ms} ms`);
    } finally {
      clearInterval(trickle);
    }
  });

  test('a large upload that stops sending is cut once it has paused for the body timeout', async () => {
    const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
    const client = rawClient(port);
    client.socket.write(head('PUT', `/api/calls/${call.call_sid}/recording`, { 'content-type': 'audio/wav', 'content-length': 1_000_000 }));
    client.socket.write(toneWav(0.5, 440)); // 8 KB, then nothing
    const ms = await within(5_000, client.closed, 'closing a stalled upload');
    assert.ok(ms >= 900, `closed after ${ms} ms`);
  });

  test('a slow but steady upload (above the minimum rate, longer than the body timeout) is stored', async () => {
    const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
    const audio = toneWav(1, 440); // 16 KB, sent at about 8 KB/s: over two seconds
    const client = rawClient(port);
    client.socket.write(head('PUT', `/api/calls/${call.call_sid}/recording`, { 'content-type': 'audio/wav', 'content-length': audio.length, connection: 'close' }));
    for (let offset = 0; offset < audio.length; offset += 2048) {
      client.socket.write(audio.subarray(offset, offset + 2048));
      await tick(250);
    }
    await within(10_000, client.closed, 'the answer');
    assert.match(client.received(), /^HTTP\/1\.1 200 /, client.received().slice(0, 300));
    assert.equal(JSON.parse(client.received().split('\r\n\r\n')[1]!).data.recording_bytes, audio.length);
  });

  test('a body sent through app.inject (no connection) leaves no watchdog behind to fail later', async () => {
    const thrown: unknown[] = [];
    const record = (error: unknown) => thrown.push(error);
    process.on('uncaughtException', record);
    try {
      const res = await app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin'), payload: { agent_name: 'Injected' } });
      assert.equal(res.statusCode, 200, res.body);
      // Past the 1 s body timeout and a check of the watchdog: a timer left behind would have fired.
      await tick(1_600);
    } finally {
      process.off('uncaughtException', record);
    }
    assert.deepEqual(thrown.map(String), []);
  });
});

describe('errors raised before routing have the documented body', () => {
  let app: FastifyInstance;
  let port: number;
  before(async () => {
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir));
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as net.AddressInfo).port;
  });
  after(() => app?.close());

  async function exchange(request: string): Promise<{ status: number; body: { detail: string; code: string } }> {
    const client = rawClient(port);
    client.socket.write(request);
    await within(5_000, client.closed.catch(() => 0), 'the answer');
    const [head, body] = client.received().split('\r\n\r\n');
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)?.[1]), body: JSON.parse(body!) };
  }

  for (const [name, request, status, code] of [
    ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n', 400, 'bad_request'],
    ['an undecodable path (%ff)', 'GET /api/agents/%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400, 'invalid_url'],
    ['a path parameter past the limit', `GET /api/agents/${'a'.repeat(300)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 414, 'uri_too_long'],
    ['headers past the size limit', `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
  ] as const) {
    test(`${name}: ${status} ${code}`, async () => {
      const { status: got, body } = await exchange(request);
      assert.equal(got, status);
      assert.equal(body.code, code);
      assert.equal(typeof body.detail, 'string');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'detail']);
    });
  }
});
