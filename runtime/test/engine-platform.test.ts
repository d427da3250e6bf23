/**
 * The platform over HTTP (through @switchboard/sdk) against a stand-in API on 127.0.0.1 (paths, headers and bodies of
 * extensions.md §10 and decisions.md §3), and the sentence splitter the engine speaks with.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';
import { SwitchboardError } from '@switchboard/sdk';
import { HttpCallPlatform, organizationOfToken } from '../src/platform/http-platform.ts';
import { SentenceSplitter, substituteVariables } from '../src/engine/text.ts';

test('HttpCallPlatform speaks the API with the call token', async () => {
  const seen: { method: string; url: string; auth: string; org: string; type: string; body: Buffer }[] = [];
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      seen.push({
        method: request.method!, url: request.url!, auth: String(request.headers.authorization), org: String(request.headers['x-organization-id']),
        type: String(request.headers['content-type']), body: Buffer.concat(parts),
      });
      const send = (status: number, body: unknown) => { response.writeHead(status, { 'content-type': 'application/json' }); response.end(JSON.stringify(body)); };
      if (request.url === '/api/runtime/calls/call_x1') return send(200, { success: true, data: { call: { call_sid: 'call_x1' }, tools: [] } });
      if (request.url === '/api/runtime/calls/call_x1/tools/book') return send(200, { success: true, data: { status: 201, body: { ok: true }, duration_ms: 40 } });
      if (request.url === '/api/knowledge-base/search') {
        return send(200, { success: true, data: Array.from({ length: 7 }, (_, i) => ({ documentation_id: `doc_${i}`, text: `t${i}`, page: null, score: 1 - i / 10 })) });
      }
      if (request.url === '/api/calls/call_x1/recording') return send(200, { success: true, data: {} });
      if (request.method === 'PATCH') return send(409, { detail: 'The call has ended', code: 'call_ended' });
      send(404, { detail: 'Not found', code: 'not_found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const platform = new HttpCallPlatform({ apiBaseUrl: `http://127.0.0.1:${port}/`, callSid: 'call_x1', token: 'tok', organizationId: 'org_1' });

  assert.deepEqual((await platform.load()).call, { call_sid: 'call_x1' });
  assert.deepEqual(await platform.callTool('book', { day: 'monday' }), { status: 201, body: { ok: true }, duration_ms: 40 });
  const hits = await platform.searchKnowledge('hours');
  assert.equal(hits.length, 5, 'top 5');
  await platform.uploadRecording(Buffer.from('RIFFdata'));
  await assert.rejects(platform.report({ status: 'in_progress' }), (error: unknown) =>
    error instanceof SwitchboardError && error.status === 409 && error.code === 'call_ended');

  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), [
    'GET /api/runtime/calls/call_x1',
    'POST /api/runtime/calls/call_x1/tools/book',
    'POST /api/knowledge-base/search',
    'PUT /api/calls/call_x1/recording',
    'PATCH /api/calls/call_x1',
  ]);
  assert.ok(seen.every((s) => s.auth === 'Bearer tok' && s.org === 'org_1'));
  assert.deepEqual(JSON.parse(seen[1]!.body.toString()), { arguments: { day: 'monday' } });
  assert.deepEqual(JSON.parse(seen[2]!.body.toString()), { query: 'hours', top_k: 5 });
  assert.equal(seen[3]!.type, 'audio/wav');
  assert.equal(seen[3]!.body.toString(), 'RIFFdata');
  assert.deepEqual(JSON.parse(seen[4]!.body.toString()), { status: 'in_progress' });
});

test('the organization is read from the call token', () => {
  const token = `x.${Buffer.from(JSON.stringify({ sub: 'call_1', organization_id: 'org_abc' })).toString('base64url')}.y`;
  assert.equal(organizationOfToken(token), 'org_abc');
  assert.equal(organizationOfToken('garbage'), null);
});

test('sentences split as the text streams, not after "Dr." or inside numbers', () => {
  const splitter = new SentenceSplitter();
  const out: string[] = [];
  for (const chunk of ['Hello', ' there! Dr', '. Smith sees you at 10', '.30 tomorrow', '. It costs $4.50. Ok', 'ay?', ' J. Doe too']) out.push(...splitter.push(chunk));
  out.push(...splitter.end());
  assert.deepEqual(out, ['Hello there!', 'Dr. Smith sees you at 10.30 tomorrow.', 'It costs $4.50.', 'Okay?', 'J. Doe too']);
  assert.equal(substituteVariables('Hi {{ name }}, {{unknown}}', { name: 'Ada' }), 'Hi Ada, {{unknown}}');
});
