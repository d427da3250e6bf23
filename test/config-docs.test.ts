/**
 * docs/configuration.md is written from src/config-catalogue.ts; the catalogue must name every
 * variable the configuration reads and nothing it does not, so the page cannot drift from the code.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { CONFIG_GROUPS } from '../src/config-catalogue.ts';
import { renderConfigurationPage } from '../src/config-docs.ts';
import { loadConfig } from '../src/config.ts';

const root = path.join(import.meta.dirname, '..');

/** The variables src/config*.ts reads: `env.NAME`, `env['NAME']` and the readers' `(env, 'NAME'`. */
function variablesReadByTheConfiguration(): Set<string> {
  const files = fs.readdirSync(path.join(root, 'src')).filter((f) => /^config.*\.ts$/.test(f) && f !== 'config-catalogue.ts' && f !== 'config-docs.ts');
  const source = files.map((f) => fs.readFileSync(path.join(root, 'src', f), 'utf8')).join('\n');
  const names = new Set<string>();
  for (const pattern of [/env\.([A-Z][A-Z0-9_]+)/g, /env\[['"]([A-Z][A-Z0-9_]+)['"]\]/g, /\(env, '([A-Z][A-Z0-9_]+)'/g]) {
    for (const match of source.matchAll(pattern)) names.add(match[1]!);
  }
  return names;
}

describe('configuration reference', () => {
  const catalogued = CONFIG_GROUPS.flatMap((group) => group.variables.flatMap((variable) => variable.names));

  test('every variable the configuration reads is in the catalogue, once, and every catalogued one is read', () => {
    const read = variablesReadByTheConfiguration();
    assert.ok(read.size > 40, `found ${read.size} variables: the extraction still sees the readers`);
    assert.deepEqual([...read].filter((name) => !catalogued.includes(name)).sort(), [], 'read but not documented');
    assert.deepEqual(catalogued.filter((name) => !read.has(name)).sort(), [], 'documented but never read');
    assert.equal(new Set(catalogued).size, catalogued.length, 'a variable in two rows');
  });

  test('the documented defaults are the defaults: an empty environment gives them', () => {
    const defaults = Object.fromEntries(CONFIG_GROUPS.flatMap((g) => g.variables).filter((v) => v.names.length === 1).map((v) => [v.names[0]!, v.defaultValue]));
    const config = loadConfig({});
    assert.equal(defaults.PORT, `\`${config.port}\``);
    assert.equal(defaults.HOST, `\`${config.host}\``);
    assert.equal(defaults.DATABASE_POOL_SIZE, `\`${config.databasePoolSize}\``);
    assert.equal(defaults.RATE_LIMIT_PER_MINUTE, `\`${config.rateLimit.perMinute}\``);
    assert.equal(defaults.CREDITS_PER_DOLLAR, `\`${config.creditsPerDollar}\``);
    assert.equal(defaults.RUNTIME, `\`${config.runtime.mode}\``);
  });

  test('docs/configuration.md is current (npm run docs:config writes it)', () => {
    assert.equal(fs.readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8'), renderConfigurationPage());
  });
});
