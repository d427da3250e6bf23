import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InFlightBatcher } from '../src/core/in-flight-batcher.ts';
import { IdempotencyService } from '../src/modules/idempotency/service.ts';
import { testEnv } from './helpers/env.ts';
import { createOrg } from './helpers/fixtures.ts';

/** A batcher whose runs are released by hand, recording what each run was given. */
function gated() {
  const runs: string[][] = [];
  const gates: Array<() => void> = [];
  const batcher = new InFlightBatcher<string, string>(async (items) => {
    runs.push(items);
    await new Promise<void>((resolve) => gates.push(resolve));
    if (items.includes('bad')) throw new Error('bad item');
    return items.map((i) => i.toUpperCase());
  });
  const releaseNext = async () => {
    while (!gates.length) await new Promise((r) => setImmediate(r));
    gates.shift()!();
  };
  return { batcher, runs, releaseNext };
}

describe('in-flight batcher', () => {
  test('the first item goes alone at once; those arriving while it is in flight go together next, each answered', async () => {
    const { batcher, runs, releaseNext } = gated();
    const first = batcher.submit('a');
    const rest = ['b', 'c', 'd'].map((i) => batcher.submit(i));
    assert.deepEqual(runs, [['a']]);
    await releaseNext();
    assert.equal(await first, 'A');
    await releaseNext();
    assert.deepEqual(await Promise.all(rest), ['B', 'C', 'D']);
    assert.deepEqual(runs, [['a'], ['b', 'c', 'd']]);
    // Idle again: the next item goes at once.
    const later = batcher.submit('e');
    await releaseNext();
    assert.equal(await later, 'E');
    assert.deepEqual(runs.at(-1), ['e']);
  });

  test('a failed batch is retried one item at a time: only the bad item fails', async () => {
    const { batcher, runs, releaseNext } = gated();
    const first = batcher.submit('a');
    const batch = ['b', 'bad', 'c'].map((i) => batcher.submit(i).then((v) => ({ ok: v }), (e: Error) => ({ error: e.message })));
    for (let i = 0; i < 5; i++) await releaseNext(); // a; [b bad c]; then b, bad, c alone
    assert.equal(await first, 'A');
    assert.deepEqual(await Promise.all(batch), [{ ok: 'B' }, { error: 'bad item' }, { ok: 'C' }]);
    assert.deepEqual(runs, [['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
  });
});

describe('idempotency keys claimed and kept in batches', () => {
  test('40 concurrent claims (30 keys, one of them claimed 11 times): each key is acquired once, each response kept and replayed as its own', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    const store = new IdempotencyService({ database });
    const scope = (key: string) => ({ orgId: org.orgId, credentialId: 'cred_batch', key });
    const keys = [...Array.from({ length: 29 }, (_, i) => `batch-${i}`), ...Array.from({ length: 11 }, () => 'batch-shared')];
    // A body with what an array literal must escape (quotes, backslashes, commas, braces, a line break, NULL-looking text).
    const body = (k: string) => JSON.stringify({ key: k, text: 'a "b" \\ c, {d}\n NULL é' });
    const claims = await Promise.all(keys.map((k) => store.claim(scope(k), `print-${k}`)));

    const acquired = claims.map((c, i) => [keys[i]!, c] as const).filter(([, c]) => c.kind === 'acquired');
    assert.deepEqual(acquired.map(([k]) => k).sort(), [...new Set(keys)].sort());
    assert.deepEqual(claims.filter((c) => c.kind !== 'acquired').map((c) => c.kind), Array(10).fill('in_use'));

    await Promise.all(acquired.map(([k, c]) => store.complete(scope(k), (c as { lockId: string }).lockId, { status: 201, contentType: 'application/json', body: body(k) })));
    const again = await Promise.all([...new Set(keys)].map((k) => store.claim(scope(k), `print-${k}`)));
    for (const [i, k] of [...new Set(keys)].entries()) {
      assert.deepEqual(again[i], { kind: 'replay', response: { status: 201, contentType: 'application/json', body: body(k) } });
    }
    const { rows } = await database.pool.query("SELECT count(*)::int AS n FROM idempotency_keys WHERE client_id = $1 AND status = 'completed'", [org.orgId]);
    assert.equal(rows[0].n, 30);
  });

  test('responses kept and keys claimed in one batch: a key claimed again while its response is kept replays it, new keys are acquired', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    const store = new IdempotencyService({ database });
    const scope = (key: string) => ({ orgId: org.orgId, credentialId: 'cred_mixed', key });
    const held = await Promise.all(Array.from({ length: 10 }, (_, i) => store.claim(scope(`held-${i}`), 'print')));
    assert.ok(held.every((c) => c.kind === 'acquired'));

    const response = (i: number) => ({ status: 200, contentType: 'application/json', body: `{"n":${i}}` });
    const completing = held.map((c, i) => store.complete(scope(`held-${i}`), (c as { lockId: string }).lockId, response(i)));
    const again = held.map((_, i) => store.claim(scope(`held-${i}`), 'print'));
    const fresh = Array.from({ length: 5 }, (_, i) => store.claim(scope(`fresh-${i}`), 'print'));
    await Promise.all(completing);
    assert.deepEqual(await Promise.all(again), held.map((_, i) => ({ kind: 'replay', response: response(i) })));
    assert.deepEqual((await Promise.all(fresh)).map((c) => c.kind), Array(5).fill('acquired'));
  });
});
