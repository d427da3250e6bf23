import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import S3rver from 's3rver';
import { S3ObjectStore } from '../src/adapters/storage/s3-object-store.ts';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';
import { search, uploadFile, waitForProcessing } from './helpers/documents.ts';
import { makeDocx, makePdf } from './helpers/files.ts';

describe('knowledge base: each file type from upload to search', () => {
  const cases: Array<[string, () => Promise<Buffer | string>, string, string]> = [
    ['report.pdf', () => makePdf(['Quarterly summary of the bakery.', 'The sourdough starter is fed every morning at six.']), 'sourdough starter fed morning', 'application/pdf'],
    ['handbook.docx', () => makeDocx(['Employee handbook', 'Holiday requests go to the office manager by email.']), 'holiday requests office manager', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ['notes.txt', async () => 'The boiler is serviced every October by Acme Heating.', 'boiler serviced october', 'text/plain; charset=utf-8'],
    ['guide.md', async () => '# Guide\n\nThe **wifi password** is printed under the router.', 'wifi password router', 'text/markdown; charset=utf-8'],
    ['page.html', async () => '<html><head><style>.x{}</style><script>var hidden = "zebra";</script></head><body><h1>Returns</h1><p>Returns are accepted within thirty&nbsp;days.</p></body></html>', 'returns accepted thirty days', 'text/html; charset=utf-8'],
    ['prices.csv', async () => 'item,price\nespresso,2.50\ncappuccino,3.20\n', 'cappuccino price', 'text/csv; charset=utf-8'],
  ];
  for (const [filename, make, query, contentType] of cases) {
    test(filename, async () => {
      const org = await createOrg();
      const content = await make();
      const res = await uploadFile(org, `Doc ${filename}`, { name: filename, content });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.type, 'file');
      const doc = await waitForProcessing(org, res.json().data.documentation_id);
      assert.equal(doc.processing_status, 'completed', doc.processing_error);
      assert.equal(doc.filename, filename);
      assert.equal(doc.size, Buffer.byteLength(content));
      assert.equal(doc.content_type, contentType);
      assert.match(doc.storage_uri, /^file:\/\//);
      assert.ok(doc.storage_key.startsWith(`${org.orgId}/kb/${doc.documentation_id}/`));
      assert.ok(doc.vector_count >= 1);
      if (filename.endsWith('.pdf')) assert.equal(doc.page_count, 2);
      const hits = (await search(org, query)).json().data;
      assert.equal(hits[0]?.documentation_id, doc.documentation_id, JSON.stringify(hits));
      if (filename.endsWith('.pdf')) assert.equal(hits[0].page, 2);
      if (filename.endsWith('.html')) assert.ok(!hits[0].text.includes('zebra') && !hits[0].text.includes('<p>'));
    });
  }
});

describe('knowledge base: refused and failed files', () => {
  test('over 50 MB → 413 while streaming; nothing is left behind', async () => {
    const { config, database } = await testEnv();
    const org = await createOrg();
    const res = await uploadFile(org, 'Huge', { name: 'huge.txt', content: Buffer.alloc(50 * 1024 * 1024 + 1, 0x61) });
    assert.equal(res.statusCode, 413, res.body);
    assert.equal(res.json().code, 'payload_too_large');
    assert.deepEqual(fs.readdirSync(path.join(config.dataDir, 'tmp')), []);
    assert.ok(!fs.existsSync(path.join(config.dataDir, 'objects', org.orgId)));
    assert.equal((await database.pool.query('SELECT 1 FROM documents WHERE client_id = $1', [org.orgId])).rowCount, 0);
  });

  test('unsupported type, or content that does not match the extension → 415', async () => {
    const org = await createOrg();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    for (const file of [{ name: 'logo.png', content: png }, { name: 'fake.pdf', content: 'just text' }, { name: 'fake.docx', content: 'just text' }, { name: 'binary.txt', content: png }]) {
      const res = await uploadFile(org, 'Nope', file);
      assert.equal(res.statusCode, 415, `${file.name}: ${res.body}`);
      assert.equal(res.json().code, 'unsupported_media_type');
    }
    const noExtension = await uploadFile(org, 'PDF without extension', { name: 'scan', content: await makePdf(['A PDF named without an extension.']) });
    assert.equal(noExtension.statusCode, 200, noExtension.body);
  });

  test('a corrupt PDF and an empty text file end failed with a readable processing_error', async () => {
    const org = await createOrg();
    const corrupt = await uploadFile(org, 'Corrupt', { name: 'broken.pdf', content: '%PDF-1.7\nthis is not really a pdf' });
    const empty = await uploadFile(org, 'Empty', { name: 'empty.txt', content: '   \n  ' });
    for (const res of [corrupt, empty]) {
      assert.equal(res.statusCode, 200, res.body);
      const doc = await waitForProcessing(org, res.json().data.documentation_id);
      assert.equal(doc.processing_status, 'failed');
      assert.ok(doc.processing_error.length > 10, doc.processing_error);
      assert.equal(doc.vector_count, 0);
    }
  });
});

describe('knowledge base: S3-compatible object store (s3rver on 127.0.0.1)', () => {
  let s3: S3rver;
  let app: FastifyInstance;
  let store: S3ObjectStore;
  before(async () => {
    const { database, tmpDir } = await testEnv();
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(tmpDir, 's3rver'), configureBuckets: [{ name: 'switchboard-kb', configs: [] }] });
    const { port } = await s3.run();
    const config = testConfig(tmpDir, {
      STORAGE_BACKEND: 's3', S3_BUCKET: 'switchboard-kb', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    store = new S3ObjectStore(config.storage as never);
    app = await buildTestApp(config, { store });
  });
  after(async () => {
    await app?.close();
    await s3?.close();
  });

  test('an upload lands in the bucket with an s3:// URI, reads back by range, and delete removes it', async () => {
    const org = await createOrg();
    const content = 'Bucket-stored notes about the delivery schedule.';
    const res = await uploadFile(org, 'In S3', { name: 'notes.txt', content }, {}, app);
    assert.equal(res.statusCode, 200, res.body);
    const id = res.json().data.documentation_id;
    const doc = (await app.inject({ url: `/api/knowledge-base/${id}`, headers: asRole(org, 'user') })).json().data;
    assert.equal(doc.storage_uri, `s3://switchboard-kb/${doc.storage_key}`);
    assert.equal(await store.size(doc.storage_key), Buffer.byteLength(content));
    let read = '';
    for await (const part of await store.read(doc.storage_key, { start: 0, end: 13 })) read += part;
    assert.equal(read, 'Bucket-stored ');
    const deleted = await app.inject({ method: 'DELETE', url: `/api/knowledge-base/${id}`, headers: asRole(org, 'admin') });
    assert.equal(deleted.statusCode, 200);
    assert.equal(await store.size(doc.storage_key), undefined);
  });
});
