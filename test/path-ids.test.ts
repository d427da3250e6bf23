import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { createOrg, keyHeaders, uniqueEmail, userToken } from './helpers/fixtures.ts';

// Ids of the wrong shape for any resource: a foreign prefix, odd characters, a very long one.
const MALFORMED = ['not-an-id', 'agent_ZZZ!', 'x'.repeat(250), '12345', 'doc_', 'call_'];

describe('malformed ids in a path', () => {
  test('every route with an id in its path answers 404 not_found for an id of the wrong shape (decisions.md §1)', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const doc = app.swagger() as { paths: Record<string, Record<string, { requestBody?: { required?: boolean }; parameters?: Array<{ in: string; required?: boolean }> }>> };
    const token = await userToken({ sub: `path-ids-${uniqueEmail()}`, email: uniqueEmail('path-ids') });
    let checked = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!path.includes('{')) continue;
      // The runtime's routes take a call token only, for its own call_sid: any other id is refused
      // (403 scope_missing, extensions.md §10), as test/voice-runtime.test.ts checks.
      if (path.startsWith('/api/runtime/')) continue;
      for (const [method, op] of Object.entries(operations)) {
        // A required body or query is validated before the route runs (400 for its own reasons); these
        // operations are covered with a valid body below.
        if (op.requestBody?.required || op.parameters?.some((p) => p.in === 'query' && p.required)) continue;
        for (const id of MALFORMED) {
          const url = path.replace(/\{[^}]+\}/g, encodeURIComponent(id));
          const credential = path.startsWith('/api/auth/invitations/') ? { authorization: `Bearer ${token}` } : keyHeaders(org, org.keys.admin);
          const contentType = method === 'put' ? { 'content-type': 'audio/wav' } : method === 'post' ? { 'content-type': 'application/json' } : {};
          const headers = { ...credential, ...contentType };
          const res = await app.inject({ method: method.toUpperCase() as 'GET', url, headers });
          assert.equal(res.statusCode, 404, `${method} ${path} with ${id.slice(0, 20)}: ${res.statusCode} ${res.body.slice(0, 200)}`);
          checked += 1;
        }
      }
    }
    assert.ok(checked >= 20 * MALFORMED.length, `${checked} requests`);

    const withBody: Array<[string, string, unknown]> = [
      ['PATCH', '/api/agents/%s', { agent_name: 'x' }], ['PATCH', '/api/tools/%s', { tool_description: 'x' }],
      ['PATCH', '/api/integrations/%s', { name: 'x' }], ['PATCH', '/api/phone-numbers/%s', { agent_id: null }],
      ['PATCH', '/api/calls/%s', { status: 'ringing' }], ['PATCH', '/api/auth/organizations/members/%s', { role: 'user' }],
    ];
    for (const [method, template, body] of withBody) {
      for (const id of MALFORMED) {
        const res = await app.inject({ method: method as 'PATCH', url: template.replace('%s', encodeURIComponent(id)), headers: keyHeaders(org, org.keys.admin), payload: body as object });
        assert.equal(res.statusCode, 404, `${method} ${template} with ${id.slice(0, 20)}: ${res.body.slice(0, 200)}`);
      }
    }
  });
});
