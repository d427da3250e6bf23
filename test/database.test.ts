import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/db/database.ts';
import { DataDirLockedError } from '../src/db/lock.ts';
import { organizations } from '../src/db/schema/index.ts';
import { newId } from '../src/core/ids.ts';
import { testEnv } from './helpers/env.ts';
import { transaction } from '../src/db/unit-of-work.ts';

describe('database', () => {
  test('50 concurrent transactions, 10 rolled back: none leaks into another', async () => {
    const { database } = await testEnv();
    const tag = newId('org').slice(4);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        transaction(database.db, async (tx) => {
          const id = `org_t${tag}${String(i).padStart(3, '0')}`;
          await tx.insert(organizations).values({ id, name: `tx-${tag}-${i}` });
          const isolation = (await tx.execute(sql`SHOW transaction_isolation`)).rows[0] as { transaction_isolation: string };
          // Our own write is visible inside the transaction...
          const own = await tx.execute(sql`SELECT count(*)::int AS n FROM organizations WHERE name = ${`tx-${tag}-${i}`}`);
          // ...and no row of a transaction that rolls back ever is (no dirty read), whatever the timing.
          const doomed = await tx.execute(sql`SELECT count(*)::int AS n FROM organizations
            WHERE name LIKE ${`tx-${tag}-%`} AND name <> ${`tx-${tag}-${i}`} AND (substring(name from '[0-9]+$')::int % 5) = 0`);
          await new Promise((r) => setTimeout(r, 1));
          if (i % 5 === 0) throw new Error(`rollback ${i}`);
          return { isolation: isolation.transaction_isolation, own: (own.rows[0] as { n: number }).n, doomed: (doomed.rows[0] as { n: number }).n };
        }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'rejected').length, 10);
    for (const result of results) {
      if (result.status !== 'fulfilled') continue;
      assert.deepEqual(result.value, { isolation: 'read committed', own: 1, doomed: 0 });
    }
    const { rows } = await database.pool.query(`SELECT name FROM organizations WHERE name LIKE $1`, [`tx-${tag}-%`]);
    const names = new Set(rows.map((r) => r.name));
    assert.equal(names.size, 40);
    for (let i = 0; i < 50; i++) assert.equal(names.has(`tx-${tag}-${i}`), i % 5 !== 0, `transaction ${i}`);
    // The pool is healthy afterwards: no connection was left inside a transaction.
    const idle = await Promise.all(Array.from({ length: 10 }, () => database.pool.query('SELECT 1 AS ok')));
    assert.equal(idle.length, 10);
    const { rows: [state] } = await database.pool.query(`SELECT count(*)::int AS n FROM organizations WHERE name LIKE $1`, [`tx-${tag}-%`]);
    assert.equal(state.n, 40);
  });

  test('400 concurrent parameterized queries each get their own answer (extended protocol is not interleaved)', async () => {
    const { database } = await testEnv();
    const answers = await Promise.all(Array.from({ length: 400 }, (_, i) =>
      database.pool.query('SELECT $1::int AS n, $2::text AS label', [i, `q${i}`]).then((r) => r.rows[0])));
    answers.forEach((row, i) => assert.deepEqual(row, { n: i, label: `q${i}` }));
  });

  test('pgvector and pg_trgm are installed', async () => {
    const { database } = await testEnv();
    const { rows } = await database.pool.query(
      `SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector AS distance, similarity('switchboard', 'switchbord') AS sim`,
    );
    assert.equal(rows[0].distance, 1);
    assert.ok(rows[0].sim > 0.5);
  });

  test('one process owns an embedded data directory; a stale lock is taken over', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbl-'));
    const first = await openDatabase({ databaseUrl: undefined, dataDir, poolSize: 2 });
    try {
      // Same process, same directory: refused too, exactly as a second process would be.
      fs.writeFileSync(path.join(dataDir, 'switchboard.lock'), String(process.ppid)); // a live pid that is not ours
      await assert.rejects(openDatabase({ databaseUrl: undefined, dataDir, poolSize: 2 }), DataDirLockedError);
      fs.writeFileSync(path.join(dataDir, 'switchboard.lock'), String(process.pid));
      await first.pool.query('CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)');
    } finally {
      await first.close();
    }
    assert.equal(fs.existsSync(path.join(dataDir, 'switchboard.lock')), false, 'the lock is released on close');
    fs.writeFileSync(path.join(dataDir, 'switchboard.lock'), '999999999'); // its owner is gone
    const reopened = await openDatabase({ databaseUrl: undefined, dataDir, poolSize: 2 });
    try {
      const { rows } = await reopened.pool.query('SELECT v FROM kept');
      assert.equal(rows[0].v, 42, 'data survives a restart');
    } finally {
      await reopened.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
