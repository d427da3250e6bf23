import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall } from './helpers/calls.ts';
import { createTextDocument, waitForProcessing } from './helpers/documents.ts';
import { freePort } from './helpers/net.ts';

const root = path.resolve(import.meta.dirname, '..');
const cli = ['--import', './src/module-hooks.ts', 'src/cli.ts', 'mcp'];

const text = (result: unknown) => JSON.parse((result as { content: Array<{ text: string }> }).content[0]!.text);

describe('switchboard mcp: tools acting with one API key', () => {
  let app: FastifyInstance;
  let base: string;
  let org: TestOrg;
  let agentId: string;
  before(async () => {
    const { tmpDir } = await testEnv();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await buildTestApp(testConfig(tmpDir, { PUBLIC_BASE_URL: base }));
    await app.listen({ host: '127.0.0.1', port });
    org = await createOrg('MCP users');
    agentId = (await createAgent(org, { agent_name: 'Front desk' })).agent_id;
    await createCall(org, agentId);
    const document = await createTextDocument(org, 'Hours', 'The clinic opens at eight on weekdays.');
    await waitForProcessing(org, document.documentation_id);
  });
  after(() => app?.close());

  const stdioClient = async (key: string) => {
    const client = new Client({ name: 'switchboard-tests', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [...cli, '--url', base, '--api-key', key, '--org', org.orgId], cwd: root, stderr: 'pipe' }));
    return client;
  };

  test('over stdio, an admin key gets every tool and the tools answer with the organization\'s data', async () => {
    const client = await stdioClient(org.keys.admin);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['get_agent', 'get_call', 'get_call_analysis', 'get_call_analytics', 'list_agent_versions', 'list_agents', 'list_calls',
        'list_phone_numbers', 'restore_agent_version', 'search_knowledge_base', 'update_agent']);
      assert.deepEqual(text(await client.callTool({ name: 'list_agents', arguments: {} })).map((a: { agent_id: string }) => a.agent_id), [agentId]);
      const calls = text(await client.callTool({ name: 'list_calls', arguments: { agent_id: agentId } }));
      assert.equal(calls.length, 1);
      assert.equal(text(await client.callTool({ name: 'get_call', arguments: { call_sid: calls[0].call_sid } })).agent_name, 'Front desk');
      const updated = text(await client.callTool({ name: 'update_agent', arguments: { agent_id: agentId, system_prompt: 'Be brief.' } }));
      assert.equal(updated.system_prompt, 'Be brief.');
      assert.match(text(await client.callTool({ name: 'search_knowledge_base', arguments: { query: 'opens weekdays' } }))[0].text, /opens at eight/);
    } finally {
      await client.close();
    }
  });

  test('over stdio, a user key is offered the read tools only', async () => {
    const client = await stdioClient(org.keys.user);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(!names.includes('update_agent'));
      assert.ok(!names.includes('restore_agent_version'));
      assert.ok(names.includes('list_calls'));
      assert.ok(names.includes('list_agent_versions'));
      assert.ok(names.includes('get_call_analysis'));
    } finally {
      await client.close();
    }
  });

  test('over stdio, versions are listed, compared and restored, and a call\'s analysis is read as the API shows it', async () => {
    const { app: shared } = await testEnv();
    const headers = asRole(org, 'admin');
    const versioned = (await shared.inject({ method: 'POST', url: '/api/agents', headers, payload: { agent_name: 'Versioned', system_prompt: 'First prompt.' } })).json().data;
    const patched = await shared.inject({ method: 'PATCH', url: `/api/agents/${versioned.agent_id}`, headers, payload: { system_prompt: 'Second prompt.' } });
    assert.equal(patched.statusCode, 200, patched.body);
    const client = await stdioClient(org.keys.admin);
    try {
      const versions = text(await client.callTool({ name: 'list_agent_versions', arguments: { agent_id: versioned.agent_id } }));
      assert.deepEqual(versions.map((v: { version: number }) => v.version), [2, 1]);
      assert.deepEqual(versions.map((v: { config: { system_prompt: string } }) => v.config.system_prompt), ['Second prompt.', 'First prompt.']);
      const diff = text(await client.callTool({ name: 'list_agent_versions', arguments: { agent_id: versioned.agent_id, version: 2, against: 1 } }));
      assert.deepEqual(diff.changes.find((c: { field: string }) => c.field === 'system_prompt'), { field: 'system_prompt', from: 'First prompt.', to: 'Second prompt.' });
      const restored = text(await client.callTool({ name: 'restore_agent_version', arguments: { agent_id: versioned.agent_id, version: 1 } }));
      assert.equal(restored.version, 3);
      const now = (await shared.inject({ method: 'GET', url: `/api/agents/${versioned.agent_id}`, headers })).json().data;
      assert.equal(now.version, 3);
      assert.equal(now.system_prompt, 'First prompt.');

      const call = (await shared.inject({ method: 'GET', url: `/api/calls?agent_id=${agentId}`, headers })).json().data[0];
      const full = (await shared.inject({ method: 'GET', url: `/api/calls/${call.call_sid}`, headers })).json().data;
      const read = text(await client.callTool({ name: 'get_call_analysis', arguments: { call_sid: call.call_sid } }));
      assert.deepEqual(read, { call_sid: call.call_sid, agent_id: agentId, agent_version: full.agent_version ?? null, analysis: full.analysis ?? null });
      const refused = await client.callTool({ name: 'restore_agent_version', arguments: { agent_id: versioned.agent_id, version: 9 } });
      assert.equal(refused.isError, true);
    } finally {
      await client.close();
    }
  });

  /** `switchboard mcp --http` in a child process: resolves with its URL and the token it printed, if any. */
  const startHttp = (key: string, extraArgs: string[] = [], env: Record<string, string> = {}) => {
    const child: ChildProcess = spawn(process.execPath, [...cli, '--url', base, '--api-key', key, '--org', org.orgId, '--http', '--port', '0', ...extraArgs], {
      cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MCP_TOKEN: '', ...env },
    });
    children.push(child);
    const started = new Promise<{ url: string; token: string | undefined }>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const url = /(http:\/\/\S+\/mcp)\n/.exec(out)?.[1];
        const token = /MCP token[^\n]*: (\S+)\n/.exec(out)?.[1];
        if (url && (token || env.MCP_TOKEN)) resolve({ url, token });
      });
      child.stderr!.on('data', (d) => (out += d));
      child.once('exit', (code) => reject(Object.assign(new Error(`mcp exited (${code}): ${out}`), { code, out })));
    });
    return { child, started };
  };
  const children: ChildProcess[] = [];
  after(() => { for (const child of children) child.kill('SIGTERM'); });

  /** A raw HTTP POST to the MCP endpoint (fetch may not set Host): an initialize request. */
  const rawPost = (url: string, headers: Record<string, string>) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': String(Buffer.byteLength(body)), ...headers },
    }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });

  test('over Streamable HTTP (--http), with the token it prints', async () => {
    const { started } = startHttp(org.keys.agent_manager);
    const { url, token } = await started;
    assert.ok(token && token.length >= 32, 'a generated token is printed');
    const client = new Client({ name: 'switchboard-tests', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('update_agent'), 'an agent manager may update agents');
    const series = text(await client.callTool({ name: 'get_call_analytics', arguments: { timezone: 'UTC' } }));
    assert.equal(series.daily.length, 31);
    await client.close();
  });

  test('over HTTP: no token or a wrong one is 401, a foreign Host or Origin is 403 (DNS rebinding), the right token and host work', async () => {
    const { started } = startHttp(org.keys.admin);
    const { url, token } = await started;
    const port = new URL(url).port;
    const auth = { authorization: `Bearer ${token}` };
    const cases: Array<[string, Record<string, string>, number]> = [
      ['no token', {}, 401],
      ['a wrong token', { authorization: 'Bearer not-the-token-0123456789abcdef' }, 401],
      ['a token in another scheme', { authorization: `Basic ${token}` }, 401],
      ['Host: evil.example', { ...auth, host: `evil.example:${port}` }, 403],
      ['Origin: http://evil.example', { ...auth, origin: 'http://evil.example' }, 403],
      ['Origin: null', { ...auth, origin: 'null' }, 403],
      ['Host: evil.example with no token', { host: 'evil.example' }, 403],
      ['the token, Host 127.0.0.1', auth, 200],
      ['the token, Host localhost and its Origin', { ...auth, host: `localhost:${port}`, origin: `http://localhost:${port}` }, 200],
    ];
    for (const [label, headers, status] of cases) {
      const res = await rawPost(url, headers);
      assert.equal(res.status, status, `${label}: ${res.body}`);
      if (status === 200) assert.equal(JSON.parse(res.body).result.serverInfo.name, 'switchboard');
      else assert.equal(JSON.parse(res.body).code, { 401: 'unauthenticated', 403: label.includes('Host') ? 'host_not_allowed' : 'origin_not_allowed' }[status]);
    }
  });

  test('over HTTP: MCP_TOKEN is the token; a non-loopback address is refused without one', async () => {
    const chosen = 'chosen-token-0123456789-abcdefgh';
    const { started } = startHttp(org.keys.admin, [], { MCP_TOKEN: chosen });
    const { url, token } = await started;
    assert.equal(token, undefined, 'a chosen token is not printed');
    assert.equal((await rawPost(url, { authorization: `Bearer ${chosen}` })).status, 200);
    const refused = startHttp(org.keys.admin, ['--host', '0.0.0.0']);
    await assert.rejects(refused.started, (err: { code: number; out: string }) => err.code === 2 && /MCP_TOKEN/.test(err.out));
    // With a token of its own it listens everywhere, still answering only to allowed host names.
    const everywhere = await startHttp(org.keys.admin, ['--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.test'], { MCP_TOKEN: chosen }).started;
    const local = `http://127.0.0.1:${new URL(everywhere.url).port}/mcp`;
    assert.equal((await rawPost(local, { authorization: `Bearer ${chosen}`, host: 'mcp.example.test' })).status, 200);
    assert.equal((await rawPost(local, { authorization: `Bearer ${chosen}`, host: 'evil.example' })).status, 403);
  });

  test('a key narrowed by scopes is offered only the tools its scopes allow', async () => {
    const { app: shared } = await testEnv();
    const created = await shared.inject({ method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin'), payload: { name: 'calls only', role: 'admin', scopes: ['calls:read'] } });
    assert.equal(created.statusCode, 200, created.body);
    const client = await stdioClient(created.json().data.key);
    try {
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['get_call', 'get_call_analysis', 'list_calls']);
      assert.equal(text(await client.callTool({ name: 'list_calls', arguments: {} })).length, 1);
    } finally {
      await client.close();
    }
  });

  test('a key of another organization is refused at start', async () => {
    const other = await createOrg();
    const client = new Client({ name: 'switchboard-tests', version: '1.0.0' });
    await assert.rejects(client.connect(new StdioClientTransport({ command: process.execPath, args: [...cli, '--url', base, '--api-key', other.keys.admin, '--org', org.orgId], cwd: root, stderr: 'pipe' })));
  });
});
