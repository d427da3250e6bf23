import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { ContractChecker, contractViolations, type OpenApiDocument } from './helpers/contract.ts';
import { createOrg, keyHeaders } from './helpers/fixtures.ts';

/*
 * Issue 28 item 12: the document names every status an operation can answer and the headers every
 * answer carries, so a generated client or a validating proxy is never surprised. The statuses come
 * from decisions.md §2 (413 upload too large, 415 unsupported media type, 429 with Retry-After) and
 * extensions.md §6 (409 idempotency_key_reused / _in_use); the recording's headers from
 * platform-api.md §4.2.
 */

interface Header { $ref?: string; required?: boolean; schema?: { format?: string } }
interface Response { headers?: Record<string, Header>; content?: Record<string, { schema?: { $ref?: string } }> }
interface Operation {
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  security?: unknown[];
  requestBody?: { content: Record<string, { schema?: { $ref?: string; format?: string; type?: string } }> };
  responses: Record<string, Response>;
}
type Document = OpenApiDocument & {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { type?: string; properties?: Record<string, { type?: string; format?: string }>; required?: string[] }>; headers: Record<string, Header> };
};

async function documentOf(): Promise<Document> {
  const { app } = await testEnv();
  return (await app.inject({ url: '/api/openapi.json' })).json();
}

function operations(doc: Document): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]));
}

const resolve = (doc: Document, header: Header | undefined) => (header?.$ref ? doc.components.headers[header.$ref.split('/').pop()!] : header);
const isError = (response: Response | undefined) => response?.content?.['application/json']?.schema?.$ref === '#/components/schemas/Error';

