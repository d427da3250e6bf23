import assert from 'node:assert/strict';
import net from 'node:net';
import { after } from 'node:test';
import { OpenAiStandin } from '../../runtime/test/standins/openai.ts';
import { testEnv } from './env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './fixtures.ts';
import { grantCredits } from './calls.ts';

/** Post-call analysis in tests (extensions.md §13): an organization whose agent's analysis asks the OpenAI-compatible stand-in. */
export const KEY = 'sk-analysis-standin';
export const GRANT = 100;

export const SCHEMA = {
  type: 'object', required: ['booked', 'party_size'], additionalProperties: false,
  properties: { booked: { type: 'boolean' }, party_size: { type: 'integer', minimum: 1 }, name: { type: 'string' } },
};
export const ANALYSIS = { enabled: true, summary_prompt: 'One sentence.', success_criteria: 'A table was booked.', structured_data_schema: SCHEMA };
export const TRANSCRIPT = [
  { role: 'agent', text: 'Luigi\'s, how can I help?', start_seconds: 0 },
  { role: 'user', text: 'A table for four tonight at eight, please.', start_seconds: 2 },
  { role: 'agent', text: 'Booked: four people at eight. See you tonight!', start_seconds: 5 },
];

/**
 * The stand-in seen at 127.0.0.2 (the address the test deployment's ALLOWED_NETWORKS admits, as it
 * would a self-hosted model server): a TCP relay to the stand-in on 127.0.0.1.
 */
async function relay(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const { port } = new URL(target);
  const server = net.createServer((socket) => {
    const upstream = net.connect(Number(port), '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  const address = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.2:${address.port}`, close: () => new Promise((r) => server.close(() => r())) };
}

export interface Setup { org: TestOrg; llm: OpenAiStandin; agentId: string }
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of cleanups) await close();
});

/**
 * An organization with credits, an openai integration on a fresh stand-in, and an agent whose analysis
 * is enabled; in a new organization, or in `given` (a console test's, say).
 */
export async function setup(analysis: object | null = ANALYSIS, standin: { firstTokenMs?: number } = {}, given?: TestOrg): Promise<Setup> {
  const { app } = await testEnv();
  const llm = await new OpenAiStandin({ key: KEY, ...standin }).start();
  const front = await relay(llm.url);
  cleanups.push(() => front.close(), () => llm.close());
  const org = given ?? await createOrg();
  await grantCredits(org.orgId, GRANT);
  const created = await app.inject({ method: 'POST', url: '/api/integrations', headers: asRole(org, 'admin'), payload: { name: 'llm', provider: 'openai', category: 'llm', credentials: { api_key: KEY, base_url: front.url } } });
  assert.equal(created.statusCode, 200, created.body);
  const validated = await app.inject({ method: 'POST', url: `/api/integrations/${created.json().data.integration_id}/validate`, headers: asRole(org, 'admin', { 'content-type': 'application/json' }) });
  assert.equal(validated.json().data.status, 'active', validated.body);
  const agent = await createAgent(org, { llm_provider: 'openai', llm_model: 'gpt-test', analysis });
  return { org, llm, agentId: agent.agent_id };
}

export async function getCall(org: TestOrg, callSid: string) {
  const { app } = await testEnv();
  const res = await app.inject({ url: `/api/calls/${callSid}`, headers: asRole(org, 'user') });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, seconds = 40): Promise<T> {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The call once its analysis is there (and, with `version`, the one of that version). */
export const analyzed = (org: TestOrg, callSid: string, version?: number) => waitFor('the analysis', async () => {
  const call = await getCall(org, callSid);
  return call.analysis && (version === undefined || call.analysis.agent_version === version) ? call : undefined;
});

