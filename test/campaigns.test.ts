import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { ALWAYS, addContacts, assertProgressTrue, campaignAction, createCampaign, createOutboundNumber, csvForm, getCampaign } from './helpers/campaigns.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';

let seq = 0;
const number = () => `+1415555${String(++seq).padStart(4, '0')}`;
const campaignPath = async (org: TestOrg) => `/api/campaigns/${(await createCampaign(org)).campaign_id}`;
const startedPath = async (org: TestOrg) => {
  const c = await createCampaign(org, { schedule: { timezone: 'UTC', windows: [{ days: ['mon'], start: '00:00', end: '00:01' }], start_at: '2999-01-01T00:00:00Z' } });
  await addContacts(org, c.campaign_id, [{ phone_number: number() }]);
  return `/api/campaigns/${c.campaign_id}`;
};
const createBody = () => ({ name: 'm', agent_id: 'agent_000000000000', from_phone_number_id: 'phon_000000000000', schedule: ALWAYS });

runAuthMatrix({ method: 'POST', route: '/api/campaigns', path: () => '/api/campaigns', body: createBody, permission: 'campaigns:create' });
runAuthMatrix({ method: 'GET', route: '/api/campaigns', path: () => '/api/campaigns', permission: 'campaigns:read' });
runAuthMatrix({ method: 'GET', route: '/api/campaigns/{campaign_id}', path: campaignPath, permission: 'campaigns:read', foreignStatus: 404 });
runAuthMatrix({ method: 'PATCH', route: '/api/campaigns/{campaign_id}', path: campaignPath, body: () => ({ name: 'renamed' }), permission: 'campaigns:update', foreignStatus: 404 });
runAuthMatrix({ method: 'DELETE', route: '/api/campaigns/{campaign_id}', path: campaignPath, permission: 'campaigns:delete', foreignStatus: 404 });
runAuthMatrix({
  method: 'POST', route: '/api/campaigns/{campaign_id}/contacts', path: async (org) => `${await campaignPath(org)}/contacts`,
  body: () => ({ contacts: [{ phone_number: number() }] }), permission: 'campaigns:update', foreignStatus: 404,
});
runAuthMatrix({ method: 'GET', route: '/api/campaigns/{campaign_id}/contacts', path: async (org) => `${await campaignPath(org)}/contacts`, permission: 'campaigns:read', foreignStatus: 404 });
runAuthMatrix({ method: 'GET', route: '/api/campaigns/{campaign_id}/results', path: async (org) => `${await campaignPath(org)}/results`, permission: 'campaigns:read', foreignStatus: 404 });
runAuthMatrix({ method: 'POST', route: '/api/campaigns/{campaign_id}/start', path: async (org) => `${await startedPath(org)}/start`, permission: 'campaigns:update', foreignStatus: 404 });
runAuthMatrix({ method: 'POST', route: '/api/campaigns/{campaign_id}/pause', path: async (org) => `${await campaignPath(org)}/pause`, permission: 'campaigns:update', foreignStatus: 404 });
runAuthMatrix({ method: 'POST', route: '/api/campaigns/{campaign_id}/resume', path: async (org) => `${await campaignPath(org)}/resume`, permission: 'campaigns:update', foreignStatus: 404 });
runAuthMatrix({ method: 'POST', route: '/api/campaigns/{campaign_id}/cancel', path: async (org) => `${await campaignPath(org)}/cancel`, permission: 'campaigns:update', foreignStatus: 404 });

