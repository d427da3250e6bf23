import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import S3rver from 's3rver';
import { S3ObjectStore } from '../src/adapters/storage/s3-object-store.ts';
import { LocalObjectStore, type ObjectStore } from '../src/adapters/storage/object-store.ts';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { RecordingLinks } from '../src/modules/calls/recordings/links.ts';
import { CallExportService } from '../src/modules/calls/exports/service.ts';
import { exportLines } from '../src/modules/calls/exports/writer.ts';
import { callFiltersOf } from '../src/modules/calls/call-filter-queries.ts';
import type { RequestContext } from '../src/core/context.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { TEST_ENCRYPTION_KEY, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall, patchCall, uploadRecording } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';

/** extensions.md §13: exports add the analysis's columns after metadata (tested with analyses in test/call-analysis-filters.test.ts). */
const ANALYSIS_COLUMNS = ['analysis_status', 'analysis_success', 'analysis_success_reason', 'analysis_sentiment', 'analysis_summary', 'analysis_structured_data'];

/**
 * Exports of calls (extensions.md §4): the file's rows are the list's rows for the same filters,
 * read back with a real CSV parser (csv-parse) and JSON.parse; the link is signed for an hour; the
 * export goes after 7 days; the same file through an S3-compatible store (s3rver on 127.0.0.1).
 */

type Item = Record<string, unknown> & { call_sid: string };

let org: TestOrg;
let other: TestOrg;
let agents: string[] = [];
/** Every call of `org` as GET /api/calls/{call_sid} shows it. */
const calls = new Map<string, Record<string, any>>();

function rng(seed: number) {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
}

// Texts a naive CSV writer gets wrong: separators, quotes, line breaks, non-ASCII.
const TEXTS = ['refund please, now', 'he said "cancel" twice', 'line one\nline two', 'naïve café — 日本語 🙂', 'plain parcel delay', '  spaced  ', '=1+2'];

async function listAll(as: TestOrg, query: string): Promise<Item[]> {
  const { app } = await testEnv();
  const items: Item[] = [];
  let cursor: string | null = null;
  do {
    const res: Awaited<ReturnType<typeof app.inject>> = await app.inject({ url: `/api/calls?limit=100&${query}${cursor ? `&cursor=${cursor}` : ''}`, headers: asRole(as, 'user') });
    assert.equal(res.statusCode, 200, res.body);
    items.push(...res.json().data);
    cursor = res.json().pagination.next_cursor;
  } while (cursor);
  return items;
}

async function waitForExport(as: TestOrg, exportId: string, app?: { inject: (o: object) => Promise<any> }) {
  const server = app ?? (await testEnv()).app;
  for (let i = 0; i < 300; i++) {
    const res = await server.inject({ url: `/api/calls/exports/${exportId}`, headers: asRole(as, 'user') });
    assert.equal(res.statusCode, 200, res.body);
    const view = res.json().data;
    if (view.status === 'completed' || view.status === 'failed') return view;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`export ${exportId} did not finish`);
}

async function runExport(as: TestOrg, body: Record<string, unknown>) {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'POST', url: '/api/calls/exports', headers: asRole(as, 'user'), payload: body });
  assert.equal(res.statusCode, 200, res.body);
  const created = res.json().data;
  assert.match(created.export_id, /^exp_[0-9a-f]{12}$/);
  assert.ok(['pending', 'running', 'completed'].includes(created.status));
  const done = await waitForExport(as, created.export_id);
  assert.equal(done.status, 'completed', JSON.stringify(done));
  const file = await app.inject({ url: done.download_url.replace(/^https?:\/\/[^/]+/, '') });
  assert.equal(file.statusCode, 200, file.body);
  return { view: done, file };
}

/** A list item's value as the CSV writes it: nothing for null, JSON text for objects. */
const csvText = (value: unknown) => (value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));

// The same filters as the list's query and as the export's JSON body.
const FILTERS: Array<[string, Record<string, unknown>]> = [
  ['', {}],
  ['status=completed&min_cost=1', { status: 'completed', min_cost: 1 }],
  ['has_recording=true', { has_recording: true }],
  ['metadata.customer_id=c-1', { 'metadata.customer_id': 'c-1' }],
  ['q=refund', { q: 'refund' }],
  ['q=%22cancel%22%20-parcel&max_duration=300', { q: '"cancel" -parcel', max_duration: 300 }],
  ['end_reason=user_hangup&phone_number=%2B14155550122', { end_reason: 'user_hangup', phone_number: '+14155550122' }],
];

