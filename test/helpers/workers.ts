import { spawn, type ChildProcess } from 'node:child_process';
import type { Database } from '../../src/db/database.ts';
import type { JobQueue } from '../../src/jobs/queue.ts';

/** A `switchboard worker` process with these settings over the test's environment; its output is drained, not shown. */
export function spawnWorker(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['src/cli.ts', 'worker'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.on('data', () => {});
  child.stdout!.on('data', () => {});
  return child;
}

/** Resolves once the process has exited (at once when it already has). */
export function exited(child: ChildProcess): Promise<unknown> {
  return new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
}

/** The address another process reaches the test's database at: the server's, or the embedded database's socket. */
export function workerDatabaseUrl(database: Database): string {
  return process.env.DATABASE_URL ?? `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(String(database.connection.host))}`;
}

/**
 * A job once it has left the running states (created, retry, active), or as it is at the deadline.
 * pg-boss marks a job completed after its handler returns, in a statement of its own, so what the
 * handler wrote can be seen before the job's state says so.
 */
export async function settledJob(boss: JobQueue['boss'], queueName: string, id: string, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await boss.getJobById(queueName, id);
    if (!job || !['created', 'retry', 'active'].includes(job.state) || Date.now() > deadline) return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
