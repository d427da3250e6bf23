import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { openDatabase, openMemoryDatabase } from '../src/db/database.ts';
import { transaction } from '../src/db/unit-of-work.ts';

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

/**
 * Another process reaching the embedded database by a server URL (a worker's DATABASE_URL with the
 * socket as its host) shares its one session: its prepared statements go unnamed, as the embedded
 * pool's do, or two processes preparing the same name collide ("prepared statement already exists").
 * Every client of such a pool, the first one included, sends them unnamed.
 */
test('pools that reach the embedded socket by URL send their prepared statements unnamed: no name collides', async () => {
  const database = await openMemoryDatabase(socketDir, 2);
  const url = `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`;
  const others = [
    await openDatabase({ databaseUrl: url, dataDir: socketDir, poolSize: 2 }),
    await openDatabase({ databaseUrl: url, dataDir: socketDir, poolSize: 2 }),
  ];
  try {
    for (const other of others) assert.equal(other.kind, 'server', 'a URL is a server to the rest of the process');
    for (const other of [...others, ...others]) {
      const [row] = await other.prepared<{ n: number }>('shared_session_probe', 'SELECT $1::int AS n', [7]);
      assert.equal(row!.n, 7);
    }
    const answers = await Promise.all(others.flatMap((other) => [1, 2].map((n) => transaction(other.db, async (tx) => {
      tx.unit.defer({ name: 'shared_session_write', text: 'SELECT $1::int AS n', values: [n] });
      return n;
    }))));
    assert.deepEqual(answers, [1, 2, 1, 2]);
  } finally {
    for (const other of others) await other.close();
    await database.close();
  }
});