before(async () => {
  const { app } = await testEnv();
  org = await createOrg();
  other = await createOrg();
  await setConcurrencyLimit(org.orgId, 10_000);
  agents = [(await createAgent(org, { recording_enabled: true })).agent_id, (await createAgent(org, { agent_name: 'Ágent, "two"' })).agent_id];
  const random = rng(11);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  for (let i = 0; i < 40; i++) {
    const metadata: Record<string, unknown> = random() < 0.6 ? { customer_id: pick(['c-1', 'c-2']), note: pick(TEXTS) } : {};
    const created = await createCall(org, pick(agents), { to_number: pick(['+14155550100', '+14155550122']), metadata });
    const kind = random();
    const transcript = Array.from({ length: Math.floor(random() * 3) }, (_, t) => ({ role: pick(['agent', 'user'] as const), text: pick(TEXTS), start_seconds: t }));
    if (kind < 0.7) {
      const report: Record<string, unknown> = { status: pick(['completed', 'failed']), end_reason: pick(['user_hangup', 'error']), transcript };
      if (random() < 0.8) report.duration_seconds = Math.round(random() * 6000) / 10;
      if (random() < 0.8) report.total_cost = Math.round(random() * 300) / 100;
      assert.equal((await patchCall(org, created.call_sid, report)).statusCode, 200);
    } else if (kind < 0.85) {
      assert.equal((await patchCall(org, created.call_sid, { status: 'in_progress', transcript })).statusCode, 200);
    }
    if (random() < 0.25 && created.recording_enabled) assert.equal((await uploadRecording(org, created.call_sid, toneWav(0.05, 440))).statusCode, 200);
  }
  for (const item of await listAll(org, '')) {
    calls.set(item.call_sid, (await app.inject({ url: `/api/calls/${item.call_sid}`, headers: asRole(org, 'user') })).json().data);
  }
  // Another organization's call matches every filter above: no export of `org` may contain it.
  const theirs = await createCall(other, (await createAgent(other)).agent_id, { metadata: { customer_id: 'c-1' } });
  await patchCall(other, theirs.call_sid, { status: 'completed', transcript: [{ role: 'user', text: 'refund', start_seconds: 0 }] });
});

runAuthMatrix({ method: 'POST', route: '/api/calls/exports', path: () => '/api/calls/exports', body: () => ({ format: 'csv' }), permission: 'calls:export' });
runAuthMatrix({
  method: 'GET', route: '/api/calls/exports/{export_id}', permission: 'calls:export', foreignStatus: 404,
  path: async (owner) => {
    const { app } = await testEnv();
    const res = await app.inject({ method: 'POST', url: '/api/calls/exports', headers: asRole(owner, 'user'), payload: { format: 'jsonl' } });
    return `/api/calls/exports/${res.json().data.export_id}`;
  },
});

