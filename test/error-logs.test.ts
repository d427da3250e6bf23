import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { serializeError } from '../src/core/logger.ts';
import { buildServices } from '../src/services.ts';
import { testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';

describe('error logs', () => {
  test('a request that fails in the database logs the statement, the SQLSTATE and the request id, never the values', async () => {
    const { database, tmpDir, queue } = await testEnv();
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _e, done) { lines.push(String(chunk)); done(); } });
    const log = pino({ level: 'info', serializers: { err: serializeError } }, stream);
    // A trigger refuses one tool name: the insert fails inside PostgreSQL with every value bound.
    await database.pool.query(`CREATE OR REPLACE FUNCTION refuse_exploding_tools() RETURNS trigger AS $$
      BEGIN IF NEW.tool_name LIKE 'explode%' THEN RAISE EXCEPTION 'refused by a test trigger for %', NEW.tool_name USING ERRCODE = 'P0001'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await database.pool.query('CREATE TRIGGER refuse_exploding_tools BEFORE INSERT ON tools FOR EACH ROW EXECUTE FUNCTION refuse_exploding_tools()');
    const services = await buildServices(testConfig(tmpDir), database, { queue, log });
    const app = await buildApp(services, { closeServices: true });
    try {
      const org = await createOrg();
      const res = await app.inject({
        method: 'POST', url: '/api/tools', headers: asRole(org, 'admin', { 'x-request-id': 'req-log-redaction-1' }),
        payload: {
          tool_name: 'explode_patient_jane_doe', tool_description: 'Looks up jane.doe@example.test', webhook_url: 'https://hooks.example.test/secret-path',
          http_method: 'POST', headers: { Authorization: 'Bearer sk_live_very_secret_value' },
        },
      });
      assert.equal(res.statusCode, 500);
      assert.deepEqual(res.json(), { detail: 'Internal server error', code: 'internal_error' });
      const failure = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request failed');
      assert.ok(failure, 'the failure is logged');
      assert.equal(failure.reqId, 'req-log-redaction-1');
      const text = JSON.stringify(failure);
      assert.match(text, /insert into \\"tools\\"/);
      assert.match(text, /P0001/);
      for (const value of ['explode_patient_jane_doe', 'jane.doe@example.test', 'secret-path', 'sk_live_very_secret_value']) {
        assert.ok(!text.includes(value), `the log holds ${value}`);
      }
    } finally {
      await app.close();
      await database.pool.query('DROP TRIGGER refuse_exploding_tools ON tools');
    }
  });
});
