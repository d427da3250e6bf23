import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoFromUtcText } from '../src/db/utc-timestamps.ts';

test('PostgreSQL timestamp text becomes the API ISO 8601 form, milliseconds truncated like to_char MS', () => {
  // PostgreSQL prints 0-6 fractional digits, trailing zeros dropped (DateStyle ISO).
  assert.equal(isoFromUtcText('2026-11-22 14:50:16'), '2026-11-22T14:50:16.000Z');
  assert.equal(isoFromUtcText('2026-11-22 14:50:16.1'), '2026-11-22T14:50:16.100Z');
  assert.equal(isoFromUtcText('2026-11-22 14:50:16.17'), '2026-11-22T14:50:16.170Z');
  assert.equal(isoFromUtcText('2026-11-22 14:50:16.175'), '2026-11-22T14:50:16.175Z');
  assert.equal(isoFromUtcText('2026-11-22 14:50:16.1759'), '2026-11-22T14:50:16.175Z');
  assert.equal(isoFromUtcText('2028-02-29 00:00:00.999999'), '2028-02-29T00:00:00.999Z');
  assert.equal(isoFromUtcText('1969-12-31 23:59:59.5'), '1969-12-31T23:59:59.500Z');
});

test('random instants round-trip against Date.toISOString', () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 2000; i++) {
    const ms = Math.floor(next() * 4_000_000_000_000); // 1970-2096
    const iso = new Date(ms).toISOString();
    // The text PostgreSQL would print for it: a space for the T, no zone, trailing zeros of the fraction dropped.
    const fraction = iso.slice(20, 23).replace(/0+$/, '');
    const text = `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}`;
    assert.equal(isoFromUtcText(text), iso);
  }
});
