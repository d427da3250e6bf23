import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
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
      assert.deepEqual(names, ['get_agent', 'get_call', 'get_call_analytics', 'list_agents', 'list_calls', 'list_phone_numbers', 'search_knowledge_base', 'update_agent']);
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
      assert.ok(names.includes('list_calls'));
    } finally {
      await client.close();
    }
  });

  test('over Streamable HTTP (--http)', async () => {
    const child: ChildProcess = spawn(process.execPath, [...cli, '--url', base, '--api-key', org.keys.agent_manager, '--org', org.orgId, '--http', '--port', '0'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d) => { out += d; const m = /(http:\/\/\S+\/mcp)/.exec(out); if (m) resolve(m[1]!); });
        child.stderr!.on('data', (d) => (out += d));
        child.once('exit', () => reject(new Error(`mcp exited: ${out}`)));
      });
      const client = new Client({ name: 'switchboard-tests', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('update_agent'), 'an agent manager may update agents');
      const series = text(await client.callTool({ name: 'get_call_analytics', arguments: { timezone: 'UTC' } }));
      assert.equal(series.daily.length, 31);
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
  });

  test('a key of another organization is refused at start', async () => {
    const other = await createOrg();
    const client = new Client({ name: 'switchboard-tests', version: '1.0.0' });
    await assert.rejects(client.connect(new StdioClientTransport({ command: process.execPath, args: [...cli, '--url', base, '--api-key', other.keys.admin, '--org', org.orgId], cwd: root, stderr: 'pipe' })));
  });
});
