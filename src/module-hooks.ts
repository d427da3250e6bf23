/**
 * Loaded with `node --import ./src/module-hooks.ts` by every entry (package.json scripts, bin/).
 *
 * Node 24 finds the format of every `.js` file it resolves by reading its package's package.json
 * and re-parsing that package's whole `exports` map each time. drizzle-orm's map is 180 KB and it
 * has ~300 modules: importing it took 530 ms and left 160 MB of garbage heap (284 MB RSS for the
 * import alone). Relative imports between files of one installed package are resolved here instead,
 * with each directory's nearest package.json `type` read once: 83 ms and 58 MB.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { registerHooks } from 'node:module';

type PackageType = 'module' | 'commonjs' | undefined;
const typeOfDirectory = new Map<string, PackageType>();

/**
 * The `type` of the nearest package.json above `dir`, which decides a `.js` file's format; undefined
 * when it names none (Node then looks at the file's syntax, so it is left to Node).
 */
function packageType(dir: string): PackageType {
  if (typeOfDirectory.has(dir)) return typeOfDirectory.get(dir);
  let type: PackageType;
  const file = path.join(dir, 'package.json');
  if (fs.existsSync(file)) {
    const declared = (JSON.parse(fs.readFileSync(file, 'utf8')) as { type?: string }).type;
    type = declared === 'module' || declared === 'commonjs' ? declared : undefined;
  } else {
    const parent = path.dirname(dir);
    type = parent === dir ? undefined : packageType(parent);
  }
  typeOfDirectory.set(dir, type);
  return type;
}

/**
 * The repository's own SDK is imported from its TypeScript sources (the `@switchboard/source`
 * condition of its exports map), so the server, the CLI and the tests never run a stale build; the
 * published package's `dist/` is for everyone else.
 */
const SOURCE_CONDITION = '@switchboard/source';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === '@switchboard/sdk' || specifier.startsWith('@switchboard/sdk/')) {
      return nextResolve(specifier, { ...context, conditions: [...context.conditions, SOURCE_CONDITION] });
    }
    const parent = context.parentURL;
    if (parent?.startsWith('file:') && parent.includes('/node_modules/') && /^\.\.?\//.test(specifier) && /\.(m?js|cjs)$/.test(specifier)) {
      const file = fileURLToPath(new URL(specifier, parent));
      if (fs.existsSync(file)) {
        const real = fs.realpathSync(file);
        const format = real.endsWith('.mjs') ? 'module' : real.endsWith('.cjs') ? 'commonjs' : packageType(path.dirname(real));
        if (format) return { url: pathToFileURL(real).href, format, shortCircuit: true };
      }
    }
    return nextResolve(specifier, context);
  },
});
