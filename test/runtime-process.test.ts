import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { WebSocket } from 'ws';

/**
 * `switchboard runtime` (extensions.md §10, scale and faults): the runtime alone, as a child process,
 * serves /api/health and /metrics and its stream routes; on SIGTERM it refuses new streams (1008)
 * while a call in progress drains.
 */
const claims = (sub: string) => `e30.${Buffer.from(JSON.stringify({ sub, org: 'org_000000000001', scope: 'runtime' })).toString('base64url')}.sig`;

test('switchboard runtime: health and metrics, and SIGTERM refuses new streams while a call drains', { timeout: 60_000 }, async () => {
  // The API as the runtime sees it: it never answers, so the call stays in progress (loading) while the process drains.
  const asked: string[] = [];
  const api = http.createServer((req) => { asked.push(`${req.method} ${req.url}`); });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-runtime-'));
  const child = spawn(process.execPath, ['--import', './src/module-hooks.ts', 'src/cli.ts', 'runtime', '--port', '0', '--host', '127.0.0.1'], {
    env: { ...process.env, DATA_DIR: tmp, LOG_LEVEL: 'silent', RUNTIME_API_URL: apiUrl, RUNTIME_DRAIN_SECONDS: '3', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stdout += chunk; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const started = Date.now();
    while (!/Voice runtime at (http:\/\/\S+)/.test(stdout)) {
      assert.ok(Date.now() - started < 30_000, `the runtime did not start: ${stdout}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const base = /Voice runtime at (http:\/\/\S+)/.exec(stdout)![1]!;
    assert.match(stdout, new RegExp(`API at ${apiUrl.replace(/[.:/]/g, '\\$&')}`));

    const health = await fetch(`${base}/api/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok', active_calls: 0, draining: false });
    // Only the runtime's routes: nothing of the API is served here.
    assert.equal((await fetch(`${base}/api/agents`)).status, 404);

    // A call: the carrier's start with the call's token; the runtime asks the API for the call.
    const ws = base.replace('http', 'ws');
    const call = new WebSocket(`${ws}/api/runtime/carrier_a/stream`);
    await new Promise((resolve, reject) => { call.once('open', resolve); call.once('error', reject); });
    call.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    call.send(JSON.stringify({
      event: 'start', streamSid: 'MZ1', start: { streamSid: 'MZ1', callSid: 'CA1', customParameters: { call_sid: 'call_process000000001', agent_id: 'agent_000000000001', token: claims('call_process000000001') }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } },
    }));
    for (const deadline = Date.now() + 10_000; !asked.includes('GET /api/runtime/calls/call_process000000001');) {
      assert.ok(Date.now() < deadline, `the runtime never asked the API for the call: ${asked.join(', ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /^switchboard_runtime_active_calls 1$/m);

    child.kill('SIGTERM');
    for (const deadline = Date.now() + 5000; !(await (await fetch(`${base}/api/health`)).json() as { draining: boolean }).draining;) {
      assert.ok(Date.now() < deadline, 'never draining');
      await new Promise((r) => setTimeout(r, 20));
    }
    const late = new WebSocket(`${ws}/api/runtime/carrier_a/stream`);
    const refused = await new Promise<number>((resolve) => late.on('close', (code) => resolve(code)));
    assert.equal(refused, 1008, 'a new stream is refused while draining');
  } finally {
    if (child.exitCode === null) {
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('alive'), 8000))]);
      if (code === 'alive') child.kill('SIGKILL');
    }
    api.closeAllConnections();
    await new Promise((r) => api.close(r));
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
