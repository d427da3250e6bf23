import fs from 'node:fs';
import path from 'node:path';

/**
 * A secret generated once into the data directory and read back on every later start: the JWT
 * secret and the encryption key of an installation that was not given them. Written with mode
 * 0600 and `wx`, so when two processes start together the second reads what the first wrote.
 */
export function readOrCreateSecretFile(dataDir: string, name: string, generate: () => string): string {
  const file = path.join(dataDir, name);
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = generate();
  try {
    fs.writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw err;
  }
}
