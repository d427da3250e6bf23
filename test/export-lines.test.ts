import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compactJson, jsNumber, SNIPPET_STEPS, SNIPPET_TEXT } from '../src/modules/calls/exports/export-queries.ts';
import { snippetOf } from '../src/modules/calls/snippet.ts';
import { testEnv } from './helpers/env.ts';

/**
 * The database formats an export's values (calls/exports/export-queries.ts) as JavaScript formatted the list's rows:
 * each SQL fragment against its JavaScript original, on values chosen for their edge cases and on
 * random ones.
 */

function rng(seed: number) {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
}

async function each<T>(sql: string, inputs: T[], param: (input: T) => unknown[]): Promise<unknown[]> {
  const { database } = await testEnv();
  const out: unknown[] = [];
  for (const input of inputs) out.push((await database.pool.query(sql, param(input))).rows[0].v);
  return out;
}

describe('export lines: the SQL fragments write what JavaScript wrote', () => {
  test('a float8 in Number#toString notation, exponents and their thresholds included', async () => {
    const random = rng(7);
    const values = [0, 1, -1, 0.1, 0.5, 1e-4, 0.00012, 1e-5, -1.5e-5, 1e-6, 1.234e-6, 9.99e-7, 1e-7, 1.5e-7, 1e-300, 5e-324, 123.456, 86400,
      0.001, 33.333333333333336, 1e14, 999999999999999.9, 1e15, 1.5e15, 1.2345678901234567e15, 123456789012345680, 1e20, 1.2345e20, 1e21, 1.5e21,
      -2.5e16, 2 ** 53, 1.7976931348623157e308, 999999999999.9999];
    for (let i = 0; i < 200; i++) values.push((random() - 0.3) * 10 ** Math.floor(random() * 60 - 30));
    const got = await each(`SELECT ${jsNumber('$1::float8')} AS v`, values, (v) => [String(v)]);
    values.forEach((v, i) => assert.equal(got[i], String(v), `${v}`));
  });

  test('jsonb as JSON.stringify writes what the driver read', async () => {
    const random = rng(3);
    const pieces = ['a', ' ', ':', ',', '"', '\\', '\n', '\t', '\u0001', 'é', '日', '🙂', '{', '}', '[', ']', ': ', ', ', '\\"', '/'];
    const text = () => Array.from({ length: Math.floor(random() * 8) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
    const value = (depth: number): unknown => {
      const kind = Math.floor(random() * (depth > 2 ? 4 : 6));
      if (kind === 0) return text();
      if (kind === 1) return Math.round(random() * 1e6) / 100;
      if (kind === 2) return random() < 0.5;
      if (kind === 3) return null;
      if (kind === 4) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [`k${text()}`, value(depth + 1)]));
    };
    const values = [{}, [], { customer_id: 'c-1', note: 'refund please, now' }, { nested: { a: [1, 2.5, 'x y'], 'b: c': 'd, e' } }];
    for (let i = 0; i < 200; i++) values.push(value(0) as never);
    const { database } = await testEnv();
    for (const v of values) {
      const { rows: [row] } = await database.pool.query(`SELECT $1::jsonb AS j, ${compactJson('$1::jsonb')} AS v`, [JSON.stringify(v)]);
      assert.equal(row.v, JSON.stringify(row.j), JSON.stringify(v));
    }
  });

  test('the snippet of ts_headline\'s marked text, as snippetOf cuts it', async () => {
    const random = rng(5);
    const words = ['refund', 'a', 'café', '日本語', '🙂🙂', 'word', 'longerword', 'x'];
    const spaces = [' ', ' ', ' ', '\t', '\n', '\u00a0', '\u3000', '\u2003'];
    const marked = (length: number) => {
      let out = random() < 0.2 ? ' ' : '';
      while (out.length < length) {
        const word = words[Math.floor(random() * words.length)]!;
        out += random() < 0.15 ? `\u0002${word}\u0003` : word;
        out += spaces[Math.floor(random() * spaces.length)];
      }
      return out;
    };
    const inputs: Array<string | null> = [null, '', ' ', '\u0002refund\u0003', 'plain text without a match', marked(199), marked(201)];
    for (let i = 0; i < 300; i++) inputs.push(marked(Math.floor(random() * 700)));
    const got = await each(`SELECT ${SNIPPET_TEXT} AS v FROM (SELECT $1::text AS marked) c ${SNIPPET_STEPS}`, inputs, (m) => [m]);
    inputs.forEach((m, i) => assert.equal(got[i], snippetOf(m), JSON.stringify(m)));
  });
});
