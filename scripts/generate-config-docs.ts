/**
 * Writes docs/configuration.md from src/config-catalogue.ts (`npm run docs:config`); with `--check`
 * only says whether the page is current (the suite runs the same comparison).
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderConfigurationPage } from '../src/config-docs.ts';

const target = path.join(import.meta.dirname, '..', 'docs', 'configuration.md');
const page = renderConfigurationPage();
if (process.argv.includes('--check')) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== page) {
    console.error('docs/configuration.md is not current: run npm run docs:config');
    process.exit(1);
  }
} else {
  fs.writeFileSync(target, page);
  console.log(`written ${target}`);
}
