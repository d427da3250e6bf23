import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { clientOf, preparedOn } from '../src/db/database.ts';
import { driverClientOf } from '../src/db/drizzle-session.ts';
import { testEnv } from './helpers/env.ts';
import { transaction } from '../src/db/unit-of-work.ts';

/**
 * Pins what src/db/drizzle-session.ts reads of Drizzle's private state, so a Drizzle upgrade that
 * moves it fails here: the database's handle runs on the pool, and an open transaction's handle (a
 * savepoint's too) on the one pool client that runs the transaction.
 */
describe("Drizzle's session client (src/db/drizzle-session.ts)", () => {
  test('the database handle runs on the pool itself', async () => {
    const { database } = await testEnv();
    assert.equal(driverClientOf(database.db), database.pool);
    assert.throws(() => clientOf(database.db), /needs an open transaction/);
  });

  test("an open transaction's handle is the pool client running that transaction, and a savepoint's the same one", async () => {
    const { database } = await testEnv();
    await transaction(database.db, async (tx) => {
      const client = driverClientOf(tx);
      assert.ok(client && !(client instanceof pg.Pool) && typeof (client as pg.PoolClient).release === 'function', 'a pool client');
      assert.equal(clientOf(tx), client);
      // A transaction-local setting made on the client is seen through Drizzle's handle: one session, one transaction.
      await client.query("SELECT set_config('switchboard.pin', 'on-the-client', true)");
      const [seen] = (await tx.execute<{ v: string }>(sql`SELECT current_setting('switchboard.pin', true) AS v`)).rows;
      assert.equal(seen?.v, 'on-the-client');
      const [prepared] = await preparedOn<{ v: string }>(tx, 'drizzle_session_pin', "SELECT current_setting('switchboard.pin', true) AS v", []);
      assert.equal(prepared?.v, 'on-the-client');
      await tx.transaction(async (savepoint) => {
        assert.equal(driverClientOf(savepoint), client);
      });
    });
    // Gone with the transaction: it was that transaction's setting.
    const [after] = await database.prepared<{ v: string | null }>('drizzle_session_after', "SELECT nullif(current_setting('switchboard.pin', true), '') AS v", []);
    assert.equal(after?.v ?? null, null);
  });
});