describe('call exports: the list\'s rows', () => {
  test('CSV (RFC 4180, header row, CRLF) parsed back has exactly the list\'s items for each set of filters, in its order', async () => {
    assert.ok(calls.size === 40);
    for (const [query, body] of FILTERS) {
      const expected = await listAll(org, query);
      assert.ok(query === '' || expected.length < calls.size, query);
      assert.ok(expected.length > 0, `the seed has calls for ${query}`);
      const { view, file } = await runExport(org, { format: 'csv', ...body });
      assert.equal(file.headers['content-type'], 'text/csv; charset=utf-8');
      assert.equal(file.headers['content-disposition'], `attachment; filename="calls-${view.export_id}.csv"`);
      assert.equal(view.row_count, expected.length, query);
      assert.equal(view.bytes, file.rawPayload.length, query);
      const text = file.rawPayload.toString('utf8');
      const rows: string[][] = parse(file.rawPayload, { relax_column_count: false });
      const header = rows.shift()!;
      // The list item's analysis outcome (analysis_status, _success, _sentiment) is among the analysis columns, after metadata.
      const fields = Object.keys(expected[0]!).filter((f) => !(ANALYSIS_COLUMNS as readonly string[]).includes(f));
      assert.deepEqual(header, [...fields, 'metadata', ...ANALYSIS_COLUMNS], query);
      assert.ok(text.startsWith(`${header.join(',')}\r\n`) && text.endsWith('\r\n'), 'records end in CRLF');
      assert.deepEqual(rows.map((r) => r[0]), expected.map((i) => i.call_sid), query);
      rows.forEach((row, n) => {
        const item = expected[n]!;
        assert.deepEqual(row.slice(0, fields.length), fields.map((f) => csvText(item[f])), `${query}: ${item.call_sid}`);
        assert.deepEqual(JSON.parse(row[fields.length]!), calls.get(item.call_sid)!.metadata);
        assert.deepEqual(row.slice(fields.length + 1), ANALYSIS_COLUMNS.map(() => ''), 'no analysis: empty fields');
      });
    }
  });

  test('JSONL with transcripts: one object a line, the list item plus metadata and the transcript of GET /api/calls/{call_sid}', async () => {
    for (const [query, body] of [FILTERS[0]!, FILTERS[4]!, FILTERS[3]!]) {
      const expected = await listAll(org, query);
      const { view, file } = await runExport(org, { format: 'jsonl', include_transcript: true, ...body });
      assert.equal(file.headers['content-type'], 'application/x-ndjson; charset=utf-8');
      const text = file.rawPayload.toString('utf8');
      assert.ok(text.endsWith('\n'));
      const lines = text.slice(0, -1).split('\n').map((l) => JSON.parse(l));
      assert.equal(view.row_count, lines.length);
      assert.deepEqual(lines, expected.map((item) => ({
        ...item, metadata: calls.get(item.call_sid)!.metadata, ...Object.fromEntries(ANALYSIS_COLUMNS.map((c) => [c, null])), transcript: calls.get(item.call_sid)!.transcript,
      })), query);
    }
  });

  test('read in keyset pages smaller than the result (embedded) or in one COPY (PostgreSQL), the rows are the list\'s calls, each once, in order', async () => {
    const { database } = await testEnv();
    for (const [query, body] of FILTERS) {
      const expected = await listAll(org, query);
      const request = { orgId: org.orgId, filters: callFiltersOf(body, 'body'), includeTranscript: false };
      for (const format of ['jsonl', 'csv'] as const) {
        const counts = { rows: 0 };
        const pieces: Buffer[] = [];
        for await (const piece of exportLines(database, request, format, counts, 3)) pieces.push(piece);
        const file = Buffer.concat(pieces);
        const sids = format === 'jsonl'
          ? file.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l).call_sid)
          : (parse(file, { columns: true }) as Array<Record<string, string>>).map((r) => r.call_sid);
        assert.deepEqual(sids, expected.map((i) => i.call_sid), `${format} ${query}`);
        assert.equal(counts.rows, expected.length, query);
      }
    }
  });

  // A reader ends a record at a bare CR or LF as at CRLF: csv-stringify, given CRLF records, quotes
  // only CRLF unless told to quote the others too (quote_record_delimiter).
  test('a field holding a lone CR or LF is quoted like one holding CRLF, and reads back whole', async () => {
    const crlf = await createOrg();
    const names = ['front\rdesk', 'back\noffice', 'both\r\nends'];
    for (const name of names) {
      const created = await createCall(crlf, (await createAgent(crlf, { agent_name: name })).agent_id);
      const turn = { role: 'user', text: `refund for ${name}`, start_seconds: 0 };
      assert.equal((await patchCall(crlf, created.call_sid, { status: 'completed', transcript: [turn] })).statusCode, 200);
    }
    const expected = await listAll(crlf, 'q=refund');
    const { file } = await runExport(crlf, { format: 'csv', q: 'refund' });
    const text = file.rawPayload.toString('utf8');
    for (const name of names) {
      assert.ok(text.includes(`,"${name}",`), `agent_name ${JSON.stringify(name)} quoted`);
      assert.ok(text.includes(`,"refund for ${name}",`), `snippet of ${JSON.stringify(name)} quoted`);
    }
    const rows = parse(file.rawPayload, { columns: true }) as Array<Record<string, string>>;
    assert.deepEqual(rows.map((r) => [r.call_sid, r.agent_name, r.snippet]), expected.map((i) => [i.call_sid, i.agent_name, i.snippet]));
    assert.deepEqual(rows.map((r) => r.agent_name).sort(), [...names].sort());
  });

  test('an empty result is a header-only file; another organization\'s calls never appear', async () => {
    const { view, file } = await runExport(org, { format: 'csv', q: 'zebra' });
    assert.equal(view.row_count, 0);
    assert.equal(parse(file.rawPayload).length, 1);
    const theirs = await runExport(other, { format: 'jsonl', 'metadata.customer_id': 'c-1' });
    const sids = theirs.file.rawPayload.toString().trim().split('\n').map((l: string) => JSON.parse(l).call_sid);
    assert.equal(sids.length, 1);
    assert.ok(!calls.has(sids[0]));
  });

  test('bad formats and filters are 400 when the export is asked for', async () => {
    const { app } = await testEnv();
    for (const body of [{}, { format: 'xlsx' }, { format: 'csv', min_duration: -1 }, { format: 'csv', status: 'bored' }, { format: 'csv', q: '' },
      { format: 'csv', unknown: 1 }, { format: 'csv', from: 'yesterday' }, { format: 'csv', include_transcript: 'yes' },
      { format: 'csv', ...Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`metadata.k${i}`, 'v'])) }]) {
      const res = await app.inject({ method: 'POST', url: '/api/calls/exports', headers: asRole(org, 'user'), payload: body });
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().code, 'validation_error');
    }
    assert.equal((await app.inject({ url: '/api/calls/exports/exp_000000000000', headers: asRole(org, 'user') })).statusCode, 404);
  });
});

