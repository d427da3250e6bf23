/** `npm run bench -- <name>` runs bench/<name>.ts; with no name, lists them. */
import fs from 'node:fs';
import path from 'node:path';

const name = process.argv[2];
const available = fs.readdirSync(import.meta.dirname).filter((f) => f.endsWith('.ts') && !['run.ts', 'lib.ts', 'serve.ts', 'console-talk.ts', 'talk-standins.ts', 'kb-corpus.ts'].includes(f)).map((f) => f.slice(0, -3));
if (!name || !available.includes(name)) {
  console.log(`usage: npm run bench -- <${available.join('|')}>`);
  process.exit(name ? 2 : 0);
}
await import(path.join(import.meta.dirname, `${name}.ts`));
