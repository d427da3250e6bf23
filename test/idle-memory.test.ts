import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { quietWhenNothingServed, releaseMemoryWhenIdle } from '../src/idle-memory.ts';

describe('memory given back when the server is quiet (src/idle-memory.ts)', () => {
  test('quiet means no request since the last look and nothing busy', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    let busy = false;
    const isQuiet = quietWhenNothingServed(server, () => busy);
    try {
      assert.equal(isQuiet(), true, 'nothing served yet');
      await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.equal(isQuiet(), false, 'a request arrived since the last look');
      assert.equal(isQuiet(), true, 'none since');
      busy = true;
      assert.equal(isQuiet(), false, 'a call in progress');
    } finally {
      server.close();
    }
  });

  test('a heap grown by garbage is returned to the system on the first quiet look', async () => {
    // About 150 MB of short-lived objects: the young generation grows to its maximum and the old
    // generation takes what survived a few collections.
    let kept: object[] = [];
    for (let i = 0; i < 3e6; i++) {
      kept.push({ i, s: `item ${i}` });
      if (kept.length > 500_000) kept = [];
    }
    kept = [];
    const released = await new Promise<{ before: number; after: number }>((resolve) => {
      const releaser = releaseMemoryWhenIdle({
        isQuiet: () => true, intervalMs: 20, growthBytes: 1,
        onRelease: (before, after) => { releaser.stop(); resolve({ before, after }); },
      });
    });
    assert.ok(released.after < released.before - 20 * 1048576, `resident ${released.before} → ${released.after} bytes`);
  });

  test('nothing is collected while the process is busy', async () => {
    let looks = 0;
    let releases = 0;
    await new Promise<void>((resolve) => {
      const releaser = releaseMemoryWhenIdle({
        isQuiet: () => { if (++looks === 5) { releaser.stop(); resolve(); } return false; },
        intervalMs: 5, growthBytes: 1, onRelease: () => { releases++; },
      });
    });
    assert.equal(releases, 0);
  });
});
