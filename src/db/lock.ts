import fs from 'node:fs';

/**
 * One process owns a PGlite data directory: two writers on the same directory were measured to
 * lose data without an error. The lock file holds the owner's pid; a lock whose pid is gone is stale.
 */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  readonly pid: number;
  constructor(dir: string, pid: number) {
    super(`The data directory ${dir} is in use by process ${pid}; stop it or use its database socket`);
    this.pid = pid;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Pid of the live process holding the lock, or null when the lock is free or stale. */
export function lockHolder(lockPath: string): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(lockPath, 'utf8').trim());
  } catch {
    return null;
  }
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : null;
}

export function acquireLock(lockPath: string, dir: string): () => void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx', mode: 0o600 });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        fs.rmSync(lockPath, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = lockHolder(lockPath);
      if (holder !== null && holder !== process.pid) throw new DataDirLockedError(dir, holder);
      fs.rmSync(lockPath, { force: true }); // stale: its owner died without cleaning up
    }
  }
  throw new Error(`Could not take the lock ${lockPath}`);
}
