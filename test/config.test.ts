import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('configuration guards', () => {
  test('the local payment provider (credits without payment) refuses to start in production unless explicitly allowed', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production' }), (err: unknown) => err instanceof ConfigError && /PAYMENT_PROVIDER=local/.test(err.message));
    assert.throws(() => loadConfig({ NODE_ENV: 'production', PAYMENT_PROVIDER: 'local', ALLOW_LOCAL_PAYMENTS: 'false' }), ConfigError);
    assert.equal(loadConfig({ NODE_ENV: 'production', ALLOW_LOCAL_PAYMENTS: 'true' }).payments.provider, 'local');
    const stripe = loadConfig({ NODE_ENV: 'production', PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' });
    assert.equal(stripe.payments.provider, 'stripe');
    assert.equal(loadConfig({}).payments.provider, 'local', 'outside production the default stays');
  });
});
