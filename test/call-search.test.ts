import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import fc from 'fast-check';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall, patchCall, uploadRecording } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';

/**
 * The calls list's filters and transcript search (extensions.md §4) checked against a brute-force
 * filter of the seeded calls, written here from the contract's words.
 */

// Words that are their own English stem, none a stop word and no two with one stem: a token of the
// transcript matches a query word exactly when they are equal, so the brute force needs no stemmer.
const WORDS = ['refund', 'parcel', 'delay', 'weather', 'ticket', 'cancel', 'pizza', 'banana', 'invoice', 'modem'];
const NUMBERS = ['+14155550100', '+14155550111', '+14155550122'];

interface Seeded {
  call_sid: string; created_at: string; agent_id: string; status: string; call_type: string; end_reason: string | null;
  billing_status: string; to_number: string; from_number: string | null; duration_seconds: number | null; total_cost: number | null;
  has_recording: boolean; metadata: Record<string, unknown>; transcript: Array<{ text: string }>; campaign_id: string | null;
}

let org: TestOrg;
let other: TestOrg;
let seeded: Seeded[] = [];
let agents: string[] = [];

function rng(seed: number) {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
}

const list = async (as: TestOrg, query: string) => {
  const { app } = await testEnv();
  return app.inject({ method: 'GET', url: `/api/calls?${query}`, headers: asRole(as, 'user') });
};

