import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { cruise, type IViolation } from 'dependency-cruiser';
import extractDepcruiseConfig from 'dependency-cruiser/config-utl/extract-depcruise-config';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The violations of .dependency-cruiser.cjs in `dir` of the tree at `baseDir`. */
async function violations(dir: string, baseDir = ROOT): Promise<IViolation[]> {
  const config = await extractDepcruiseConfig(path.join(ROOT, '.dependency-cruiser.cjs'));
  const options = { ...config.options, tsConfig: { fileName: path.join(baseDir, 'tsconfig.json') }, baseDir, ruleSet: { forbidden: config.forbidden }, validate: true };
  const result = await cruise([dir], options, undefined, { tsConfig: extractTSConfig(path.join(baseDir, 'tsconfig.json')) });
  if (typeof result.output === 'string') throw new Error('unexpected string output');
  return result.output.summary.violations;
}

/** Calls that send SQL text, which no import shows: `database.prepared(…)`, `pool.query(…)`, `tx.execute(…)`. */
const SENDS_SQL = /\.(prepared|query|execute)\s*[<(]/u;

/**
 * The module files of the tree at `baseDir` that send SQL text outside the SQL files: the rule
 * `sql-in-sql-files` sees imports only, so its own list of allowed files (pathNot) is read from it.
 */
async function sqlSentOutsideSqlFiles(baseDir = ROOT): Promise<string[]> {
  const config = await extractDepcruiseConfig(path.join(ROOT, '.dependency-cruiser.cjs'));
  const rule = config.forbidden?.find((r) => r.name === 'sql-in-sql-files');
  assert.ok(rule, 'the rule sql-in-sql-files is in .dependency-cruiser.cjs');
  const allowed = [(rule.from as { pathNot?: string | string[] }).pathNot ?? []].flat().map((p) => new RegExp(p, 'u'));
  return fs.readdirSync(path.join(baseDir, 'src/modules'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => `src/modules/${file.split(path.sep).join('/')}`)
    .filter((file) => !allowed.some((p) => p.test(file)) && SENDS_SQL.test(fs.readFileSync(path.join(baseDir, file), 'utf8')))
    .sort();
}

describe('architecture: the layers hold (.dependency-cruiser.cjs)', () => {
  test('src/ breaks no dependency rule', async () => {
    const found = await violations('src');
    assert.deepEqual(found.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`), []);
  });

  test('outside repositories and *-queries.ts, module files send no SQL text either', async () => {
    assert.deepEqual(await sqlSentOutsideSqlFiles(), []);
  });

  test('runtime/ imports nothing from src/ (it is a client of the API)', async () => {
    const found = await violations('runtime');
    assert.deepEqual(found.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`), []);
  });

  test('each rule catches what it forbids', async () => {
    // A throwaway tree shaped like src/, with one violation of each rule: proof the rules can fail.
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-arch-'));
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
      fs.writeFileSync(path.join(tree, file), text);
    };
    write('src/core/auth/authenticator.ts', "import { ApiKeyRepository } from '../../modules/api-keys/repository.ts';\nexport const a = ApiKeyRepository;\n");
    // SQL in a module: the repository may import drizzle-orm and send SQL; a service, a type-only import of the schema or SQL text anywhere else may not.
    write('src/modules/api-keys/repository.ts', "import { sql } from 'drizzle-orm';\nexport class ApiKeyRepository { count(db: { execute(q: unknown): unknown }) { return db.execute(sql`SELECT 1`); } }\n");
    write('src/db/schema/index.ts', 'export interface CostBreakdown { stt: number }\n');
    write('src/modules/calls/late-report.ts', "import type { CostBreakdown } from '../../db/schema/index.ts';\nexport const total = (b: CostBreakdown) => b.stt;\n");
    write('src/modules/analytics/service.ts', "export const daily = (database: { prepared(n: string, t: string, v: unknown[]): unknown }) => database.prepared('daily', 'SELECT 1', []);\n");
    write('src/modules/calls/service.ts', "import Fastify from 'fastify';\nimport { sql } from 'drizzle-orm';\nimport { AgentRepository } from '../agents/repository.ts';\nimport { S3ObjectStore } from '../../adapters/storage/s3-object-store.ts';\nexport const c = [Fastify, AgentRepository, S3ObjectStore, sql];\n");
    // A circle through a type-only import: the strict rule counts it.
    write('src/modules/agents/repository.ts', "import type { B } from './service.ts';\nexport class AgentRepository {}\nexport const r = (b: B) => b;\n");
    write('src/modules/agents/service.ts', "import { AgentRepository } from './repository.ts';\nexport const b = () => AgentRepository;\nexport type B = string;\n");
    write('src/platform/outbox.ts', "import { b } from '../modules/agents/service.ts';\nexport const o = b;\n");
    write('src/adapters/storage/s3-object-store.ts', "import { services } from '../../services.ts';\nexport class S3ObjectStore {}\nexport const s = services;\n");
    write('src/services.ts', 'export const services = {};\n');
    // The queue infrastructure names no module, and no module reaches up to the registry.
    write('src/jobs/queue.ts', "import { b } from '../modules/agents/service.ts';\nexport const q = b;\n");
    write('src/registry.ts', 'export const MODULES = [];\n');
    write('src/modules/tools/module.ts', "import { MODULES } from '../../registry.ts';\nexport const m = MODULES;\n");
    write('runtime/src/engine.ts', "import { services } from '../../src/services.ts';\nexport const e = services;\n");
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
    fs.copyFileSync(path.join(ROOT, 'tsconfig.json'), path.join(tree, 'tsconfig.json'));
    try {
      const found = [...(await violations('src', tree)), ...(await violations('runtime', tree))];
      const rules = new Set(found.map((v) => v.rule.name));
      for (const rule of [
        'core-is-the-bottom', 'no-fastify-below-routes', 'modules-meet-through-services', 'adapter-implementations-through-factories',
        'adapters-know-no-module', 'no-circular', 'runtime-is-a-client', 'platform-below-modules', 'sql-in-sql-files',
        'job-queue-knows-no-module', 'composition-root-at-the-top',
      ]) {
        assert.ok(rules.has(rule), `${rule} was not reported (reported: ${[...rules].join(', ')})`);
      }
      // Exactly the service's drizzle-orm and the type-only schema import: the repository's drizzle-orm is allowed.
      const target = (to: string) => (to.includes('node_modules/drizzle-orm/') ? 'drizzle-orm' : to); // node_modules may be a symlink
      assert.deepEqual(found.filter((v) => v.rule.name === 'sql-in-sql-files').map((v) => `${v.from} → ${target(v.to)}`).sort(), [
        'src/modules/calls/late-report.ts → src/db/schema/index.ts',
        'src/modules/calls/service.ts → drizzle-orm',
      ]);
      assert.deepEqual(await sqlSentOutsideSqlFiles(tree), ['src/modules/analytics/service.ts']);
    } finally {
      fs.rmSync(tree, { recursive: true, force: true });
    }
  });
});