describe('call exports: link and lifetime', () => {
  test('the download link is signed for one hour; a changed, foreign or expired link is 403', async () => {
    const { app } = await testEnv();
    const { view } = await runExport(org, { format: 'csv', status: 'completed' });
    const url = new URL(view.download_url);
    const expires = Number(url.searchParams.get('expires'));
    assert.ok(Math.abs(expires - (Date.now() / 1000 + 3600)) < 60, 'valid one hour');
    const at = (change: (q: URLSearchParams) => void) => {
      const q = new URLSearchParams(url.searchParams);
      change(q);
      return app.inject({ url: `${url.pathname}?${q}` });
    };
    assert.equal((await at(() => {})).statusCode, 200);
    for (const [change, code] of [
      [(q: URLSearchParams) => q.set('sig', `${q.get('sig')!.slice(0, -2)}AA`), 'link_invalid'],
      [(q: URLSearchParams) => q.set('org', other.orgId), 'link_invalid'],
      [(q: URLSearchParams) => q.set('expires', String(expires + 3600)), 'link_invalid'],
    ] as const) {
      const res = await at(change);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().code, code);
    }
    // A link signed (with the deployment's key for export links) an hour and a minute ago has expired.
    const old = new RecordingLinks(TEST_ENCRYPTION_KEY, 'switchboard/export-links/v1').sign(org.orgId, view.export_id, 3600, Date.now() - 3_660_000);
    const expired = await app.inject({ url: `${url.pathname}?${new URLSearchParams({ org: old.orgId, expires: old.expires, sig: old.sig })}` });
    assert.equal(expired.statusCode, 403);
    assert.equal(expired.json().code, 'link_expired');
    // A recording link's signature does not open an export.
    const recording = new RecordingLinks(TEST_ENCRYPTION_KEY).sign(org.orgId, view.export_id, 3600);
    assert.equal((await app.inject({ url: `${url.pathname}?${new URLSearchParams({ org: recording.orgId, expires: recording.expires, sig: recording.sig })}` })).statusCode, 403);
  });

  test('after 7 days the export is gone (404) and the cleanup job deletes its file and row', async () => {
    const { app, database, services, config } = await testEnv();
    const { view } = await runExport(org, { format: 'jsonl' });
    const { rows: [row] } = await database.pool.query('SELECT object_key, expires_at, created_at FROM call_exports WHERE id = $1', [view.export_id]);
    assert.equal(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime(), 7 * 86_400_000);
    const store = new LocalObjectStore(path.join(config.dataDir, 'objects'));
    assert.ok((await store.size(row.object_key))! > 0);
    await database.pool.query("UPDATE call_exports SET expires_at = now() - interval '1 second' WHERE id = $1", [view.export_id]);
    assert.equal((await app.inject({ url: `/api/calls/exports/${view.export_id}`, headers: asRole(org, 'user') })).statusCode, 404);
    assert.equal((await app.inject({ url: view.download_url.replace(/^https?:\/\/[^/]+/, '') })).statusCode, 404);
    assert.ok((await services.callExports.cleanup()) >= 1);
    assert.equal((await database.pool.query('SELECT 1 FROM call_exports WHERE id = $1', [view.export_id])).rowCount, 0);
    assert.equal(await store.size(row.object_key), undefined);
  });
});

