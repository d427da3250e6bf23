import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { createAgent, createOrg, keyHeaders, type TestOrg, uniqueEmail, uniquePhoneNumber } from './helpers/fixtures.ts';
import { createCall } from './helpers/calls.ts';

/*
 * A schema-driven fuzz of every operation of the OpenAPI document: malformed values for every path
 * parameter, query value and body field (NUL, lone surrogates, non-finite and huge numbers, wrong
 * types, very long strings, dates out of range, cursors that decode to nonsense), sent with an admin
 * key; the knowledge base's upload also gets malformed multipart bodies. No answer may be a 5xx,
 * and every error has the documented body {detail, code} (or, for the checkout's pages, the HTML
 * page the document declares). Fixed seed, so a failure reproduces; about 7,000 requests.
 */

const RUNS_PER_OPERATION = 120;
const SEED = 20261122;

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const nastyString = fc.oneof(
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', 'x'.repeat(20_000), '%ff', '../../etc/passwd', "'; DROP TABLE calls; --", '<script>x</script>',
    '9999-12-31', '+275760-09-13T00:00:00.000Z', '-271821-04-20T00:00:00.000Z', '0000-00-00', '2026-02-30', 'Infinity', 'NaN', '1e999', '-1',
    'null', 'true', '[]', '{}', 'http://a:99999/', 'http://[::1', 'http://%zz/', '+1', '+12345678901234567890', 'Europe/Nowhere', 'agent_zzz'),
  fc.tuple(fc.string({ maxLength: 8 }), loneSurrogate, fc.string({ maxLength: 8 })).map(([a, s, b]) => a + s + b),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);
const nastyNumber = fc.oneof(
  fc.constantFrom(0, -1, 1.5, -0.5, 1e308, -1e308, 2 ** 53 + 1, 'Infinity', '-Infinity', 'NaN', '1e999', '', 'x', null),
  fc.double(),
  fc.integer(),
);
const cursor = fc.oneof(
  fc.constantFrom(
    b64(['+275760-09-13T00:00:00.000Z', 'x']), b64(['-271821-04-20T00:00:00.000Z', 'x']), b64(['10000-01-01T00:00:00Z', 'x']),
    b64([1.5, 'x']), b64([1e300, 'x']), b64([-1, 'x']), b64(['a\u0000', 'x']), b64(['x', 'a\u0000']), b64([{}, 'x']), b64(['x', 5]),
    b64('not json'), b64([]), b64(null), '!!!', 'x'.repeat(600),
  ),
  fc.string({ maxLength: 30 }).map(b64),
  fc.string({ maxLength: 30 }),
);
const anything: fc.Arbitrary<unknown> = fc.oneof(
  nastyString, nastyNumber, fc.constantFrom(null, true, false, [], [''], [null], {}, { a: '\u0000' }, { '\u0000': 1 }),
);

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

function typeOf(schema: Schema | undefined): string | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null');
  return schema.type ?? (schema.anyOf ? typeOf(schema.anyOf.find((s) => s.type !== 'null')) : undefined);
}

/** Values the schema accepts, so that a request reaches past validation with one malformed field. */
function valid(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const type = typeOf(schema);
  if (!schema || depth > 4) return fc.constant('x');
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf && !type) return fc.oneof(...schema.anyOf.map((s) => valid(s, depth + 1)));
  switch (type) {
    case 'object': {
      const properties = schema.properties ?? {};
      const arbitraries = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, valid(v, depth + 1)]));
      return fc.record(arbitraries, { requiredKeys: (schema.required ?? []).filter((k) => k in properties) });
    }
    case 'array': return fc.array(valid(schema.items, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'integer': return fc.integer({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 1000, 1_000_000) });
    case 'number': return fc.double({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 1000, 1_000_000), noNaN: true, noDefaultInfinity: true });
    case 'boolean': return fc.boolean();
    case 'string': {
      if (schema.format === 'date-time') return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.format === 'email') return fc.emailAddress();
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((v) => v.length >= (schema.minLength ?? 0) && v.length <= (schema.maxLength ?? 200));
      return fc.string({ minLength: Math.max(schema.minLength ?? 0, 1), maxLength: Math.min(schema.maxLength ?? 30, 30) });
    }
    default: return fc.constant(null);
  }
}

