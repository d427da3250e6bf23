import type { Database } from '../../db/database.ts';
import { Errors } from '../../core/errors.ts';
import { pingDatabase } from './health-queries.ts';

/** What the service routes report about the process: whether the database answers. */
export class SystemService {
  readonly #database: Pick<Database, 'pool'>;
  constructor(deps: { database: Pick<Database, 'pool'> }) {
    this.#database = deps.database;
  }

  async checkReady(): Promise<void> {
    try {
      await pingDatabase(this.#database);
    } catch (err) {
      throw Errors.unavailable('The database is not reachable', { cause: err });
    }
  }
}
