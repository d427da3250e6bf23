import { SignJWT } from 'jose';
import type { Role } from './permission-table.ts';
import { issueApiKey } from '../../src/modules/api-keys/service.ts';
import { provisionOrganization } from '../../src/modules/organizations/service.ts';
import { TEST_JWT_SECRET, testEnv } from './env.ts';

export interface TestOrg {
  orgId: string;
  userId: string;
  adminKey: string;
  /** One key per role, all created by the admin user. */
  keys: Record<Role, string>;
}

let counter = 0;

/** A fresh organization (tests isolate themselves this way) with a key for every role. */
export async function createOrg(name = `Test org ${++counter}`): Promise<TestOrg> {
  const { database } = await testEnv();
  const created = await provisionOrganization(database.db, { name });
  const keys = { admin: created.api_key.key } as Record<Role, string>;
  for (const role of ['agent_manager', 'user'] as const) {
    keys[role] = (await issueApiKey(database.db, created.organization_id, { userId: created.user_id, name: role, role })).key;
  }
  return { orgId: created.organization_id, userId: created.user_id, adminKey: created.api_key.key, keys };
}

export function keyHeaders(org: { orgId: string }, key: string, extra: Record<string, string> = {}) {
  return { 'x-api-key': key, 'x-organization-id': org.orgId, ...extra };
}

export function asRole(org: TestOrg, role: Role, extra: Record<string, string> = {}) {
  return keyHeaders(org, org.keys[role], extra);
}

/** A token from the embedded issuer, as `switchboard auth:token` makes. */
export async function userToken(
  claims: { sub: string; email?: string },
  options: { secret?: string; issuer?: string; audience?: string; expiresIn?: number } = {},
): Promise<string> {
  const jwt = new SignJWT(claims.email ? { email: claims.email } : {})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(claims.sub)
    .setIssuer(options.issuer ?? 'switchboard-local')
    .setAudience(options.audience ?? 'switchboard')
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (options.expiresIn ?? 600));
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

export function uniqueEmail(label = 'user'): string {
  return `${label}.${Date.now().toString(36)}.${++counter}@example.test`;
}

let phoneCounter = 0;
/** An E.164 number no other test (or earlier run on the same database) has used. */
export function uniquePhoneNumber(): string {
  return `+88${String(Date.now()).slice(-9)}${String(++phoneCounter % 1000).padStart(3, '0')}`;
}

/** An agent of the organization, created through the API as a user would (the one helper for it). */
export async function createAgent(org: TestOrg, body: Record<string, unknown> = {}): Promise<{ agent_id: string } & Record<string, any>> {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin'), payload: { agent_name: 'Receptionist', ...body } });
  if (res.statusCode !== 200) throw new Error(`creating an agent failed: ${res.statusCode} ${res.body}`);
  return res.json().data;
}