/** Every page of the list, followed by its cursor. */
async function listAll(query: string): Promise<Array<{ call_sid: string; snippet?: string }>> {
  const items = [];
  let cursor: string | null = null;
  do {
    const res = await list(org, `limit=7&${query}${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    const page = res.json();
    items.push(...page.data);
    cursor = page.pagination.next_cursor;
  } while (cursor);
  return items;
}

const newestFirst = (a: Seeded, b: Seeded) => (a.created_at === b.created_at ? (a.call_sid < b.call_sid ? 1 : -1) : a.created_at < b.created_at ? 1 : -1);
const expected = (keep: (c: Seeded) => boolean) => seeded.filter(keep).sort(newestFirst).map((c) => c.call_sid);
const tokens = (c: Seeded) => c.transcript.flatMap((t) => t.text.toLowerCase().split(/[^a-z]+/).filter(Boolean));

before(async () => {
  const { database } = await testEnv();
  org = await createOrg();
  other = await createOrg();
  await setConcurrencyLimit(org.orgId, 10_000);
  agents = [(await createAgent(org, { recording_enabled: true })).agent_id, (await createAgent(org, { recording_enabled: true })).agent_id];
  const random = rng(7);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  for (let i = 0; i < 48; i++) {
    const metadata: Record<string, unknown> = {};
    if (random() < 0.6) metadata.customer_id = pick(['c-1', 'c-2', 'c-3']);
    if (random() < 0.3) metadata.tier = pick(['gold', 'silver']);
    if (random() < 0.2) metadata.score = 42; // not a string: its text is "42"
    const created = await createCall(org, pick(agents), {
      call_type: pick(['inbound', 'outbound']), to_number: pick(NUMBERS), from_number: pick(NUMBERS), metadata,
    });
    const turns = Array.from({ length: Math.floor(random() * 4) }, () => ({
      role: pick(['agent', 'user'] as const), text: Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(WORDS)).join(' '), start_seconds: 0,
    }));
    const kind = random();
    if (kind < 0.7) {
      const report: Record<string, unknown> = { status: pick(['completed', 'failed', 'no_answer']), end_reason: pick(['user_hangup', 'agent_hangup', 'error']), transcript: turns };
      if (random() < 0.8) report.duration_seconds = Math.round(random() * 6000) / 10;
      if (random() < 0.8) report.total_cost = Math.round(random() * 500) / 100;
      assert.equal((await patchCall(org, created.call_sid, report)).statusCode, 200);
    } else if (kind < 0.85) {
      assert.equal((await patchCall(org, created.call_sid, { status: 'in_progress', transcript: turns })).statusCode, 200);
    }
    if (random() < 0.25) assert.equal((await uploadRecording(org, created.call_sid, toneWav(0.05, 440))).statusCode, 200);
    if (random() < 0.25) {
      await database.pool.query('UPDATE calls SET campaign_id = $3 WHERE client_id = $1 AND call_sid = $2', [org.orgId, created.call_sid, pick(['camp_a', 'camp_b'])]);
    }
  }
  const { app } = await testEnv();
  const { rows } = await database.pool.query('SELECT call_sid, campaign_id FROM calls WHERE client_id = $1', [org.orgId]);
  const campaigns = new Map(rows.map((r) => [r.call_sid, r.campaign_id]));
  for (const row of rows) {
    const call = (await app.inject({ method: 'GET', url: `/api/calls/${row.call_sid}`, headers: asRole(org, 'user') })).json().data;
    seeded.push({ ...call, campaign_id: campaigns.get(call.call_sid) ?? null });
  }
  // Another organization's calls carry the same words: no filter may reach them.
  const theirs = await createCall(other, (await createAgent(other)).agent_id, { metadata: { customer_id: 'c-1' } });
  await patchCall(other, theirs.call_sid, { status: 'completed', transcript: [{ role: 'user', text: WORDS.join(' '), start_seconds: 0 }] });
});

describe('calls list: filters', () => {
  test('each filter, and combinations, return exactly the calls the contract names, newest first', async () => {
    const c = seeded;
    assert.ok(c.some((x) => x.has_recording) && c.some((x) => x.campaign_id) && c.some((x) => x.duration_seconds === null));
    const cases: Array<[string, (c: Seeded) => boolean]> = [
      ['', () => true],
      ['end_reason=user_hangup', (x) => x.end_reason === 'user_hangup'],
      ['billing_status=waived', (x) => x.billing_status === 'waived'],
      ['billing_status=pending', (x) => x.billing_status === 'pending'],
      [`phone_number=${encodeURIComponent(NUMBERS[1]!)}`, (x) => x.to_number === NUMBERS[1] || x.from_number === NUMBERS[1]],
      ['min_duration=200', (x) => x.duration_seconds !== null && x.duration_seconds >= 200],
      ['max_duration=200', (x) => x.duration_seconds !== null && x.duration_seconds <= 200],
      ['min_duration=100&max_duration=300.5', (x) => x.duration_seconds !== null && x.duration_seconds >= 100 && x.duration_seconds <= 300.5],
      ['min_cost=2.5', (x) => x.total_cost !== null && x.total_cost >= 2.5],
      ['max_cost=1', (x) => x.total_cost !== null && x.total_cost <= 1],
      ['has_recording=true', (x) => x.has_recording],
      ['has_recording=false', (x) => !x.has_recording],
      ['campaign_id=camp_a', (x) => x.campaign_id === 'camp_a'],
      ['metadata.customer_id=c-1', (x) => x.metadata.customer_id === 'c-1'],
      ['metadata.customer_id=c-2&metadata.tier=gold', (x) => x.metadata.customer_id === 'c-2' && x.metadata.tier === 'gold'],
      ['metadata.score=42', (x) => x.metadata.score === 42],
      ['metadata.missing=x', () => false],
      [`agent_id=${agents[0]}&status=completed&has_recording=false`, (x) => x.agent_id === agents[0] && x.status === 'completed' && !x.has_recording],
      ['call_type=outbound&min_cost=0&end_reason=error', (x) => x.call_type === 'outbound' && x.total_cost !== null && x.end_reason === 'error'],
    ];
    for (const [query, keep] of cases) {
      assert.deepEqual((await listAll(query)).map((i) => i.call_sid), expected(keep), query);
    }
  });

  test('random combinations of filters agree with the brute force', async () => {
    const random = rng(99);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const options: Array<() => [string, (c: Seeded) => boolean]> = [
      () => { const a = pick(agents); return [`agent_id=${a}`, (x) => x.agent_id === a]; },
      () => { const s = pick(['completed', 'failed', 'in_progress', 'queued']); return [`status=${s}`, (x) => x.status === s]; },
      () => { const r = pick(['user_hangup', 'agent_hangup', 'error']); return [`end_reason=${r}`, (x) => x.end_reason === r]; },
      () => { const n = pick(NUMBERS); return [`phone_number=${encodeURIComponent(n)}`, (x) => x.to_number === n || x.from_number === n]; },
      () => { const d = Math.round(random() * 600); return [`min_duration=${d}`, (x) => x.duration_seconds !== null && x.duration_seconds >= d]; },
      () => { const k = Math.round(random() * 500) / 100; return [`max_cost=${k}`, (x) => x.total_cost !== null && x.total_cost <= k]; },
      () => { const h = random() < 0.5; return [`has_recording=${h}`, (x) => x.has_recording === h]; },
      () => { const v = pick(['c-1', 'c-2', 'c-3']); return [`metadata.customer_id=${v}`, (x) => x.metadata.customer_id === v]; },
      () => { const w = pick(WORDS); return [`q=${w}`, (x) => tokens(x).includes(w)]; },
    ];
    for (let i = 0; i < 25; i++) {
      const chosen = new Map<number, [string, (c: Seeded) => boolean]>();
      for (let j = 0; j < 1 + Math.floor(random() * 3); j++) {
        const index = Math.floor(random() * options.length);
        chosen.set(index, options[index]!());
      }
      const parts = [...chosen.values()];
      const query = parts.map(([q]) => q).join('&');
      assert.deepEqual((await listAll(query)).map((x) => x.call_sid), expected((x) => parts.every(([, keep]) => keep(x))), query);
    }
  });

  test('bad filter values are 400; another organization sees none of these calls', async () => {
    for (const query of ['min_duration=-1', 'max_cost=abc', 'phone_number=12345', 'has_recording=maybe', 'end_reason=bored', 'billing_status=free',
      'q=', `q=${'x'.repeat(501)}`, 'metadata.=x', `metadata.${'k'.repeat(65)}=x`, 'metadata.a=1&metadata.a=2', 'metadatax=1',
      Array.from({ length: 11 }, (_, i) => `metadata.k${i}=v`).join('&')]) {
      const res = await list(org, query);
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
      assert.equal(res.json().code, 'validation_error', query);
    }
    for (const query of ['metadata.customer_id=c-1', `q=${WORDS[0]}`, `phone_number=${encodeURIComponent(NUMBERS[0]!)}`]) {
      const theirs = (await list(other, query)).json().data.map((c: { call_sid: string }) => c.call_sid);
      assert.ok(theirs.every((sid: string) => !seeded.some((c) => c.call_sid === sid)), query);
      assert.equal(theirs.length, query.startsWith('phone') ? 1 : 1, query);
    }
  });
});

describe('calls list: transcript search (q)', () => {
  test('words must all occur, "phrases" in order, -word excludes; items add a snippet of the best turn', async () => {
    const phrase = (c: Seeded, words: string[]) => {
      const t = tokens(c);
      return t.some((_, i) => words.every((w, j) => t[i + j] === w));
    };
    const [a, b, d] = WORDS as [string, string, string];
    const cases: Array<[string, (c: Seeded) => boolean]> = [
      [a, (x) => tokens(x).includes(a)],
      [`${a} ${b}`, (x) => tokens(x).includes(a) && tokens(x).includes(b)],
      [`${a.toUpperCase()} -${b}`, (x) => tokens(x).includes(a) && !tokens(x).includes(b)],
      [`"${a} ${b}"`, (x) => phrase(x, [a, b])],
      [`"${b} ${a}" -${d}`, (x) => phrase(x, [b, a]) && !tokens(x).includes(d)],
      [`${a} or ${d}`, (x) => tokens(x).includes(a) || tokens(x).includes(d)],
      [`-${a}`, (x) => !tokens(x).includes(a)],
      ['zebra', () => false],
    ];
    for (const [q, keep] of cases) {
      const found = await listAll(`q=${encodeURIComponent(q)}`);
      const want = expected(keep);
      assert.ok(q === 'zebra' || want.length > 0, `the seed has calls for ${q}`);
      assert.deepEqual(found.map((i) => i.call_sid), want, q);
      for (const item of found) {
        const call = seeded.find((c) => c.call_sid === item.call_sid)!;
        assert.equal(typeof item.snippet, 'string', q);
        if (call.transcript.length === 0) assert.equal(item.snippet, '');
        else assert.ok(call.transcript.some((t) => t.text === item.snippet), `${q}: the snippet is a (short) turn`);
        if (!q.startsWith('-') && !q.includes(' or ')) {
          assert.ok(item.snippet!.toLowerCase().split(' ').includes(a) || item.snippet!.toLowerCase().split(' ').includes(b), `${q}: ${item.snippet}`);
        }
      }
    }
    // Without q, items carry no snippet.
    assert.equal((await list(org, 'limit=1')).json().data[0].snippet, undefined);
  });

  test('English stems, a 200-character window of a long turn around the match, the redacted text only', async () => {
    const { app } = await testEnv();
    const mine = await createOrg();
    const agent = (await createAgent(mine)).agent_id;
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');
    const long = `${filler(80)} the customer asked for a refund of the invoice ${filler(80)}`;
    const call = await createCall(mine, agent);
    await patchCall(mine, call.call_sid, { status: 'completed', transcript: [
      { role: 'agent', text: 'Hello, how can I help?', start_seconds: 0 },
      { role: 'user', text: long, start_seconds: 2 },
      { role: 'agent', text: 'Refunds are possible.', start_seconds: 9 },
    ] });
    const search = async (q: string) => (await app.inject({ method: 'GET', url: `/api/calls?q=${encodeURIComponent(q)}`, headers: asRole(mine, 'user') })).json().data;
    assert.equal((await search('refunded')).length, 1, 'refunded finds refund');
    const [hit] = await search('"refund of the invoice"');
    assert.ok(Array.from(hit.snippet as string).length <= 200);
    assert.ok(long.includes(hit.snippet) && hit.snippet.includes('refund of the invoice'), hit.snippet);
    assert.equal((await search('help'))[0].snippet, 'Hello, how can I help?');
    assert.equal((await search('"help refund"')).length, 0);

    await app.inject({ method: 'PATCH', url: '/api/settings/data', headers: asRole(mine, 'admin'), payload: { redact_pii: true } });
    const secret = await createCall(mine, agent);
    await patchCall(mine, secret.call_sid, { status: 'completed', transcript: [{ role: 'user', text: 'mail me at zorro.quux@example.com', start_seconds: 0 }] });
    assert.equal((await search('zorro')).length, 0, 'search sees only the redacted text');
    assert.equal((await search('mail'))[0].call_sid, secret.call_sid);
  });

  test('any q and metadata filter: never a server error', async () => {
    await fc.assert(fc.asyncProperty(
      fc.string({ minLength: 1, maxLength: 60, unit: fc.constantFrom(...Array.from('ab "-()|&!:*\\\'<>~,.é🙂'), ...WORDS.map((w) => ` ${w} `)) }),
      fc.string({ minLength: 1, maxLength: 20 }), fc.string({ maxLength: 20 }),
      async (q, key, value) => {
        const res = await list(org, `q=${encodeURIComponent(q)}&metadata.${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
        assert.ok(res.statusCode === 200 || res.statusCode === 400, `${q} ${key}=${value}: ${res.statusCode} ${res.body}`);
      },
    ), { numRuns: 150, seed: 4 });
  });
});
