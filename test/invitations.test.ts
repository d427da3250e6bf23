import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { SMTPServer } from 'smtp-server';
import { SmtpMailer } from '../src/adapters/mail/smtp-mailer.ts';
import { InvitationEmailer } from '../src/modules/invitations/emailer.ts';
import { newId } from '../src/core/ids.ts';
import type { Role } from './helpers/permission-table.ts';
import { OrganizationRepository } from '../src/modules/organizations/repository.ts';
import { issueApiKey } from '../src/modules/api-keys/service.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { freePort } from './helpers/net.ts';
import { asRole, createOrg, keyHeaders, uniqueEmail, userToken, type TestOrg } from './helpers/fixtures.ts';

async function invite(org: TestOrg, email: string, role: Role = 'user') {
  const { app } = await testEnv();
  return app.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers: asRole(org, 'admin'), payload: { email, role } });
}

async function accept(inviteId: string, email: string, sub = `sub-${email}`) {
  const { app } = await testEnv();
  const token = await userToken({ sub, email });
  return app.inject({ method: 'POST', url: `/api/auth/invitations/${inviteId}/accept`, headers: { authorization: `Bearer ${token}` } });
}

/** A member added directly (with a key of their own), for the member routes. */
async function addMember(org: TestOrg, role: Role = 'user') {
  const { database } = await testEnv();
  const repo = new OrganizationRepository(database.db);
  const user = await repo.insertUser({ id: newId('user'), subject: null, email: uniqueEmail('member') });
  await repo.insertMembership(org.orgId, user.id, role);
  const key = (await issueApiKey(database.db, org.orgId, { userId: user.id, name: 'own', role })).key;
  return { userId: user.id, key };
}

const invitationPath = async (org: TestOrg) => `/api/auth/organizations/invitations/${(await invite(org, uniqueEmail())).json().data.invite_id}`;
const memberPath = async (org: TestOrg) => `/api/auth/organizations/members/${(await addMember(org)).userId}`;
runAuthMatrix({ method: 'GET', route: '/api/auth/organizations/invitations', path: () => '/api/auth/organizations/invitations', permission: 'invitations:read' });
runAuthMatrix({ method: 'POST', route: '/api/auth/organizations/invitations', path: () => '/api/auth/organizations/invitations', body: () => ({ email: uniqueEmail(), role: 'user' }), permission: 'invitations:create' });
runAuthMatrix({ method: 'DELETE', route: '/api/auth/organizations/invitations/{invite_id}', path: invitationPath, permission: 'invitations:delete', foreignStatus: 404 });
runAuthMatrix({ method: 'PATCH', route: '/api/auth/organizations/members/{user_id}', path: memberPath, body: () => ({ role: 'user' }), permission: 'members:update', foreignStatus: 404 });
runAuthMatrix({ method: 'DELETE', route: '/api/auth/organizations/members/{user_id}', path: memberPath, permission: 'members:delete', foreignStatus: 404 });
runAuthMatrix({ method: 'GET', route: '/api/auth/organizations/members', path: () => '/api/auth/organizations/members', permission: 'members:read' });

