import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { openMemoryDatabase } from '../src/db/database.ts';

const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbec-'));
after(() => fs.rmSync(socketDir, { recursive: true, force: true }));

/**
 * The embedded database's socket takes every connection a process or its neighbours open, beyond
 * its own pool: the job queue's pool, the CLI, a second server on the same data directory. Node's
 * net.Server dropped connections over a limit sized to the pool without a word, and the client's
 * first write failed with EPIPE (the suite's occasional EPIPE on PGlite).
 */
test('the embedded socket serves many more connections than the pool at once, each its own answer', async () => {
  const database = await openMemoryDatabase(socketDir, 2);
  const clients = Array.from({ length: 40 }, () => new pg.Client({ host: socketDir, user: 'postgres', database: 'postgres' }));
  try {
    await Promise.all(clients.map((client) => client.connect()));
    const answers = await Promise.all(clients.map((client, i) => client.query('SELECT $1::int AS n', [i])));
    assert.deepEqual(answers.map((a) => a.rows[0].n), clients.map((_, i) => i));
    // The pool still works beside them.
    assert.equal((await database.pool.query('SELECT 1 AS one')).rows[0].one, 1);
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => {})));
    await database.close();
  }
});
