import { CONFIG_GROUPS } from './config-catalogue.ts';

/** docs/configuration.md as written from the catalogue: a table of contents, then one table a group. */
export function renderConfigurationPage(): string {
  const anchor = (title: string) => title.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');
  const lines = [
    '# Configuration',
    '',
    '<!-- Written by `npm run docs:config` from src/config-catalogue.ts: edit that file, not this one. -->',
    '',
    'Read once from the environment at start (`src/config.ts`); an invalid value stops the process with a',
    'message naming the variable. Every variable is optional: the defaults run the whole platform on one',
    'machine (embedded PGlite database, local files, in-process workers and voice runtime).',
    '',
    ...CONFIG_GROUPS.map((group) => `- [${group.title}](#${anchor(group.title)})`),
  ];
  for (const group of CONFIG_GROUPS) {
    lines.push('', `## ${group.title}`, '', '| variable | default | meaning |', '|---|---|---|');
    for (const variable of group.variables) {
      lines.push(`| ${variable.names.map((name) => `\`${name}\``).join(', ')} | ${variable.defaultValue} | ${variable.meaning} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
