#!/usr/bin/env node
// The `switchboard` command. The sources are TypeScript run by Node's type stripping (Node >= 22.18);
// when started by an older Node, re-run with the Node the project pins in devDependencies.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'src', 'cli.ts');
const hooks = path.join(root, 'src', 'module-hooks.ts'); // see there: faster, leaner module loading
const [major, minor] = process.versions.node.split('.').map(Number);
if (major > 22 || (major === 22 && minor >= 18)) {
  await import(hooks);
  await import(cli);
} else {
  const pinned = path.join(root, 'node_modules', 'node', 'bin', 'node');
  const result = spawnSync(pinned, ['--import', hooks, cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
