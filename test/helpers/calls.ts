import assert from 'node:assert/strict';
import { testEnv } from './env.ts';
import { asRole, type TestOrg } from './fixtures.ts';
import { CreditLedger } from '../../src/modules/billing/ledger.ts';
import { transaction } from '../../src/db/unit-of-work.ts';

/** Reports a call as the voice runtime does (agent_manager key: calls:write). */
export async function createCall(org: TestOrg, agentId: string, body: Record<string, unknown> = {}) {
  const { app } = await testEnv();
  const res = await app.inject({
    method: 'POST', url: '/api/calls', headers: asRole(org, 'agent_manager'),
    payload: { agent_id: agentId, call_type: 'inbound', to_number: '+14155550100', from_number: '+14155550111', ...body },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

export async function patchCall(org: TestOrg, callSid: string, body: Record<string, unknown>) {
  const { app } = await testEnv();
  return app.inject({ method: 'PATCH', url: `/api/calls/${callSid}`, headers: asRole(org, 'agent_manager'), payload: body });
}

/** A call from creation to `completed`, with the given report. */
export async function finishedCall(org: TestOrg, agentId: string, report: Record<string, unknown> = {}, create: Record<string, unknown> = {}) {
  const call = await createCall(org, agentId, create);
  const res = await patchCall(org, call.call_sid, { status: 'completed', end_reason: 'user_hangup', ...report });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

export async function grantCredits(orgId: string, amount: number): Promise<void> {
  const { database } = await testEnv();
  await transaction(database.db, (tx) => new CreditLedger(tx).credit(orgId, 'adjustment', `test-${orgId}-${Date.now()}-${Math.random()}`, amount, 'test grant'));
}

/** The balance as the database holds it (read with SQL, not through the ledger under test). */
export async function balanceOf(orgId: string): Promise<number> {
  const { database } = await testEnv();
  const { rows } = await database.pool.query('SELECT balance FROM credit_accounts WHERE client_id = $1', [orgId]);
  return rows.length === 0 ? 0 : Number(rows[0].balance);
}

export async function uploadRecording(org: TestOrg, callSid: string, body: Buffer, contentType = 'audio/wav') {
  const { app } = await testEnv();
  return app.inject({ method: 'PUT', url: `/api/calls/${callSid}/recording`, headers: asRole(org, 'agent_manager', { 'content-type': contentType }), payload: body });
}
