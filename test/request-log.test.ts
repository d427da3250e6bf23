import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { buildApp } from '../src/app.ts';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { createLogger } from '../src/core/logger.ts';
import { buildServices } from '../src/services.ts';
import { testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg } from './helpers/fixtures.ts';
import { createCall, uploadRecording } from './helpers/calls.ts';

/** Issue 28 item 4: the info log holds no usable link and no search term. */
describe('request log lines', () => {
  test('a signed recording link and a call search are logged as route patterns with the signature and the terms redacted', async () => {
    const { database, tmpDir, queue } = await testEnv();
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _e, done) { lines.push(String(chunk)); done(); } });
    // The server's own logger at the default level, written to this stream instead of standard output.
    const services = await buildServices(testConfig(tmpDir, { LOG_LEVEL: 'info' }), database, { queue, log: createLogger('info', stream) });
    const app = await buildApp(services, { closeServices: true });
    try {
      const org = await createOrg();
      const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
      assert.equal((await uploadRecording(org, call.call_sid, toneWav(0.5, 440), 'audio/wav')).statusCode, 200);
      const link = new URL((await app.inject({ url: `/api/calls/${call.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data.url);
      const signature = link.searchParams.get('sig')!;
      assert.ok(signature.length >= 16);
      const download = await app.inject({ url: `${link.pathname}${link.search}` });
      assert.equal(download.statusCode, 200, 'the link works: its signature is a credential');
      const search = await app.inject({ url: '/api/calls?q=kidney-transplant&metadata.patient=jane-doe-4711&limit=5', headers: asRole(org, 'user') });
      assert.equal(search.statusCode, 200, search.body);

      const text = lines.join('');
      for (const secret of [signature, encodeURIComponent(signature), 'kidney-transplant', 'jane-doe-4711']) {
        assert.ok(!text.includes(secret), `the log holds ${secret}`);
      }
      const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.req);
      // One line per request (issue 33: Fastify's two lines cost throughput), with its status and time.
      assert.deepEqual(requestLines.map((l) => l.msg), Array(3).fill('request completed'), 'three requests, three lines');
      assert.deepEqual(requestLines.map((l) => l.res.statusCode), [200, 200, 200]);
      assert.ok(requestLines.every((l) => typeof l.responseTime === 'number' && typeof l.reqId === 'string'));
      const urls = requestLines.map((l) => l.req.url as string);
      const expires = link.searchParams.get('expires');
      // The route pattern, not the call's id; harmless values (organization, expiry, page size) stay.
      assert.ok(urls.includes(`/api/recordings/:call_sid?org=${org.orgId}&expires=${expires}&sig=[REDACTED]`), urls.join('\n'));
      assert.ok(urls.includes('/api/calls/:call_sid/recording/stream'), urls.join('\n'));
      assert.ok(urls.includes('/api/calls?q=[REDACTED]&metadata.patient=[REDACTED]&limit=5'), urls.join('\n'));
      assert.ok(!urls.some((u) => u.includes(call.call_sid)), 'ids in paths are not logged');
    } finally {
      await app.close();
    }
  });
});
