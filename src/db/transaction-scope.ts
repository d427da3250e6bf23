import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Marks the code running inside a database transaction, so what must never happen there can refuse
 * (the job queue starting: it opens connections of its own, which the embedded database, one
 * session for every socket connection, cannot give while a transaction is open).
 */
const scope = new AsyncLocalStorage<true>();

export function inTransactionScope<T>(work: () => Promise<T>): Promise<T> {
  return scope.run(true, work);
}

export function isInTransaction(): boolean {
  return scope.getStore() === true;
}