describe('the OpenAPI document names every answer (issue 28, item 12)', () => {
  test('every operation documents 429 and 500; writes 413 and 415; path parameters 414; Idempotency-Key 409: all with the Error body', async () => {
    const doc = await documentOf();
    const missing: string[] = [];
    for (const [where, op] of operations(doc)) {
      const method = where.split(' ')[0]!;
      const expected = ['429', '500'];
      if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) expected.push('413', '415');
      if (where.includes('{')) expected.push('414');
      if (op.parameters?.some((p) => p.in === 'header' && p.name === 'idempotency-key')) expected.push('409');
      if (op.security) expected.push('401', '403');
      for (const status of expected) if (!isError(op.responses[status])) missing.push(`${where} ${status}`);
    }
    assert.deepEqual(missing, []);
  });

  test('X-Organization-Id is required wherever the server requires it (every operation taking a credential and the header)', async () => {
    const doc = await documentOf();
    const optional = operations(doc)
      .filter(([, op]) => op.parameters?.some((p) => p.in === 'header' && p.name === 'x-organization-id' && !p.required))
      .map(([where]) => where);
    assert.deepEqual(optional, []);
    // And it is required indeed: without it the server answers 400.
    const org = await createOrg();
    const { app } = await testEnv();
    const res = await app.inject({ url: '/api/agents', headers: { 'x-api-key': org.adminKey } });
    assert.equal(res.statusCode, 400);
  });

  test('every answer declares X-Request-Id and RateLimit-*; 429 requires Retry-After; idempotent writes declare Idempotent-Replayed', async () => {
    const doc = await documentOf();
    const missing: string[] = [];
    for (const [where, op] of operations(doc)) {
      const idempotent = op.parameters?.some((p) => p.name === 'idempotency-key');
      for (const [status, response] of Object.entries(op.responses)) {
        const names = ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
        if (status === '429') names.push('Retry-After');
        if (idempotent && Number(status) < 500) names.push('Idempotent-Replayed');
        for (const name of names) if (!resolve(doc, response.headers?.[name])) missing.push(`${where} ${status} ${name}`);
        if (status === '429' && !resolve(doc, response.headers?.['Retry-After'])?.required) missing.push(`${where} 429 Retry-After required`);
        if (status !== '400' && !resolve(doc, response.headers?.['RateLimit-Limit'])?.required) missing.push(`${where} ${status} RateLimit-Limit required`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test("the recording download declares its required Content-Disposition and Content-Length (platform-api.md §4.2)", async () => {
    const doc = await documentOf();
    const headers = doc.paths['/api/calls/{call_sid}/recording/download']!.get!.responses['200']!.headers!;
    assert.equal(resolve(doc, headers['Content-Disposition'])?.required, true);
    assert.equal(resolve(doc, headers['Content-Length'])?.required, true);
  });

  test('upload bodies are typed: binary recordings, multipart forms with a binary file', async () => {
    const doc = await documentOf();
    const component = (ref: string | undefined) => doc.components.schemas[String(ref).replace('#/components/schemas/', '')]!;
    const recording = doc.paths['/api/calls/{call_sid}/recording']!.put!.requestBody!.content;
    for (const type of ['audio/wav', 'audio/mpeg']) {
      const schema = component(recording[type]!.schema!.$ref) as { type?: string; format?: string };
      assert.deepEqual([schema.type, schema.format], ['string', 'binary'], type);
    }
    for (const [path, required] of [['/api/knowledge-base', ['name', 'file']], ['/api/campaigns/{campaign_id}/contacts', ['file']]] as const) {
      const form = component(doc.paths[path]!.post!.requestBody!.content['multipart/form-data']!.schema!.$ref);
      assert.equal(form.type, 'object', path);
      assert.equal(form.properties?.file?.format, 'binary', path);
      assert.deepEqual(form.required, [...required], path);
    }
  });
});

describe('the response validator over the suite traffic', () => {
  test('it reports an undocumented status, a body that breaks its schema and a missing required header', async () => {
    const checker = new ContractChecker(await documentOf());
    const headers = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r', 'ratelimit-limit': '1', 'ratelimit-remaining': '0', 'ratelimit-reset': '1' };
    const good = { method: 'GET', route: '/api/agents/:agent_id', status: 404, headers, body: JSON.stringify({ detail: 'Not found', code: 'not_found' }) };
    assert.deepEqual(checker.check(good), []);
    assert.match(checker.check({ ...good, status: 418 }).join(), /status not documented/);
    assert.match(checker.check({ ...good, body: JSON.stringify({ detail: 'no code' }) }).join(), /body breaks the schema/);
    assert.match(checker.check({ ...good, headers: { ...headers, 'x-request-id': undefined } }).join(), /X-Request-Id missing/);
    assert.match(checker.check({ ...good, status: 429 }).join(), /Retry-After missing/);
  });

  test('the layers\' own answers (414, 413, 415, 409 idempotency, 429) are documented as sent', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const headers = keyHeaders(org, org.adminKey);
    const before = contractViolations.length;
    const answers = [
      await app.inject({ url: `/api/agents/${'a'.repeat(300)}`, headers }),
      await app.inject({ method: 'POST', url: '/api/agents', headers: { ...headers, 'content-type': 'application/json' }, payload: `{"agent_name":"${'x'.repeat(2 * 1024 * 1024)}"}` }),
      await app.inject({ method: 'DELETE', url: '/api/agents/agent_none', headers: { ...headers, 'content-type': 'application/xml' }, payload: '<a/>' }),
      await app.inject({ method: 'POST', url: '/api/tools', headers: { ...headers, 'idempotency-key': 'contract-1' }, payload: { tool_name: 'a' } }),
      await app.inject({ method: 'POST', url: '/api/tools', headers: { ...headers, 'idempotency-key': 'contract-1' }, payload: { tool_name: 'b' } }),
    ];
    assert.deepEqual(answers.map((r) => r.statusCode), [414, 413, 415, 400, 409]);
    assert.equal(answers[4]!.json().code, 'idempotency_key_reused');
    assert.deepEqual(contractViolations.slice(before), []);
  });

  test('no answer of this run so far broke the document (the global teardown checks the whole run)', () => {
    assert.deepEqual([...new Set(contractViolations)], []);
  });
});
