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

describe('architecture: the layers hold (.dependency-cruiser.cjs)', () => {
  test('src/ breaks no dependency rule', async () => {
    const found = await violations('src');
    assert.deepEqual(found.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`), []);
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
    write('src/modules/api-keys/repository.ts', 'export class ApiKeyRepository {}\n');
    write('src/modules/calls/service.ts', "import Fastify from 'fastify';\nimport { AgentRepository } from '../agents/repository.ts';\nimport { S3ObjectStore } from '../../adapters/storage/s3-object-store.ts';\nexport const c = [Fastify, AgentRepository, S3ObjectStore];\n");
    // A circle through a type-only import: the strict rule counts it.
    write('src/modules/agents/repository.ts', "import type { B } from './service.ts';\nexport class AgentRepository {}\nexport const r = (b: B) => b;\n");
    write('src/modules/agents/service.ts', "import { AgentRepository } from './repository.ts';\nexport const b = () => AgentRepository;\nexport type B = string;\n");
    write('src/platform/outbox.ts', "import { b } from '../modules/agents/service.ts';\nexport const o = b;\n");
    write('src/adapters/storage/s3-object-store.ts', "import { services } from '../../services.ts';\nexport class S3ObjectStore {}\nexport const s = services;\n");
    write('src/services.ts', 'export const services = {};\n');
    write('runtime/src/engine.ts', "import { services } from '../../src/services.ts';\nexport const e = services;\n");
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
    fs.copyFileSync(path.join(ROOT, 'tsconfig.json'), path.join(tree, 'tsconfig.json'));
    try {
      const rules = new Set([...(await violations('src', tree)), ...(await violations('runtime', tree))].map((v) => v.rule.name));
      for (const rule of [
        'core-is-the-bottom', 'no-fastify-below-routes', 'modules-meet-through-services', 'adapter-implementations-through-factories',
        'adapters-know-no-module', 'no-circular', 'runtime-is-a-client', 'platform-below-modules',
      ]) {
        assert.ok(rules.has(rule), `${rule} was not reported (reported: ${[...rules].join(', ')})`);
      }
    } finally {
      fs.rmSync(tree, { recursive: true, force: true });
    }
  });
});