describe('campaigns', () => {
  test('create applies the contract defaults and checks agent, number and schedule', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const c = await createCampaign(org);
    assert.match(c.campaign_id, /^cmp_[a-f0-9]{12}$/);
    assert.equal(c.status, 'draft');
    assert.equal(c.max_concurrency, 5);
    assert.equal(c.calls_per_minute, 60);
    assert.deepEqual(c.retry, { max_attempts: 3, on: ['busy', 'no_answer', 'failed'], delay_minutes: 30 });
    assert.deepEqual(c.schedule, { ...ALWAYS, start_at: null, end_at: null });
    assert.deepEqual(c.progress, { total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, retrying: 0, skipped: 0 });
    assert.equal(c.client_id, org.orgId);

    const agent = await createAgent(org);
    const outbound = await createOutboundNumber(org);
    const inboundOnly = await createOutboundNumber(org, false);
    const base = { name: 'x', agent_id: agent.agent_id, from_phone_number_id: outbound.phone_number_id, schedule: ALWAYS };
    const post = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/campaigns', headers: asRole(org, 'admin'), payload });
    assert.equal((await post({ ...base, agent_id: 'agent_ffffffffffff' })).statusCode, 404);
    assert.equal((await post({ ...base, from_phone_number_id: 'phon_ffffffffffff' })).statusCode, 404);
    const refused = await post({ ...base, from_phone_number_id: inboundOnly.phone_number_id });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'outbound_not_supported');
    const bad: Array<[string, Record<string, unknown>]> = [
      ['body.schedule.timezone', { schedule: { ...ALWAYS, timezone: 'Mars/Olympus' } }],
      ['body.schedule.windows.0.end', { schedule: { timezone: 'UTC', windows: [{ days: ['mon'], start: '17:00', end: '09:00' }] } }],
      ['body.schedule.windows', { schedule: { timezone: 'UTC', windows: [] } }],
      ['body.schedule.end_at', { schedule: { ...ALWAYS, start_at: '2030-01-02T00:00:00Z', end_at: '2030-01-01T00:00:00Z' } }],
      ['body.max_concurrency', { max_concurrency: 0 }],
      ['body.calls_per_minute', { calls_per_minute: 601 }],
      ['body.retry.on', { retry: { on: ['completed'] } }],
      ['body.schedule.windows.0.start', { schedule: { timezone: 'UTC', windows: [{ days: ['mon'], start: '9:00', end: '10:00' }] } }],
    ];
    for (const [path, change] of bad) {
      const res = await post({ ...base, ...change });
      assert.equal(res.statusCode, 400, `${path}: ${res.body}`);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path.startsWith(path)), res.body);
    }
    const custom = (await post({ ...base, max_concurrency: 50, calls_per_minute: 600, retry: { max_attempts: 1 } })).json().data;
    assert.deepEqual([custom.max_concurrency, custom.calls_per_minute, custom.retry.max_attempts, custom.retry.delay_minutes], [50, 600, 1, 30]);
  });

  test('list, get, patch and delete only while draft or paused; another organization sees nothing', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const first = await createCampaign(org);
    const second = await createCampaign(org);
    const list = (await app.inject({ method: 'GET', url: '/api/campaigns?page_size=1', headers: asRole(org, 'user') })).json();
    assert.deepEqual(list.data.map((c: { campaign_id: string }) => c.campaign_id), [second.campaign_id]);
    const next = (await app.inject({ method: 'GET', url: `/api/campaigns?page_size=1&cursor=${list.pagination.next_cursor}`, headers: asRole(org, 'user') })).json();
    assert.deepEqual(next.data.map((c: { campaign_id: string }) => c.campaign_id), [first.campaign_id]);
    const foreign = (await app.inject({ method: 'GET', url: '/api/campaigns', headers: asRole(other, 'admin') })).json();
    assert.equal(foreign.data.length, 0);

    const patched = await app.inject({ method: 'PATCH', url: `/api/campaigns/${first.campaign_id}`, headers: asRole(org, 'admin'), payload: { name: 'Renamed', max_concurrency: 2 } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().data.name, 'Renamed');
    assert.equal(patched.json().data.max_concurrency, 2);

    await addContacts(org, first.campaign_id, [{ phone_number: number() }]);
    assert.equal((await campaignAction(org, first.campaign_id, 'start')).statusCode, 200);
    const whileRunning = await app.inject({ method: 'PATCH', url: `/api/campaigns/${first.campaign_id}`, headers: asRole(org, 'admin'), payload: { name: 'No' } });
    assert.equal(whileRunning.statusCode, 409);
    assert.equal(whileRunning.json().code, 'invalid_campaign_transition');
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/campaigns/${first.campaign_id}`, headers: asRole(org, 'admin') })).statusCode, 409);
    assert.equal((await campaignAction(org, first.campaign_id, 'pause')).statusCode, 200);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/campaigns/${first.campaign_id}`, headers: asRole(org, 'admin') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: `/api/campaigns/${first.campaign_id}`, headers: asRole(org, 'admin') })).statusCode, 404);
  });

  test('transitions follow the life cycle; anything else is 409', async () => {
    const org = await createOrg();
    const c = await createCampaign(org);
    const empty = await campaignAction(org, c.campaign_id, 'start');
    assert.equal(empty.statusCode, 409);
    assert.equal(empty.json().code, 'campaign_has_no_contacts');
    for (const action of ['pause', 'resume']) assert.equal((await campaignAction(org, c.campaign_id, action)).statusCode, 409, action);
    await addContacts(org, c.campaign_id, [{ phone_number: number() }, { phone_number: number() }]);
    const expect = async (action: string, status: number, state?: string) => {
      const res = await campaignAction(org, c.campaign_id, action);
      assert.equal(res.statusCode, status, `${action}: ${res.body}`);
      if (state) assert.equal(res.json().data.status, state);
    };
    await expect('resume', 409);
    await expect('start', 200, 'running');
    await expect('start', 409);
    await expect('resume', 409);
    await expect('pause', 200, 'paused');
    await expect('pause', 409);
    await expect('resume', 200, 'running');
    await expect('cancel', 200, 'cancelled');
    for (const action of ['start', 'pause', 'resume', 'cancel']) await expect(action, 409);
    const progress = await assertProgressTrue(org, c.campaign_id);
    assert.equal(progress.skipped + progress.in_progress + progress.failed + progress.completed, 2);
    const late = await (await testEnv()).app.inject({
      method: 'POST', url: `/api/campaigns/${c.campaign_id}/contacts`, headers: asRole(org, 'admin'), payload: { contacts: [{ phone_number: number() }] },
    });
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'campaign_finished');
  });

  test('a CSV upload streams in: bad rows are reported by row and reason, good rows are added with their variables', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const c = await createCampaign(org);
    const a = number();
    const b = number();
    const csv = [
      'phone_number,first_name,appointment',
      `${a},Ada,Monday 10:00`, // row 1
      'not-a-number,Bob,x', // row 2
      `${b},"Lovelace, Ada","She said ""hi"""`, // row 3
      `${a},Again,dup`, // row 4: duplicate of row 1
      `${number()},Short`, // row 5: missing column
      `${number()},A,B,C`, // row 6: extra column
      '+0123,Zero,x', // row 7: not E.164
      '',
    ].join('\r\n');
    const form = csvForm(`\uFEFF${csv}`);
    const res = await app.inject({ method: 'POST', url: `/api/campaigns/${c.campaign_id}/contacts`, headers: asRole(org, 'agent_manager', { 'content-type': form.contentType }), payload: form.body });
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.equal(data.accepted, 2);
    assert.deepEqual(data.rejected, [
      { row: 2, reason: 'invalid_phone_number' }, { row: 4, reason: 'duplicate' }, { row: 5, reason: 'missing_column' },
      { row: 6, reason: 'extra_column' }, { row: 7, reason: 'invalid_phone_number' },
    ]);
    assert.equal(data.rejected_count, 5);
    const contacts = (await app.inject({ method: 'GET', url: `/api/campaigns/${c.campaign_id}/contacts`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual(contacts.map((x: any) => [x.row, x.phone_number, x.variables, x.status, x.attempts, x.call_sids]), [
      [1, a, { first_name: 'Ada', appointment: 'Monday 10:00' }, 'pending', 0, []],
      [3, b, { first_name: 'Lovelace, Ada', appointment: 'She said "hi"' }, 'pending', 0, []],
    ]);
    // A later upload (JSON) meets the same duplicate rule.
    const again = await addContacts(org, c.campaign_id, [{ phone_number: b }, { phone_number: number(), variables: { first_name: 'Cy' } }]);
    assert.deepEqual(again, { accepted: 1, rejected: [{ row: 1, reason: 'duplicate' }], rejected_count: 1 });
    assert.deepEqual((await getCampaign(org, c.campaign_id)).progress, { total: 3, pending: 3, in_progress: 0, completed: 0, failed: 0, retrying: 0, skipped: 0 });
  });

  test('a CSV of several batches: a number repeated in a later batch is a duplicate, bad rows anywhere are reported', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const c = await createCampaign(org);
    const phone = (i: number) => `+1555${String(1_000_000 + i)}`;
    const lines = ['phone_number,first_name'];
    for (let row = 1; row <= 2500; row++) {
      if (row === 1500) lines.push('12345,Bad');
      else if (row === 2100) lines.push(`${phone(5)},Again`); // row 5's number, two batches later
      else if (row === 2400) lines.push(`${phone(row)},${'x'.repeat(1001)}`);
      else lines.push(`${phone(row)},Name ${row}`);
    }
    const form = csvForm(lines.join('\n'));
    const res = await app.inject({ method: 'POST', url: `/api/campaigns/${c.campaign_id}/contacts`, headers: asRole(org, 'agent_manager', { 'content-type': form.contentType }), payload: form.body });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().data, {
      accepted: 2497, rejected_count: 3,
      rejected: [{ row: 1500, reason: 'invalid_phone_number' }, { row: 2100, reason: 'duplicate' }, { row: 2400, reason: 'invalid_variables' }],
    });
    assert.equal((await getCampaign(org, c.campaign_id)).progress.total, 2497);
    const first = (await app.inject({ method: 'GET', url: `/api/campaigns/${c.campaign_id}/contacts?page_size=2`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual(first.map((x: any) => [x.row, x.phone_number, x.variables]), [[1, phone(1), { first_name: 'Name 1' }], [2, phone(2), { first_name: 'Name 2' }]]);
  });

  test('a CSV without a phone_number column, an empty file and a malformed row', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const c = await createCampaign(org);
    const upload = (csv: string) => {
      const form = csvForm(csv);
      return app.inject({ method: 'POST', url: `/api/campaigns/${c.campaign_id}/contacts`, headers: asRole(org, 'admin', { 'content-type': form.contentType }), payload: form.body });
    };
    const noColumn = await upload('number,name\n+14155550100,A\n');
    assert.equal(noColumn.statusCode, 400);
    assert.equal(noColumn.json().errors[0].path, 'body.file');
    assert.equal((await upload('')).statusCode, 400);
    const good = number();
    const broken = await upload(`phone_number,name\n${good},ok\n${number()},"unclosed\n`);
    assert.equal(broken.statusCode, 200, broken.body);
    assert.equal(broken.json().data.accepted, 1);
    assert.deepEqual(broken.json().data.rejected, [{ row: 2, reason: 'malformed_row' }]);
    const wrongField = csvForm('phone_number\n+14155550100\n', 'document');
    const res = await app.inject({ method: 'POST', url: `/api/campaigns/${c.campaign_id}/contacts`, headers: asRole(org, 'admin', { 'content-type': wrongField.contentType }), payload: wrongField.body });
    assert.equal(res.statusCode, 400);
  });

  test('at most 100,000 contacts per campaign: the rows past the limit are rejected, the others added', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    const c = await createCampaign(org);
    // 99,998 contacts counted (as 99,998 earlier uploads would leave the counters); three more arrive.
    await database.pool.query('UPDATE campaigns SET total = 99998, skipped = 99998 WHERE id = $1', [c.campaign_id]);
    const result = await addContacts(org, c.campaign_id, [{ phone_number: number() }, { phone_number: 'bad' }, { phone_number: number() }, { phone_number: number() }]);
    assert.deepEqual(result, { accepted: 2, rejected: [{ row: 2, reason: 'invalid_phone_number' }, { row: 4, reason: 'contact_limit' }], rejected_count: 2 });
    assert.equal((await getCampaign(org, c.campaign_id)).progress.total, 100_000);
  });

  test('contacts list pages in upload order and filters by status; bad cursor 400', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const c = await createCampaign(org);
    const numbers = [number(), number(), number()];
    await addContacts(org, c.campaign_id, numbers.map((phone_number) => ({ phone_number })));
    const first = (await app.inject({ method: 'GET', url: `/api/campaigns/${c.campaign_id}/contacts?page_size=2`, headers: asRole(org, 'user') })).json();
    assert.deepEqual(first.data.map((x: any) => x.phone_number), numbers.slice(0, 2));
    const rest = (await app.inject({ method: 'GET', url: `/api/campaigns/${c.campaign_id}/contacts?page_size=2&cursor=${first.pagination.next_cursor}`, headers: asRole(org, 'user') })).json();
    assert.deepEqual(rest.data.map((x: any) => x.phone_number), numbers.slice(2));
    assert.equal(rest.pagination.has_more, false);
    const none = (await app.inject({ method: 'GET', url: `/api/campaigns/${c.campaign_id}/contacts?status=completed`, headers: asRole(org, 'user') })).json();
    assert.equal(none.data.length, 0);
    assert.equal((await app.inject({ method: 'GET', url: `/api/campaigns/${c.campaign_id}/contacts?cursor=zzz`, headers: asRole(org, 'user') })).statusCode, 400);
  });
});