describe('invitations', () => {
  test('invite, list, accept with a matching token: the colleague is a member with the invited role', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const email = uniqueEmail('Colleague');
    const created = await invite(org, email.toUpperCase(), 'agent_manager');
    assert.equal(created.statusCode, 200, created.body);
    const invitation = created.json().data;
    assert.match(invitation.invite_id, /^inv_[a-f0-9]{12}$/);
    assert.equal(invitation.email, email.toLowerCase());
    assert.equal(invitation.client_id, org.orgId);
    assert.equal(invitation.role, 'agent_manager');
    assert.equal(invitation.invited_by, org.userId);
    assert.equal(invitation.status, 'pending');
    assert.equal(Date.parse(invitation.expires_at) - Date.parse(invitation.created_at), 7 * 86_400_000);
    // The email job runs on the worker: the outbox mailer stores the message.
    let mail;
    for (let i = 0; i < 100; i++) {
      mail = await database.db.execute(sql`SELECT subject, text FROM outbox_emails WHERE "to" = ${email.toLowerCase()}`);
      if (mail.rows.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(mail!.rows.length, 1);
    assert.match(String(mail!.rows[0]!.text), new RegExp(`/api/auth/invitations/${invitation.invite_id}/accept`));

    const listed = await app.inject({ url: '/api/auth/organizations/invitations', headers: asRole(org, 'user') });
    assert.deepEqual(Object.keys(listed.json()), ['invitations']);
    assert.deepEqual(listed.json().invitations, [invitation]);
    assert.equal((await invite(org, email)).json().code, 'invitation_pending');

    const accepted = await accept(invitation.invite_id, email.toUpperCase());
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.json().data.role, 'agent_manager');
    assert.equal(accepted.json().data.invitation.status, 'accepted');
    const members = (await app.inject({ url: '/api/auth/organizations/members', headers: asRole(org, 'user') })).json().data;
    assert.ok(members.some((m: { user_id: string; role: string }) => m.user_id === accepted.json().data.user_id && m.role === 'agent_manager'));
    const token = await userToken({ sub: `sub-${email.toUpperCase()}`, email });
    const asColleague = await app.inject({ url: '/api/agents', headers: { authorization: `Bearer ${token}`, 'x-organization-id': org.orgId } });
    assert.equal(asColleague.statusCode, 200);

    assert.deepEqual((await app.inject({ url: '/api/auth/organizations/invitations', headers: asRole(org, 'user') })).json().invitations, []);
    assert.equal((await accept(invitation.invite_id, email)).json().code, 'invitation_accepted');
    const cancelAccepted = await app.inject({ method: 'DELETE', url: `/api/auth/organizations/invitations/${invitation.invite_id}`, headers: asRole(org, 'admin') });
    assert.equal(cancelAccepted.statusCode, 409);
    assert.equal((await invite(org, email)).json().code, 'already_member');
  });

  test("accept: another address's token → 403, an API key → 403, unknown → 404, cancelled and expired → 409", async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const email = uniqueEmail();
    const id = (await invite(org, email)).json().data.invite_id;
    assert.equal((await accept(id, uniqueEmail('intruder'))).statusCode, 403);
    const withKey = await app.inject({ method: 'POST', url: `/api/auth/invitations/${id}/accept`, headers: { 'x-api-key': org.keys.admin } });
    assert.equal(withKey.statusCode, 403);
    assert.equal((await accept('inv_000000000000', email)).statusCode, 404);

    const cancelled = await app.inject({ method: 'DELETE', url: `/api/auth/organizations/invitations/${id}`, headers: asRole(org, 'admin') });
    assert.equal(cancelled.statusCode, 200);
    assert.equal(cancelled.json().data.status, 'cancelled');
    assert.equal((await accept(id, email)).json().code, 'invitation_cancelled');
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/auth/organizations/invitations/${id}`, headers: asRole(org, 'admin') })).statusCode, 409);

    const again = (await invite(org, email)).json().data;
    await database.db.execute(sql`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = ${again.invite_id}`);
    assert.deepEqual((await app.inject({ url: '/api/auth/organizations/invitations', headers: asRole(org, 'user') })).json().invitations, []);
    const expired = await accept(again.invite_id, email);
    assert.equal(expired.statusCode, 409);
    assert.equal(expired.json().code, 'invitation_expired');
    const renewed = await invite(org, email);
    assert.equal(renewed.statusCode, 200, 'a lapsed invitation does not block a new one');
  });

  test('bad bodies → 400; another organization cannot cancel; concurrent invitations of one address: one wins', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    for (const payload of [{ email: 'not-an-email', role: 'user' }, { email: uniqueEmail(), role: 'owner' }, { email: uniqueEmail() }]) {
      const res = await app.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers: asRole(org, 'admin'), payload });
      assert.equal(res.statusCode, 400);
    }
    const id = (await invite(org, uniqueEmail())).json().data.invite_id;
    const foreign = await app.inject({ method: 'DELETE', url: `/api/auth/organizations/invitations/${id}`, headers: asRole(other, 'admin') });
    assert.equal(foreign.statusCode, 404);
    const email = uniqueEmail('race');
    const results = await Promise.all(Array.from({ length: 6 }, () => invite(org, email)));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409, 409, 409, 409, 409]);
  });
});

describe('members', () => {
  test('roles change, keys above the new role are revoked; removal revokes every key of the member', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const manager = await addMember(org, 'agent_manager');
    const path = `/api/auth/organizations/members/${manager.userId}`;
    const demoted = await app.inject({ method: 'PATCH', url: path, headers: asRole(org, 'admin'), payload: { role: 'user' } });
    assert.equal(demoted.statusCode, 200, demoted.body);
    assert.equal(demoted.json().data.role, 'user');
    assert.equal((await app.inject({ url: '/api/agents', headers: keyHeaders(org, manager.key) })).statusCode, 401, 'the agent_manager key is revoked');

    const member = await addMember(org, 'user');
    const removed = await app.inject({ method: 'DELETE', url: `/api/auth/organizations/members/${member.userId}`, headers: asRole(org, 'admin') });
    assert.equal(removed.statusCode, 200);
    assert.equal((await app.inject({ url: '/api/agents', headers: keyHeaders(org, member.key) })).statusCode, 401);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/auth/organizations/members/${member.userId}`, headers: asRole(org, 'admin') })).statusCode, 404);
    assert.equal((await app.inject({ method: 'PATCH', url: path, headers: asRole(org, 'admin'), payload: { role: 'chief' } })).statusCode, 400);
  });

  test('the last admin can be neither demoted nor removed, also when two admins demote each other at once', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const self = `/api/auth/organizations/members/${org.userId}`;
    for (const request of [{ method: 'PATCH' as const, payload: { role: 'user' } }, { method: 'DELETE' as const }]) {
      const res = await app.inject({ ...request, url: self, headers: asRole(org, 'admin') });
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().code, 'last_admin');
    }
    const second = await addMember(org, 'admin');
    const results = await Promise.all([
      app.inject({ method: 'PATCH', url: self, headers: keyHeaders(org, second.key), payload: { role: 'user' } }),
      app.inject({ method: 'PATCH', url: `/api/auth/organizations/members/${second.userId}`, headers: asRole(org, 'admin'), payload: { role: 'user' } }),
    ]);
    const codes = results.map((r) => r.statusCode).sort();
    assert.ok(codes[0] === 200 && codes[1] !== 200, JSON.stringify(results.map((r) => r.body)));
    const members = (await app.inject({ url: '/api/auth/organizations/members', headers: asRole(org, 'user') })).json().data;
    assert.equal(members.filter((m: { role: string }) => m.role === 'admin').length, 1);
  });
});

