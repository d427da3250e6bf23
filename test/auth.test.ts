import type { FastifyInstance } from 'fastify';
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { createOrg, uniqueEmail, userToken } from './helpers/fixtures.ts';

const bearer = (token: string, org?: string) => ({
  authorization: `Bearer ${token}`,
  ...(org ? { 'x-organization-id': org } : {}),
});

async function me(token: string) {
  const { app } = await testEnv();
  return app.inject({ url: '/api/auth/me', headers: bearer(token) });
}

describe('bearer tokens from the embedded issuer (HS256)', () => {
  test('a valid token provisions the user on first use and signs in the same user after', async () => {
    const email = uniqueEmail('first');
    const token = await userToken({ sub: `sub-${email}`, email });
    const first = await me(token);
    assert.equal(first.statusCode, 200, first.body);
    assert.match(first.json().data.user_id, /^user_[a-f0-9]{12}$/);
    assert.equal(first.json().data.email, email);
    assert.deepEqual(first.json().data.organizations, []);
    const second = await me(await userToken({ sub: `sub-${email}`, email }));
    assert.equal(second.json().data.user_id, first.json().data.user_id);
  });

  test('alg none, wrong signature, wrong issuer, wrong audience, expired, missing sub, garbage → 401', async () => {
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: 'x', iss: 'switchboard-local', aud: 'switchboard', exp: Math.floor(Date.now() / 1000) + 60 }),
    ).toString('base64url')}.`;
    const cases = {
      'alg none': unsigned,
      'wrong signature': await userToken({ sub: 'x' }, { secret: 'another-secret-of-at-least-32-characters!!' }),
      'wrong issuer': await userToken({ sub: 'x' }, { issuer: 'https://evil.example' }),
      'wrong audience': await userToken({ sub: 'x' }, { audience: 'other-api' }),
      expired: await userToken({ sub: 'x' }, { expiresIn: -60 }),
      'missing sub': await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuer('switchboard-local')
        .setAudience('switchboard').setExpirationTime('5m').sign(new TextEncoder().encode('test-secret-for-the-embedded-issuer-0123456789')),
      garbage: 'abc.def.ghi',
    };
    for (const [name, token] of Object.entries(cases)) {
      const res = await me(token);
      assert.equal(res.statusCode, 401, `${name}: ${res.body}`);
      assert.equal(res.json().code, 'invalid_token', name);
    }
    const { app } = await testEnv();
    const notBearer = await app.inject({ url: '/api/auth/me', headers: { authorization: 'Basic abc' } });
    assert.equal(notBearer.statusCode, 401);
  });

  test('a token must carry exp, must not be issued in the future, and lives at most 24 h (JWT_MAX_TTL_SECONDS)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const secret = new TextEncoder().encode(TEST_JWT_SECRET);
    const token = (claims: { iat?: number; exp?: number }) => new SignJWT({ ...claims, email: uniqueEmail('ttl') })
      .setProtectedHeader({ alg: 'HS256' }).setSubject(`sub-ttl-${now}`).setIssuer('switchboard-local').setAudience('switchboard').sign(secret);
    const day = 86_400;
    const refused = {
      'no exp': await token({ iat: now }),
      'no exp, no iat': await token({}),
      'iat two minutes ahead': await token({ iat: now + 120, exp: now + 600 }),
      'exp - iat a day and a second': await token({ iat: now, exp: now + day + 1 }),
      'issued two days ago, valid another hour': await token({ iat: now - 2 * day, exp: now + 3600 }),
      'no iat, valid a day and a minute from now': await token({ exp: now + day + 60 }),
      'a year': await token({ iat: now, exp: now + 365 * day }),
    };
    for (const [name, jwt] of Object.entries(refused)) {
      const res = await me(jwt);
      assert.equal(res.statusCode, 401, `${name}: ${res.body}`);
      assert.equal(res.json().code, 'invalid_token', name);
    }
    const accepted = {
      'exactly a day': await token({ iat: now, exp: now + day }),
      'iat ten seconds ahead (clock skew)': await token({ iat: now + 10, exp: now + 600 }),
      'no iat, an hour from now': await token({ exp: now + 3600 }),
    };
    for (const [name, jwt] of Object.entries(accepted)) assert.equal((await me(jwt)).statusCode, 200, name);

    const { tmpDir } = await testEnv();
    const strict = await buildTestApp(testConfig(tmpDir, { JWT_MAX_TTL_SECONDS: '600' }));
    try {
      const call = async (jwt: string) => (await strict.inject({ url: '/api/auth/me', headers: bearer(jwt) })).statusCode;
      assert.equal(await call(await token({ iat: now, exp: now + 600 })), 200);
      assert.equal(await call(await token({ iat: now, exp: now + 601 })), 401);
    } finally {
      await strict.close();
    }
  });

  test("a user's role in an organization comes from the membership; non-members → 403", async () => {
    const { app } = await testEnv();
    const email = uniqueEmail('owner');
    const token = await userToken({ sub: `sub-${email}`, email });
    const created = await app.inject({
      method: 'POST', url: '/api/auth/organizations', headers: bearer(token), payload: { name: 'Founders Inc' },
    });
    assert.equal(created.statusCode, 200, created.body);
    const orgId = created.json().data.organization_id;
    assert.match(orgId, /^org_[a-f0-9]{12}$/);
    assert.equal(created.json().data.role, 'admin');

    const keys = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: bearer(token, orgId), payload: { name: 'from-jwt', role: 'admin' },
    });
    assert.equal(keys.statusCode, 200, keys.body);
    const self = (await me(token)).json().data;
    assert.equal(keys.json().data.user_id, self.user_id, 'a key records the user who created it');
    assert.deepEqual(self.organizations.map((o: any) => [o.organization_id, o.role]), [[orgId, 'admin']]);

    const members = await app.inject({ url: '/api/auth/organizations/members', headers: bearer(token, orgId) });
    assert.equal(members.statusCode, 200);
    assert.equal(members.json().data.length, 1);
    assert.equal(members.json().data[0].role, 'admin');
    assert.equal(members.json().data[0].email, email);

    const stranger = await userToken({ sub: `stranger-${email}` });
    const denied = await app.inject({ url: '/api/api-keys', headers: bearer(stranger, orgId) });
    assert.equal(denied.statusCode, 403);
    assert.equal(denied.json().code, 'organization_forbidden');
  });

  test('an API key reads /api/auth/me as the user who created it', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const res = await app.inject({ url: '/api/auth/me', headers: { 'x-api-key': org.keys.user } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data.user_id, org.userId);
    assert.equal(res.json().data.authenticated_with, 'api_key');
    assert.equal(res.json().data.api_key.client_id, org.orgId);
    assert.equal(res.json().data.api_key.role, 'user');
  });

  test('organization creation validates its body and needs a credential', async () => {
    const { app } = await testEnv();
    const token = await userToken({ sub: `v-${uniqueEmail()}` });
    const bad = await app.inject({ method: 'POST', url: '/api/auth/organizations', headers: bearer(token), payload: { name: '' } });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().errors[0].path, 'body.name');
    const anon = await app.inject({ method: 'POST', url: '/api/auth/organizations', payload: { name: 'x' } });
    assert.equal(anon.statusCode, 401);
  });

  test('an API key cannot create an organization: 403 user_token_required, nothing created', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const name = `Made by a key ${uniqueEmail()}`;
    const res = await app.inject({ method: 'POST', url: '/api/auth/organizations', headers: { 'x-api-key': org.adminKey }, payload: { name } });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'user_token_required');
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM organizations WHERE name = $1', [name]);
    assert.equal(rows[0].n, 0);
  });
});

describe('bearer tokens from a production identity provider (JWKS)', () => {
  let jwksServer: http.Server;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  let jwksApp: FastifyInstance;
  const issuer = 'https://id.example.test/';
  const audience = 'switchboard-api';

  before(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwksServer = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const { port } = jwksServer.address() as AddressInfo;
    const { database, tmpDir } = await testEnv();
    const config = testConfig(tmpDir, {
      JWT_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`, JWT_ISSUER: issuer, JWT_AUDIENCE: audience,
    });
    jwksApp = await buildTestApp(config);
  });

  after(async () => {
    await jwksApp?.close();
    await new Promise((resolve) => jwksServer?.close(resolve));
  });

  const sign = (claims: Record<string, unknown>, opts: { iss?: string; aud?: string; exp?: string } = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject(String(claims.sub ?? 'idp-user'))
      .setIssuer(opts.iss ?? issuer).setAudience(opts.aud ?? audience).setIssuedAt().setExpirationTime(opts.exp ?? '5m')
      .sign(privateKey);

  test('a token signed by the provider key is accepted', async () => {
    const email = uniqueEmail('idp');
    const res = await jwksApp.inject({ url: '/api/auth/me', headers: bearer(await sign({ sub: `idp|${email}`, email })) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.email, email);
  });

  test('beside the provider, a console session from an e-mail link still signs its user in', async () => {
    const { services } = await testEnv();
    const org = await createOrg();
    const email = uniqueEmail('console');
    const invited = await jwksApp.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers: { 'x-api-key': org.adminKey, 'x-organization-id': org.orgId }, payload: { email, role: 'user' } });
    assert.equal(invited.statusCode, 200, invited.body);
    const token = new URL(await services.sessions.createLink(email)).searchParams.get('token');
    const signedIn = await jwksApp.inject({ method: 'POST', url: '/api/auth/session', payload: { token } });
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    const me = await jwksApp.inject({ url: '/api/auth/me', headers: bearer(signedIn.json().data.access_token) });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().data.email, email);
  });

  test('wrong issuer, wrong audience, expired, too long-lived, and HS256 tokens are refused', async () => {
    const tokens = [
      await sign({ sub: 'a' }, { exp: '2d' }),
      await sign({ sub: 'a' }, { iss: 'https://other.example/' }),
      await sign({ sub: 'a' }, { aud: 'someone-else' }),
      await sign({ sub: 'a' }, { exp: '-1m' }),
      await userToken({ sub: 'a' }, { issuer, audience }),
    ];
    for (const token of tokens) {
      const res = await jwksApp.inject({ url: '/api/auth/me', headers: bearer(token) });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(res.json().code, 'invalid_token');
    }
  });
});