/** Replaces the n-th leaf (counting depth first) of a value with `bad`; the value itself when it has no leaves. */
function replaceLeaf(value: unknown, n: number, bad: unknown): unknown {
  const leaves: Array<(v: unknown) => void> = [];
  const visit = (node: unknown, set: (v: unknown) => void) => {
    if (Array.isArray(node) && node.length) node.forEach((item, i) => visit(item, (v) => { node[i] = v; }));
    else if (node !== null && typeof node === 'object' && Object.keys(node).length) for (const key of Object.keys(node)) visit((node as Record<string, unknown>)[key], (v) => { (node as Record<string, unknown>)[key] = v; });
    else leaves.push(set);
  };
  let root = structuredClone(value);
  visit(root, (v) => { root = v; });
  leaves[n % leaves.length]!(bad);
  return root;
}

/** A value the schema accepts with one part of it malformed (or, sometimes, malformed whole). */
function malformed(schema: Schema | undefined): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.tuple(valid(schema), fc.nat(), anything).map(([value, n, bad]) => replaceLeaf(value, n, bad)) },
    { weight: 1, arbitrary: anything },
  );
}

const queryValue = (name: string, schema: Schema | undefined) =>
  (name === 'cursor' ? cursor : malformed(schema)).map((v) => (v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)));

/**
 * The bytes a client can send for a string: UTF-8, except that a lone surrogate (which UTF-8 cannot
 * encode, so Buffer.from and encodeURIComponent would replace or refuse it) becomes its WTF-8 bytes.
 */
function clientBytes(value: string): Buffer {
  const chunks: Buffer[] = [];
  for (const char of value) {
    const unit = char.charCodeAt(0);
    chunks.push(char.length === 1 && unit >= 0xd800 && unit <= 0xdfff
      ? Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)])
      : Buffer.from(char));
  }
  return Buffer.concat(chunks);
}

