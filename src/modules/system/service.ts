import type { Database } from '../../db/database.ts';
import { Errors } from '../../core/errors.ts';

/** What the service routes report about the process: whether the database answers. */
export class SystemService {
  readonly #database: Pick<Database, 'pool'>;
  constructor(deps: { database: Pick<Database, 'pool'> }) {
    this.#database = deps.database;
  }

  async checkReady(): Promise<void> {
    try {
      await this.#database.pool.query('SELECT 1');
    } catch (err) {
      throw Errors.unavailable('The database is not reachable', { cause: err });
    }
  }
}