describe('call exports: the worker', () => {
  const ctxOf = (as: TestOrg): RequestContext => ({ orgId: as.orgId, actor: { type: 'user', userId: as.userId, email: 'exports@example.com' }, role: 'admin', requestId: 'test' });
  const noQueue = { send: async () => true } as never;

  async function serviceWith(store: ObjectStore) {
    const { database, services } = await testEnv();
    return new CallExportService({
      database, queue: noQueue, store, linkSecret: TEST_ENCRYPTION_KEY, publicBaseUrl: 'http://127.0.0.1:3000', audit: services.audit, log: services.log, retryLimit: 2,
    });
  }

  test('a store that fails is retried, and the last attempt marks the export failed with its error; a finished export is not run again', async () => {
    let attempts = 0;
    const failing = { kind: 'local', putStream: async (_key: string, source: NodeJS.ReadableStream) => {
      attempts += 1;
      for await (const _ of source) { /* read it all, then refuse */ }
      throw new Error('disk full');
    } } as unknown as ObjectStore;
    const service = await serviceWith(failing);
    const created = await service.create(ctxOf(org), { format: 'csv', include_transcript: false });
    const job = { clientId: org.orgId, exportId: created.export_id };
    await assert.rejects(service.run(job, { id: 'j', retryCount: 0 }), /disk full/);
    await assert.rejects(service.run(job, { id: 'j', retryCount: 1 }), /disk full/);
    await service.run(job, { id: 'j', retryCount: 2 });
    const failed = await service.get(ctxOf(org), created.export_id);
    assert.equal(failed.status, 'failed');
    assert.equal(typeof failed.error, 'string');
    assert.equal(failed.download_url, null);
    await service.run(job, { id: 'j', retryCount: 0 });
    assert.equal(attempts, 3, 'a failed export is not run again');
  });

  test('a store that stops reading midway fails the attempt and leaves no connection busy: the next export completes', async () => {
    const stopping = { kind: 'local', putStream: async (_key: string, source: NodeJS.ReadableStream) => {
      for await (const _ of source) break; // the header only: the rows are still coming
      throw new Error('stopped');
    } } as unknown as ObjectStore;
    const service = await serviceWith(stopping);
    const created = await service.create(ctxOf(org), { format: 'jsonl', include_transcript: true });
    await service.run({ clientId: org.orgId, exportId: created.export_id }, { id: 'j', retryCount: 2 });
    assert.equal((await service.get(ctxOf(org), created.export_id)).status, 'failed');
    const { view } = await runExport(org, { format: 'csv' });
    assert.equal(view.row_count, calls.size);
  });

  describe('S3-compatible store (s3rver on 127.0.0.1): a multipart upload and a presigned one-hour link', () => {
    let s3: S3rver;
    let store: S3ObjectStore;
    before(async () => {
      const { tmpDir } = await testEnv();
      s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(tmpDir, 's3rver-exports'), configureBuckets: [{ name: 'switchboard-exp', configs: [] }] });
      const { port } = await s3.run();
      const config = testConfig(tmpDir, {
        STORAGE_BACKEND: 's3', S3_BUCKET: 'switchboard-exp', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER',
      });
      // Parts of 2 KB (real S3 wants 5 MiB but for the last): this export is several parts.
      store = new S3ObjectStore({ ...(config.storage as never as Record<string, unknown>), partBytes: 2048 } as never);
    });
    after(async () => {
      await s3?.close();
    });

    test('the file in the bucket is the list\'s rows; the link is presigned for 3600 s as an attachment', async () => {
      const service = await serviceWith(store);
      const created = await service.create(ctxOf(org), { format: 'csv', include_transcript: true });
      await service.run({ clientId: org.orgId, exportId: created.export_id }, { id: 'j', retryCount: 0 });
      const view = await service.get(ctxOf(org), created.export_id);
      assert.equal(view.status, 'completed');
      assert.ok(view.bytes! > 3 * 2048, 'several parts');
      const url = new URL(view.download_url!);
      assert.equal(url.searchParams.get('X-Amz-Expires'), '3600');
      const res = await fetch(url);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-disposition'), `attachment; filename="calls-${view.export_id}.csv"`);
      const body = Buffer.from(await res.arrayBuffer());
      assert.equal(body.length, view.bytes);
      const rows = parse(body, { columns: true }) as Array<Record<string, string>>;
      const expected = await listAll(org, '');
      assert.deepEqual(rows.map((r) => r.call_sid), expected.map((i) => i.call_sid));
      for (const row of rows) {
        const call = calls.get(row.call_sid)!;
        assert.deepEqual(JSON.parse(row.transcript!), call.transcript);
        assert.equal(row.agent_name, call.agent_name ?? '');
      }
      assert.equal(await store.size(`${org.orgId}/exports/${view.export_id}.csv`), view.bytes);
    });
  });
});