const UNRESERVED = /[A-Za-z0-9\-_.~]/;
const percentEncode = (value: string) =>
  [...clientBytes(value)].map((b) => (UNRESERVED.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

/** A multipart/form-data body that may be malformed: wrong or missing boundary, cut short, odd fields and file names. */
const multipartPart = fc.record({
  name: fc.oneof(fc.constantFrom('name', 'file', 'agent_id', 'text'), nastyString),
  value: fc.oneof(fc.constantFrom('fuzz doc', 'plain text to index'), nastyString),
  filename: fc.option(fc.oneof(fc.constantFrom('a.txt', 'notes.md', 'doc.pdf', ''), nastyString), { nil: undefined }),
});
const multipartRequest = fc.record({
  parts: fc.array(multipartPart, { maxLength: 4 }),
  declared: fc.constantFrom('fuzzBoundary', '"fuzzBoundary"', 'other', '', undefined),
  cutAt: fc.option(fc.nat(), { nil: undefined }),
}).map(({ parts, declared, cutAt }) => {
  const text = parts.map((p) => `--fuzzBoundary\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"\r\nContent-Type: text/plain`}\r\n\r\n${p.value}\r\n`).join('') + '--fuzzBoundary--\r\n';
  const bytes = clientBytes(text);
  return {
    contentType: `multipart/form-data${declared === undefined ? '' : `; boundary=${declared}`}`,
    payload: cutAt === undefined ? bytes : bytes.subarray(0, cutAt % (bytes.length + 1)),
  };
});

function isErrorBody(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { detail?: unknown; code?: unknown };
    return typeof parsed.detail === 'string' && typeof parsed.code === 'string';
  } catch {
    return false;
  }
}

const RAW_JSON = ['{"a":', 'null', '[1,2', '\u0000', 'not json', '{"__proto__":{"x":1}}', '{"name":"a\\u0000b"}', '{"name":"\\ud800"}'];

/** The document with every `$ref` to a component replaced by the component (bodies are named components). */
function dereference(node: unknown, components: Record<string, unknown>, depth = 0): unknown {
  if (depth > 20 || node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((item) => dereference(item, components, depth + 1));
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    return dereference(components[ref.slice('#/components/schemas/'.length)], components, depth + 1);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, dereference(value, components, depth + 1)]));
}

interface Operation {
  parameters?: Array<{ in: string; name: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

describe('fuzz: malformed input never becomes a 5xx', () => {
  let app: FastifyInstance;
  let org: TestOrg;
  let ids: Record<string, string[]>;
  let testedTool: string;
  before(async () => {
    const { tmpDir } = await testEnv();
    // Every route runs, those that call out to a provider included: the carrier (integration validate,
    // carrier_a number imports) and the fuzz tool's webhook (tool test) are a closed port on loopback,
    // which refuses at once; SIP trunks are the local backend. Nothing waits on the network.
    app = await buildTestApp(testConfig(tmpDir, { CARRIER_A_API_URL: 'http://127.0.0.1:9', CARRIER_A_TIMEOUT_MS: '200', ALLOWED_NETWORKS: '127.0.0.1/32' }));
    org = await createOrg();
    const agentId = (await createAgent(org, { recording_enabled: true })).agent_id;
    const call = await createCall(org, agentId);
    const headers = keyHeaders(org, org.keys.admin);
    const create = async (url: string, payload: Record<string, unknown>) => {
      const res = await app.inject({ method: 'POST', url, headers, payload });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      return res.json();
    };
    const tool = (await create('/api/tools', { tool_name: 'fuzz_tool', tool_description: 'd', webhook_url: 'http://127.0.0.1:9/hook', http_method: 'POST' })).data;
    // The tool test calls out: it gets a tool of its own, whose webhook no fuzzed PATCH moves to a name to resolve.
    testedTool = (await create('/api/tools', { tool_name: 'fuzz_tested_tool', tool_description: 'd', webhook_url: 'http://127.0.0.1:9/hook', http_method: 'GET', timeout_seconds: 1 })).data.tool_id;
    const doc = (await create('/api/knowledge-base', { name: 'fuzz doc', text: 'some text to index' })).data;
    const invitation = (await create('/api/auth/organizations/invitations', { email: uniqueEmail('fuzz'), role: 'user' })).data;
    const key = (await create('/api/api-keys', { name: 'fuzz key', role: 'user' })).data;
    const integration = (await create('/api/integrations', { name: 'fuzz carrier', provider: 'carrier_a', credentials: { account_sid: 'AC00000000000000000000000000000000', auth_token: 'token' } })).data;
    const number = (await create('/api/phone-numbers', { phone_number: uniquePhoneNumber(), provider: 'sip', sip_trunk_name: 'Fuzz', sip_username: 'fuzz', sip_password: 'fuzz-password', inbound_room_name: 'call-' })).data;
    const checkout = await create('/api/billing/credits/purchase', { amount: 10 });
    // Real ids beside malformed ones, so validation past the lookup is reached too.
    ids = {
      agent_id: [agentId], call_sid: [call.call_sid], tool_id: [tool.tool_id], documentation_id: [doc.documentation_id],
      invite_id: [invitation.invite_id], user_id: [org.userId], key_id: [key.key_id], integration_id: [integration.integration_id],
      phone_number_id: [number.phone_number_id], session_id: [checkout.session_id],
    };
  });
  after(() => app?.close());

  test('every operation of the OpenAPI document', async () => {
    const openapi = app.swagger() as { paths: unknown; components?: { schemas?: Record<string, unknown> } };
    const doc = { paths: dereference(openapi.paths, openapi.components?.schemas ?? {}) as Record<string, Record<string, Operation>> };
    const failures: string[] = [];
    let operations = 0;
    let requests = 0;
    let writes = 0;
    const statuses = new Map<number, number>();
    // Deletes last, so the operations before them still find the fixtures they would delete.
    const all = Object.entries(doc.paths)
      .filter(([path]) => path !== '/api/docs' && path !== '/api/openapi.json')
      .flatMap(([path, pathItem]) => Object.entries(pathItem).map(([method, op]) => ({ path, method, op })))
      .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    for (const { path, method, op } of all) {
      operations += 1;
      const realIds = (name: string) => (path === '/api/tools/{tool_id}/test' ? [testedTool] : ids[name] ?? []);
      const params = op.parameters ?? [];
      const pathParams = params.filter((p) => p.in === 'path');
      const queryParams = params.filter((p) => p.in === 'query');
      const content = op.requestBody?.content ?? {};
      const jsonBody = content['application/json']?.schema;
      // The local checkout's pages are for people: their refusals are pages too, as the document says.
      const htmlStatuses = new Set(Object.entries(op.responses ?? {}).filter(([, r]) => r.content?.['text/html']).map(([status]) => Number(status)));
      const contentType = method === 'put' ? 'audio/wav' : 'application/json';
      const json = fc.oneof(
        { weight: 4, arbitrary: jsonBody ? malformed(jsonBody).map((body) => JSON.stringify(body)) : fc.constant(undefined) },
        { weight: 1, arbitrary: jsonBody ? valid(jsonBody).map((body) => JSON.stringify(body)) : fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom(...RAW_JSON) },
      ).map((payload) => ({ contentType, payload }));
      const request = fc.record({
        path: fc.record(Object.fromEntries(pathParams.map((p) => [p.name, fc.oneof(fc.constantFrom(...realIds(p.name), 'x'), nastyString)]))),
        query: fc.oneof(
          fc.record(Object.fromEntries(queryParams.map((p) => [p.name, queryValue(p.name, p.schema)])), { requiredKeys: [] }),
          fc.record(Object.fromEntries(queryParams.map((p) => [p.name, valid(p.schema).map(String)])), { requiredKeys: [] }),
        ),
        body: content['multipart/form-data'] ? fc.oneof(json, multipartRequest) : json,
      });
      // The property records failures and carries on, so one operation's failure does not hide the
      // rest; anything thrown (by the test itself) fails the test instead of skipping the operation.
      await fc.assert(fc.asyncProperty(request, async (input) => {
        let url = path;
        for (const [name, value] of Object.entries(input.path)) url = url.replace(`{${name}}`, percentEncode(String(value)));
        const query = Object.entries(input.query as Record<string, string>).map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&');
        const { payload } = input.body;
        const headers = { ...keyHeaders(org, org.keys.admin), ...(payload === undefined ? {} : { 'content-type': input.body.contentType }) };
        const res = await app.inject({ method: method.toUpperCase() as 'GET', url: query ? `${url}?${query}` : url, headers, payload });
        requests += 1;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 200 && method !== 'get') writes += 1;
        const problem = res.statusCode >= 500 ? `${res.statusCode}` : res.statusCode >= 400 && !isErrorBody(res.body) && !(htmlStatuses.has(res.statusCode) && String(res.headers['content-type']).startsWith('text/html')) ? 'error body without {detail, code}' : undefined;
        if (problem) failures.push(`${method.toUpperCase()} ${url.slice(0, 200)}${query ? `?${query.slice(0, 200)}` : ''} ${String(payload).slice(0, 200)} → ${problem}: ${res.body.slice(0, 200)}`);
      }), { seed: SEED, numRuns: RUNS_PER_OPERATION });
    }
    assert.deepEqual(failures.slice(0, 30), [], `${failures.length} of ${requests} requests failed`);
    assert.ok(operations >= 55, `${operations} operations`);
    assert.equal(requests, operations * RUNS_PER_OPERATION);
    // Some requests get through validation to the services (real ids, valid-looking values): not only 400s.
    assert.ok((statuses.get(200) ?? 0) > 50, JSON.stringify([...statuses]));
    assert.ok((statuses.get(404) ?? 0) > 500, JSON.stringify([...statuses]));
    // Bodies generated from the document's schemas are accepted too (so its components were read).
    assert.ok(writes > 100, `${writes} successful writes`);
  });
});
