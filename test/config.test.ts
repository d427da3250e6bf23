import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

/** Production with its own secrets: what the other guards leave to the one under test. */
const PRODUCTION = { NODE_ENV: 'production', JWT_SECRET: 'a-secret-from-the-secret-store-0123456789', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
const refusedFor = (pattern: RegExp) => (err: unknown) => err instanceof ConfigError && pattern.test(err.message);

describe('configuration guards', () => {
  test('the local payment provider (credits without payment) refuses to start in production unless explicitly allowed', () => {
    assert.throws(() => loadConfig(PRODUCTION), refusedFor(/PAYMENT_PROVIDER=local/));
    assert.throws(() => loadConfig({ ...PRODUCTION, PAYMENT_PROVIDER: 'local', ALLOW_LOCAL_PAYMENTS: 'false' }), ConfigError);
    assert.equal(loadConfig({ ...PRODUCTION, ALLOW_LOCAL_PAYMENTS: 'true' }).payments.provider, 'local');
    const stripe = loadConfig({ ...PRODUCTION, PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' });
    assert.equal(stripe.payments.provider, 'stripe');
    assert.equal(loadConfig({}).payments.provider, 'local', 'outside production the default stays');
  });

  test('in production the identity secret and the encryption key generated into DATA_DIR are refused unless allowed by name', () => {
    const allowed = { ...PRODUCTION, ALLOW_LOCAL_PAYMENTS: 'true' };
    const { JWT_SECRET: _jwt, ...noJwtSecret } = allowed;
    assert.throws(() => loadConfig(noJwtSecret), refusedFor(/JWT_JWKS_URL .* or JWT_SECRET/));
    assert.ok(loadConfig({ ...noJwtSecret, JWT_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json' }));
    assert.ok(loadConfig({ ...noJwtSecret, ALLOW_GENERATED_JWT_SECRET: 'true' }));
    const { ENCRYPTION_KEY: _key, ...noKey } = allowed;
    assert.throws(() => loadConfig(noKey), refusedFor(/ENCRYPTION_KEY/));
    assert.ok(loadConfig({ ...noKey, ALLOW_GENERATED_ENCRYPTION_KEY: 'true' }));
    assert.ok(loadConfig({}), 'outside production the generated secrets stay the default');
  });

  test('METRICS_PORT and METRICS_TOKEN', () => {
    assert.deepEqual(loadConfig({}).metrics, { port: undefined, token: undefined });
    assert.deepEqual(loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 't' }).metrics, { port: 9464, token: 't' });
    assert.throws(() => loadConfig({ METRICS_PORT: 'ninety' }), ConfigError);
  });

  test('MCP_TOKEN: absent (one is generated at start), or at least 16 characters without spaces', () => {
    assert.equal(loadConfig({}).mcpToken, undefined);
    assert.equal(loadConfig({ MCP_TOKEN: 'abcdefghijklmnop' }).mcpToken, 'abcdefghijklmnop');
    assert.throws(() => loadConfig({ MCP_TOKEN: 'short' }), refusedFor(/MCP_TOKEN/));
    assert.throws(() => loadConfig({ MCP_TOKEN: 'sixteen chars with spaces' }), refusedFor(/MCP_TOKEN/));
  });

  test('RUNTIME_STREAM_URL: a query string is refused (the carrier passes only <Parameter>s); plain ws:// off this machine is warned about', () => {
    for (const withQuery of ['wss://runtime.example.com/stream?tenant=a', 'ws://127.0.0.1:8765/stream?x=1', 'wss://runtime.example.com/stream?']) {
      assert.throws(() => loadConfig({ RUNTIME_STREAM_URL: withQuery }), refusedFor(/RUNTIME_STREAM_URL must not have a query string/), withQuery);
    }
    assert.throws(() => loadConfig({ RUNTIME_STREAM_URL: 'https://runtime.example.com/stream' }), refusedFor(/ws:\/\/ or wss:\/\//));
    for (const quiet of ['wss://runtime.example.com/stream', 'ws://127.0.0.1:8765/stream', 'ws://localhost:8765/stream', 'ws://[::1]:8765/stream']) {
      const config = loadConfig({ RUNTIME_STREAM_URL: quiet });
      assert.equal(config.runtime.streamUrl, quiet);
      assert.deepEqual(config.runtime.warnings, [], quiet);
    }
    for (const remote of ['ws://runtime.example.com/stream', 'ws://10.0.0.5:8765/stream']) {
      const { warnings } = loadConfig({ RUNTIME_STREAM_URL: remote }).runtime;
      assert.equal(warnings.length, 1, remote);
      assert.match(warnings[0]!, /RUNTIME_STREAM_URL .*ws:\/\/.*wss:\/\//);
    }
    assert.deepEqual(loadConfig({}).runtime.warnings, []);
  });

  test('RUNTIME (in-process by default, or off; anything else refused), RUNTIME_DRAIN_SECONDS (600 by default, 0-86400)', () => {
    assert.equal(loadConfig({}).runtime.mode, 'in-process');
    assert.equal(loadConfig({ RUNTIME: 'in-process' }).runtime.mode, 'in-process');
    assert.equal(loadConfig({ RUNTIME: 'off' }).runtime.mode, 'off');
    for (const bad of ['external', 'OFF', 'on']) assert.throws(() => loadConfig({ RUNTIME: bad }), (err: Error) => err instanceof ConfigError && /RUNTIME/.test(err.message), bad);
    assert.equal(loadConfig({}).runtime.drainSeconds, 600);
    assert.equal(loadConfig({ RUNTIME_DRAIN_SECONDS: '30' }).runtime.drainSeconds, 30);
    for (const bad of ['-1', 'soon', '86401']) assert.throws(() => loadConfig({ RUNTIME_DRAIN_SECONDS: bad }), ConfigError, bad);
    assert.equal(loadConfig({ PUBLIC_BASE_URL: 'https://sb.example.com' }).runtime.builtInStreamUrl, 'wss://sb.example.com/api/runtime/carrier_a/stream');
  });

  test('PRICES_FILE: a JSON object replaces the prices it names; unknown names, bad values and bad JSON are refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prices-'));
    const file = (name: string, text: string) => {
      const at = path.join(dir, name);
      fs.writeFileSync(at, text);
      return at;
    };
    // The defaults docs/runtime.md lists under "Prices".
    assert.deepEqual(loadConfig({}).runtime.prices, { stt_per_minute: 0.5, llm_per_1k_input_tokens: 0.05, llm_per_1k_output_tokens: 0.2, tts_per_1k_characters: 5, telephony_per_minute: 1.5 });
    const prices = loadConfig({ PRICES_FILE: file('ok.json', '{"stt_per_minute": 0.8, "telephony_per_minute": 2}') }).runtime.prices;
    assert.deepEqual(prices, { stt_per_minute: 0.8, llm_per_1k_input_tokens: 0.05, llm_per_1k_output_tokens: 0.2, tts_per_1k_characters: 5, telephony_per_minute: 2 });
    const refused = (text: string, pattern: RegExp) =>
      assert.throws(() => loadConfig({ PRICES_FILE: file(`bad-${Math.random()}.json`, text) }), (err: Error) => err instanceof ConfigError && pattern.test(err.message), text);
    refused('{"stt_per_minut": 1}', /unknown price "stt_per_minut"/);
    refused('{"stt_per_minute": -1}', /stt_per_minute must be a number/);
    refused('{"stt_per_minute": "1"}', /stt_per_minute must be a number/);
    refused('{"stt_per_minute": 1', /not a readable JSON file/);
    refused('[1, 2]', /must hold a JSON object/);
    assert.throws(() => loadConfig({ PRICES_FILE: path.join(dir, 'missing.json') }), /not a readable JSON file/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

