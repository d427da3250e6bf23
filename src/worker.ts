import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/lock.ts';
import { runWorker } from './workers.ts';

/** Process entry of a worker-only process (`npm run worker`; the same as `switchboard worker`). */
runWorker(loadConfig(), (line) => process.stdout.write(`${line}\n`)).then(
  () => process.exit(0),
  (err: unknown) => {
    const known = err instanceof ConfigError || err instanceof DataDirLockedError;
    process.stderr.write(`switchboard worker: ${known ? (err as Error).message : String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);