describe('invitations: the email job with the SMTP mailer (smtp-server on 127.0.0.1)', () => {
  let smtp: SMTPServer;
  let port: number;
  const received: Array<{ to: string[]; body: string }> = [];
  before(async () => {
    smtp = new SMTPServer({
      authOptional: true, disabledCommands: ['STARTTLS'],
      onData(stream, session, done) {
        let body = '';
        stream.on('data', (c: Buffer) => { body += c.toString('utf8'); });
        stream.on('end', () => { received.push({ to: session.envelope.rcptTo.map((r) => r.address), body }); done(); });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    port = (smtp.server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

  const emailer = async (smtpPort: number) => {
    const { database, services } = await testEnv();
    const mailer = new SmtpMailer(`smtp://127.0.0.1:${smtpPort}`, 'Switchboard <team@switchboard.test>');
    return new InvitationEmailer({ db: database.db, mailer: async () => mailer, publicBaseUrl: 'https://switchboard.example.test', organizations: services.organizations });
  };

  test('the invitation email reaches the SMTP server with the accept link', async () => {
    const org = await createOrg('Acme Dental');
    const email = uniqueEmail('smtp');
    const invitation = (await invite(org, email)).json().data;
    await (await emailer(port)).send({ clientId: org.orgId, inviteId: invitation.invite_id });
    const mail = received.find((m) => m.to.includes(email));
    assert.ok(mail, 'received');
    assert.match(mail.body, /From: Switchboard <team@switchboard\.test>/);
    assert.match(mail.body, /Acme Dental/);
    assert.ok(mail.body.replace(/=\r\n/g, '').includes(`https://switchboard.example.test/api/auth/invitations/${invitation.invite_id}/accept`));
  });

  test('a mail server that refuses fails the job (so it is retried); a cancelled invitation gets no email', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const email = uniqueEmail('later');
    const invitation = (await invite(org, email)).json().data;
    const closed = await freePort();
    await assert.rejects((await emailer(closed)).send({ clientId: org.orgId, inviteId: invitation.invite_id }));
    await app.inject({ method: 'DELETE', url: `/api/auth/organizations/invitations/${invitation.invite_id}`, headers: asRole(org, 'admin') });
    await (await emailer(port)).send({ clientId: org.orgId, inviteId: invitation.invite_id });
    assert.equal(received.filter((m) => m.to.includes(email)).length, 0);
  });
});

