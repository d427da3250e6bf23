import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { createAgent, createOrg, keyHeaders, type TestOrg, uniqueEmail } from './helpers/fixtures.ts';
import { createCall } from './helpers/calls.ts';

/*
 * A schema-driven fuzz of every operation of the OpenAPI document: malformed values for every path
 * parameter, query value and body field (NUL, lone surrogates, non-finite and huge numbers, wrong
 * types, very long strings, dates out of range, cursors that decode to nonsense), sent with an admin
 * key. No answer may be a 5xx, and every error has the documented body {detail, code}.
 * Fixed seed, so a failure reproduces; 100 requests per operation.
 */

interface Operation {
  parameters?: Array<{ in: string; name: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

const RUNS_PER_OPERATION = 100;
const SEED = 20261122;

const LONE_SURROGATE = /([\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff])/;

/**
 * encodeURIComponent throws on a lone surrogate (and ended the whole property run of the operation
 * after one request); a hostile client can still send one, as its three WTF-8 bytes.
 */
function encodePathValue(value: string): string {
  return value.split(LONE_SURROGATE).map((part) => {
    if (!LONE_SURROGATE.test(part)) return encodeURIComponent(part);
    const unit = part.charCodeAt(0);
    return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
  }).join('');
}

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

describe('fuzz: malformed input never becomes a 5xx', () => {
  let app: FastifyInstance;
  let org: TestOrg;
  let ids: Record<string, string[]>;
  before(async () => {
    const { tmpDir } = await testEnv();
    // Providers answer nothing here (a closed port on loopback), so no request waits on the network.
    app = await buildTestApp(testConfig(tmpDir, { CARRIER_A_API_URL: 'http://127.0.0.1:9', CARRIER_A_TIMEOUT_MS: '200' }));
    org = await createOrg();
    const agentId = (await createAgent(org, { recording_enabled: true })).agent_id;
    const call = await createCall(org, agentId);
    const headers = keyHeaders(org, org.keys.admin);
    const tool = (await app.inject({ method: 'POST', url: '/api/tools', headers, payload: { tool_name: 'fuzz_tool', tool_description: 'd', webhook_url: 'https://example.test/hook', http_method: 'POST' } })).json().data;
    const doc = (await app.inject({ method: 'POST', url: '/api/knowledge-base', headers, payload: { name: 'fuzz doc', text: 'some text to index' } })).json().data;
    const invitation = (await app.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers, payload: { email: uniqueEmail('fuzz'), role: 'user' } })).json().data;
    // Real ids beside malformed ones, so validation past the lookup is reached too.
    ids = {
      agent_id: [agentId], call_sid: [call.call_sid], tool_id: [tool.tool_id], documentation_id: [doc.documentation_id],
      invite_id: [invitation.invite_id], user_id: [org.userId], key_id: [], integration_id: [], phone_number_id: [], session_id: [],
    };
  });
  after(() => app?.close());

  test('every operation of the OpenAPI document', async () => {
    const doc = app.swagger() as { paths: Record<string, Record<string, Operation>> };
    const failures: string[] = [];
    let requests = 0;
    let operationsFuzzed = 0;
    const statuses = new Map<number, number>();
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (path === '/api/docs' || path === '/api/openapi.json') continue;
      for (const [method, op] of Object.entries(operations)) {
        const params = op.parameters ?? [];
        const pathParams = params.filter((p) => p.in === 'path');
        const queryParams = params.filter((p) => p.in === 'query');
        const jsonBody = op.requestBody?.content?.['application/json']?.schema;
        const request = fc.record({
          path: fc.record(Object.fromEntries(pathParams.map((p) => [p.name, fc.oneof(fc.constantFrom(...(ids[p.name] ?? []), 'x'), nastyString)]))),
          query: fc.oneof(
            fc.record(Object.fromEntries(queryParams.map((p) => [p.name, queryValue(p.name, p.schema)])), { requiredKeys: [] }),
            fc.record(Object.fromEntries(queryParams.map((p) => [p.name, valid(p.schema).map(String)])), { requiredKeys: [] }),
          ),
          body: jsonBody ? malformed(jsonBody) : fc.constant(undefined),
          raw: fc.oneof(fc.constant(undefined), fc.constantFrom('{"a":', 'null', '[1,2', '\u0000', 'not json', '{"__proto__":{"x":1}}')),
        });
        const recorded = failures.length;
        operationsFuzzed += 1;
        await fc.assert(fc.asyncProperty(request, async (input) => {
          let url = path;
          for (const [name, value] of Object.entries(input.path)) url = url.replace(`{${name}}`, encodePathValue(String(value)));
          const query = new URLSearchParams(input.query as Record<string, string>).toString();
          const payload = input.raw ?? (input.body === undefined ? undefined : JSON.stringify(input.body));
          const headers = { ...keyHeaders(org, org.keys.admin), ...(payload === undefined ? {} : { 'content-type': method === 'put' ? 'audio/wav' : 'application/json' }) };
          const res = await app.inject({ method: method.toUpperCase() as 'GET', url: query ? `${url}?${query}` : url, headers, payload });
          requests += 1;
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          const problem = res.statusCode >= 500
            ? `${res.statusCode}`
            : res.statusCode >= 400 && String(res.headers['content-type']).includes('json') && (typeof res.json().detail !== 'string' || typeof res.json().code !== 'string')
              ? 'error body without {detail, code}' : undefined;
          if (problem) failures.push(`${method.toUpperCase()} ${url}${query ? `?${query.slice(0, 200)}` : ''} ${String(payload).slice(0, 200)} → ${problem}: ${res.body.slice(0, 200)}`);
          return problem === undefined;
        }), { seed: SEED, numRuns: RUNS_PER_OPERATION, endOnFailure: true }).catch((error: Error) => {
          // A property that returned false has recorded its request; one that threw (an unreadable
          // body, a rejected inject) has not, and must not pass silently.
          if (failures.length === recorded) failures.push(`${method.toUpperCase()} ${path} threw: ${error.message.slice(0, 400)}`);
        });
      }
    }
    assert.deepEqual(failures, [], `${failures.length} of ${requests} requests failed`);
    // Every property ran all its requests: none was cut short by an exception in the test itself.
    assert.equal(requests, operationsFuzzed * RUNS_PER_OPERATION);
    assert.ok(operationsFuzzed >= 55, `${operationsFuzzed} operations`);
    // Some requests get through validation to the services (real ids, valid-looking values): not only 400s.
    assert.ok((statuses.get(200) ?? 0) > 50, JSON.stringify([...statuses]));
  });
});
