import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt, SignJWT } from 'jose';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg, uniqueEmail } from './helpers/fixtures.ts';

/**
 * Sign-in by e-mail link (extensions.md §8, issue 14): public and always 200, a single-use link of
 * 15 minutes mailed through the Mailer (the outbox in tests), redeemed for a short-lived JWT and an
 * httpOnly SameSite=Strict refresh cookie that only the session routes receive; signing out ends it.
 */
let clientCounter = 0;
/** Each test asks from its own client address, so the per-client limit of one test leaves the others alone. */
const client = () => `203.0.113.${++clientCounter}`;

async function askLink(email: string, remoteAddress = client()) {
  const { app } = await testEnv();
  return app.inject({ method: 'POST', url: '/api/auth/sign-in-links', payload: { email }, remoteAddress });
}

async function mailsTo(email: string): Promise<Array<{ subject: string; text: string }>> {
  const { database } = await testEnv();
  return (await database.pool.query('SELECT subject, text FROM outbox_emails WHERE "to" = $1 ORDER BY created_at', [email.toLowerCase()])).rows;
}

/** The mail is sent after the answer: wait for the `count`-th one. */
async function waitForMails(email: string, count: number) {
  for (let i = 0; i < 100; i++) {
    const mails = await mailsTo(email);
    if (mails.length >= count) return mails;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no mail #${count} to ${email}`);
}

function tokenOf(text: string): string {
  const match = /(http:\/\/127\.0\.0\.1:3000\/sign-in\?token=[A-Za-z0-9_-]+)/.exec(text);
  assert.ok(match, `a link {PUBLIC_BASE_URL}/sign-in?token=… in:\n${text}`);
  return new URL(match[1]!).searchParams.get('token')!;
}

async function knownUser(name = 'Sign-in org') {
  const { database } = await testEnv();
  const email = uniqueEmail('person');
  const org = await provisionOrganization(database.db, { name, email });
  return { email, org };
}

async function redeem(token: string) {
  const { app } = await testEnv();
  return app.inject({ method: 'POST', url: '/api/auth/session', payload: { token }, remoteAddress: client() });
}

function cookieOf(setCookie: string | string[] | undefined): string {
  const header = Array.isArray(setCookie) ? setCookie[0]! : setCookie!;
  return header.split(';')[0]!;
}

describe('sign-in by e-mail link', () => {
  test('a known user gets a link; redeeming it signs them in as that user, with the refresh cookie httpOnly and SameSite=Strict', async () => {
    const { app, database } = await testEnv();
    const { email, org } = await knownUser();
    const res = await askLink(email.toUpperCase());
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().success, true);
    const [mail] = await waitForMails(email, 1);
    const token = tokenOf(mail!.text);
    const { rows } = await database.pool.query('SELECT extract(epoch FROM expires_at - created_at)::int AS ttl, token_hash FROM sign_in_links WHERE email = $1', [email]);
    assert.equal(rows[0].ttl, 15 * 60, 'valid 15 minutes');
    assert.notEqual(rows[0].token_hash, token, 'only a hash is stored');

    const signedIn = await redeem(token);
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    const session = signedIn.json().data;
    assert.equal(session.token_type, 'Bearer');
    assert.equal(session.email, email);
    const claims = decodeJwt(session.access_token);
    assert.ok(claims.exp! - claims.iat! <= 15 * 60, 'short-lived');
    assert.equal(session.expires_in, claims.exp! - claims.iat!);
    const setCookie = String(signedIn.headers['set-cookie']);
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Strict/);
    assert.match(setCookie, /Path=\/api\/auth\/session(;|$)/, 'sent to the session routes only');
    assert.doesNotMatch(setCookie, /Secure/, 'PUBLIC_BASE_URL of the tests is http');

    const me = await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${session.access_token}` } });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().data.user_id, org.user_id, 'the user made with this address');
    assert.equal(me.json().data.organizations[0].organization_id, org.organization_id);
    assert.equal(me.json().data.organizations[0].role, 'admin');
    const keys = await app.inject({ url: '/api/api-keys', headers: { authorization: `Bearer ${session.access_token}`, 'x-organization-id': org.organization_id } });
    assert.equal(keys.statusCode, 200);

    const again = await redeem(token);
    assert.equal(again.statusCode, 401, 'single use');
    assert.equal(again.json().code, 'sign_in_link_invalid');
  });

  test('an unknown address gets the same answer and no mail; an invited address gets a link', async () => {
    const { app } = await testEnv();
    const { email } = await knownUser();
    const stranger = uniqueEmail('stranger');
    const known = await askLink(email);
    const unknown = await askLink(stranger);
    assert.equal(unknown.statusCode, 200);
    assert.deepEqual(unknown.json(), known.json());
    await waitForMails(email, 1);
    assert.deepEqual(await mailsTo(stranger), []);

    const org = await createOrg();
    const invited = uniqueEmail('invited');
    const invitation = await app.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers: asRole(org, 'admin'), payload: { email: invited, role: 'user' } });
    assert.equal(invitation.statusCode, 200, invitation.body);
    assert.equal((await askLink(invited)).statusCode, 200);
    const mails = await waitForMails(invited, 2); // the invitation, then the link
    const token = tokenOf(mails.find((m) => /sign-in/i.test(m.subject))!.text);
    const session = (await redeem(token)).json().data;
    const accepted = await app.inject({ method: 'POST', url: `/api/auth/invitations/${invitation.json().data.invite_id}/accept`, headers: { authorization: `Bearer ${session.access_token}` } });
    assert.equal(accepted.statusCode, 200, accepted.body);
  });

  test('addresses with a single-label domain, as the server\'s own users have them (admin@localhost), may ask for a link and be invited', async () => {
    const { app, database } = await testEnv();
    // The first run's admin (ADMIN_EMAIL's default).
    const admin = await askLink('admin@localhost');
    assert.equal(admin.statusCode, 200, admin.body);
    const local = uniqueEmail('ops').replace(/@example\.test$/, '@localhost');
    await provisionOrganization(database.db, { name: 'Intranet', email: local });
    assert.equal((await askLink(local)).statusCode, 200);
    assert.ok(tokenOf((await waitForMails(local, 1))[0]!.text));

    const org = await createOrg();
    const colleague = uniqueEmail('colleague').replace(/@example\.test$/, '@mailhost');
    const invitation = await app.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers: asRole(org, 'admin'), payload: { email: colleague, role: 'user' } });
    assert.equal(invitation.statusCode, 200, invitation.body);
    assert.equal((await askLink(colleague)).statusCode, 200);
    await waitForMails(colleague, 2); // the invitation, then the link

    for (const email of ['not an address', 'a@', '@localhost', 'a@-host', 'a@host-', 'a b@localhost', 'a@b..c', 'a..b@localhost', 'a@ho_st']) {
      const link = await askLink(email);
      assert.equal(link.statusCode, 400, email);
      const invited = await app.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers: asRole(org, 'admin'), payload: { email, role: 'user' } });
      assert.equal(invited.statusCode, 400, email);
    }
  });

  test('an expired link, a made-up token and bad input are refused', async () => {
    const { database } = await testEnv();
    const { email } = await knownUser();
    await askLink(email);
    const token = tokenOf((await waitForMails(email, 1))[0]!.text);
    await database.pool.query("UPDATE sign_in_links SET expires_at = now() - interval '1 second' WHERE email = $1", [email]);
    const expired = await redeem(token);
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().code, 'sign_in_link_invalid');
    assert.equal((await redeem('x'.repeat(43))).statusCode, 401);

    for (const payload of [{}, { email: 'not an address' }, { email: 'a@b.test', extra: 1 }]) {
      const { app } = await testEnv();
      const res = await app.inject({ method: 'POST', url: '/api/auth/sign-in-links', payload, remoteAddress: client() });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json().code, 'validation_error');
    }
    assert.equal((await redeem('')).statusCode, 400);
  });

  test('refresh gives a new access token from the cookie alone; sign-out ends the session and clears the cookie', async () => {
    const { app } = await testEnv();
    const { email } = await knownUser();
    await askLink(email);
    const signedIn = await redeem(tokenOf((await waitForMails(email, 1))[0]!.text));
    const cookie = cookieOf(signedIn.headers['set-cookie']);

    const refreshed = await app.inject({ method: 'POST', url: '/api/auth/session/refresh', headers: { cookie } });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const token = refreshed.json().data.access_token;
    assert.equal((await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } })).json().data.email, email);
    assert.equal(refreshed.headers['cache-control'], 'no-store');

    const none = await app.inject({ method: 'POST', url: '/api/auth/session/refresh' });
    assert.equal(none.statusCode, 401);
    assert.equal(none.json().code, 'session_invalid');
    const forged = await app.inject({ method: 'POST', url: '/api/auth/session/refresh', headers: { cookie: `${cookie.split('.')[0]}.forged` } });
    assert.equal(forged.statusCode, 401);

    const out = await app.inject({ method: 'DELETE', url: '/api/auth/session', headers: { cookie } });
    assert.equal(out.statusCode, 200);
    assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
    const after = await app.inject({ method: 'POST', url: '/api/auth/session/refresh', headers: { cookie } });
    assert.equal(after.statusCode, 401, 'the session is revoked');
    assert.equal(after.json().code, 'session_invalid');
  });

  test('an access token signed with another secret, or past its session issuer rules, is refused', async () => {
    const { app } = await testEnv();
    const forged = await new SignJWT({ email: 'x@example.test', sid: 'sess_000000000000' })
      .setProtectedHeader({ alg: 'HS256' }).setSubject('x@example.test').setIssuer('switchboard-sign-in').setAudience('switchboard')
      .setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode('another-secret-another-secret-another'));
    const res = await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${forged}` } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'invalid_token');
  });

  test('rate limits: a sixth link to one address within 15 minutes sends nothing (still 200); an eleventh request from one client is 429', async () => {
    const { email } = await knownUser();
    for (let i = 0; i < 6; i++) assert.equal((await askLink(email)).statusCode, 200);
    await waitForMails(email, 5);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await mailsTo(email)).length, 5, 'five links per address per 15 minutes');

    const from = client();
    for (let i = 0; i < 10; i++) assert.equal((await askLink(uniqueEmail('flood'), from)).statusCode, 200);
    const refused = await askLink(uniqueEmail('flood'), from);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().code, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal((await askLink(uniqueEmail('flood'))).statusCode, 200, 'another client has its own count');
  });
});
