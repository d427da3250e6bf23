import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startMetricsServer } from '../src/core/http/metrics.ts';
import { Metrics } from '../src/core/metrics.ts';
import { buildTestApp, testEnv, testConfig } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

/** The value of one series in Prometheus' text format, e.g. `foo_total{a="b"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics (Prometheus, prom-client)', () => {
  test('behind METRICS_TOKEN on the app: request durations by route pattern and status, the pool, the queues, webhook attempts', async () => {
    const { tmpDir } = await testEnv();
    const app = await buildTestApp(testConfig(tmpDir, { METRICS_TOKEN: 'scrape-token-1234' }));
    const receiver = await startReceiver({ answer: (_req, n) => ({ status: n === 1 ? 503 : 200 }) });
    try {
      const org = await createOrg();
      for (let i = 0; i < 3; i++) assert.equal((await app.inject({ url: '/api/agents', headers: asRole(org, 'user') })).statusCode, 200);
      assert.equal((await app.inject({ url: '/api/agents/agent_000000000000', headers: asRole(org, 'user') })).statusCode, 404);
      const hook = await app.inject({ method: 'POST', url: '/api/webhooks', headers: asRole(org, 'admin'), payload: { url: receiver.url } });
      assert.equal(hook.statusCode, 200, hook.body);
      const webhookId = hook.json().data.webhook_id;
      // The test event's first attempt meets a 503 (retrying), the replay a 200 (succeeded).
      const first = await app.inject({ method: 'POST', url: `/api/webhooks/${webhookId}/test`, headers: asRole(org, 'admin') });
      const deliveryId = first.json().data.delivery_id;
      await app.inject({ method: 'POST', url: `/api/webhooks/${webhookId}/deliveries/${deliveryId}/retry`, headers: asRole(org, 'admin') });

      assert.equal((await app.inject({ url: '/metrics' })).statusCode, 401);
      const refused = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer scrape-token-123' } });
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.json().code, 'unauthenticated');
      const res = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer scrape-token-1234' } });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const text = res.body;
      // Three 200s and one 404 on the same pattern: the id never becomes a label.
      assert.equal(sample(text, 'http_request_duration_seconds_count{method="GET",route="/api/agents",status_code="200"}'), 3);
      assert.equal(sample(text, 'http_request_duration_seconds_count{method="GET",route="/api/agents/:agent_id",status_code="404"}'), 1);
      assert.ok(!text.includes('agent_000000000000'));
      assert.ok((sample(text, 'switchboard_db_pool_connections{state="total"}') ?? -1) >= 1);
      assert.notEqual(sample(text, 'switchboard_jobs{queue="call-export",state="ready"}'), undefined, text.split('\n').filter((l) => l.startsWith('switchboard_jobs')).join('\n'));
      assert.notEqual(sample(text, 'switchboard_webhook_deliveries_due'), undefined, 'the due deliveries are counted');
      assert.equal(sample(text, 'switchboard_webhook_delivery_attempts_total{outcome="retrying"}'), 1);
      assert.equal(sample(text, 'switchboard_webhook_delivery_attempts_total{outcome="succeeded"}'), 1);
      assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0, 'the default process metrics are there');
    } finally {
      await app.close();
      await receiver.close();
    }
  });

  test('without METRICS_TOKEN or METRICS_PORT the app serves no /metrics', async () => {
    const { app } = await testEnv();
    // The path is then the console's (its SPA fallback may answer it), never the metrics.
    const res = await app.inject({ url: '/metrics' });
    assert.doesNotMatch(String(res.headers['content-type']), /version=0\.0\.4/);
    assert.ok(!res.body.includes('http_request_duration_seconds'));
  });

  test('METRICS_PORT: a listener of its own that serves /metrics only, with the token when one is set', async () => {
    const metrics = new Metrics();
    metrics.observeRequest('GET', '/api/calls', 200, 0.004);
    const server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1', token: 'port-token' });
    try {
      const { port } = server.address() as { port: number };
      const base = `http://127.0.0.1:${port}`;
      assert.equal((await fetch(`${base}/metrics`)).status, 401);
      assert.equal((await fetch(`${base}/api/health`)).status, 404);
      const res = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer port-token' } });
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.equal(sample(text, 'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/calls",status_code="200"}'), 1);
      assert.equal(sample(text, 'http_request_duration_seconds_bucket{le="0.0025",method="GET",route="/api/calls",status_code="200"}'), 0);
    } finally {
      server.close();
    }
  });
});
