import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, testEnv } from './helpers/env.ts';
import { createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';

/*
 * Issue 28 item 13: @switchboard/sdk as an outside integrator gets it. The package is packed as
 * `npm publish` would pack it, installed from the tarball into an empty folder (offline: its
 * dependencies are packed from this repository's node_modules, so nothing is downloaded), then
 * used by plain Node (which never strips types inside node_modules) and type-checked by
 * `tsc --strict` with module nodenext (which refuses .ts files from node_modules, TS5097).
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const NPM_OPTIONS = ['--no-audit', '--no-fund', '--loglevel=error'];

/** The packages the SDK needs at run time, with theirs, found where this repository installed them. */
function dependencyDirs(name: string, seen = new Map<string, string>()): Map<string, string> {
  const dir = name === '@switchboard/sdk' ? path.join(ROOT, 'sdk') : path.join(ROOT, 'node_modules', name);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    if (seen.has(dependency)) continue;
    seen.set(dependency, path.join(ROOT, 'node_modules', dependency));
    dependencyDirs(dependency, seen);
  }
  return seen;
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', [...args, ...NPM_OPTIONS], { cwd, env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}` }, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

describe('@switchboard/sdk packed and installed as an outside integrator gets it', { timeout: 600_000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-pack-'));
  const project = path.join(tmp, 'integrator');
  let server: FastifyInstance;
  let baseUrl: string;
  let org: TestOrg;

  before(async () => {
    // The SDK's own tarball (its prepack builds dist/), then its dependencies' from this repository.
    await npm(['pack', '--pack-destination', tmp], path.join(ROOT, 'sdk'));
    await npm(['pack', '--ignore-scripts', '--pack-destination', tmp, ...dependencyDirs('@switchboard/sdk').values()], ROOT);
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
    const tarballs = fs.readdirSync(tmp).filter((f) => f.endsWith('.tgz')).map((f) => path.join(tmp, f));
    await npm(['install', '--offline', '--ignore-scripts', ...tarballs], project);

    const { config } = await testEnv();
    server = await buildTestApp(config);
    await server.listen({ host: '127.0.0.1', port: 0 });
    const address = server.server.address() as { port: number };
    baseUrl = `http://127.0.0.1:${address.port}`;
    org = await createOrg();
    await createAgent(org, { agent_name: 'Packed SDK agent' });
  });

  after(async () => {
    await server?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the tarball ships compiled JavaScript with declarations and an exports map, no TypeScript sources', async () => {
    const installed = path.join(project, 'node_modules', '@switchboard', 'sdk');
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
    assert.equal(manifest.exports['.']!.default, './dist/index.js');
    assert.equal(manifest.exports['.']!.types, './dist/index.d.ts');
    const files = fs.readdirSync(installed, { recursive: true }).map(String);
    assert.ok(files.includes(path.join('dist', 'index.js')) && files.includes(path.join('dist', 'index.d.ts')), files.join(', '));
    assert.deepEqual(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), []);
  });

  test('plain Node (no type stripping, no hooks) lists the agents of a running server', async () => {
    fs.writeFileSync(path.join(project, 'list-agents.mjs'), `
      import { Switchboard } from '@switchboard/sdk';
      const sb = new Switchboard({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY, organizationId: process.env.ORG_ID });
      const names = [];
      for await (const agent of sb.agents.list()) names.push(agent.agent_name);
      console.log(JSON.stringify(names));
    `);
    const { stdout } = await run(process.execPath, ['--no-experimental-strip-types', 'list-agents.mjs'], {
      cwd: project,
      env: { PATH: process.env.PATH, BASE_URL: baseUrl, API_KEY: org.adminKey, ORG_ID: org.orgId },
    });
    assert.deepEqual(JSON.parse(stdout), ['Packed SDK agent']);
  });

  test('tsc --strict with module nodenext type-checks a program using the installed package', async () => {
    fs.writeFileSync(path.join(project, 'check.ts'), `
      import { Switchboard, SwitchboardError, type Page } from '@switchboard/sdk';
      import type { components } from '@switchboard/sdk/schema';
      const sb = new Switchboard({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', organizationId: 'org' });
      export async function firstAgentName(id: string): Promise<string> {
        const agent: components['schemas']['Agent'] = await sb.agents.get(id);
        return agent.agent_name;
      }
      export const isRefusal = (err: unknown): number | undefined => (err instanceof SwitchboardError ? err.status : undefined);
      export type AgentPage = Page<components['schemas']['AgentSummary']>;
    `);
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true,
        lib: ['es2023', 'dom'], types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')],
      },
      files: ['check.ts'],
    }));
    await run(process.execPath, [TSC, '-p', project]).catch((err: { stdout?: string }) => assert.fail(`tsc refused the program: ${err.stdout}`));
    // The check can fail: the same program with a type error is refused.
    fs.writeFileSync(path.join(project, 'check.ts'), `import { Switchboard } from '@switchboard/sdk';\nexport const n: number = (await new Switchboard({ baseUrl: 'x' }).agents.get('a')).agent_name;\n`);
    await assert.rejects(run(process.execPath, [TSC, '-p', project]), (err: { stdout?: string }) => /TS2322/.test(String(err.stdout)));
  });
});
