import { and, desc, eq, lt } from 'drizzle-orm';
import { type Executor } from '../../db/database.ts';
import { deferOrSend } from '../../db/unit-of-work.ts';
import { agentVersions } from '../../db/schema/index.ts';

export type AgentVersionRow = typeof agentVersions.$inferSelect;
export type NewAgentVersion = Pick<typeof agentVersions.$inferInsert, 'agentId' | 'version' | 'config' | 'createdBy'>;

const INSERT_VERSION = 'INSERT INTO agent_versions (client_id, agent_id, version, config, created_by) VALUES ($1, $2, $3, $4::jsonb, $5)';

/** An organization's agent versions: every method takes the organization id first; rows are only ever inserted. */
export class AgentVersionRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /**
   * Writes a version in the executor's transaction. It is on the path of every agent change, so, as
   * the change's audit entry and event, it waits in the transaction's unit of work and is written
   * with them just before the COMMIT (db/unit-of-work.ts): a round trip and a statement fewer per
   * change (bench/versions.ts measures what the version costs a PATCH). Elsewhere it goes at once.
   */
  async insert(orgId: string, row: NewAgentVersion): Promise<void> {
    await deferOrSend(this.#db, { name: 'agent_version_insert', text: INSERT_VERSION, values: [orgId, row.agentId, row.version, JSON.stringify(row.config), row.createdBy ?? null] });
  }

  async find(orgId: string, agentId: string, version: number): Promise<AgentVersionRow | undefined> {
    const [row] = await this.#db.select().from(agentVersions)
      .where(and(eq(agentVersions.clientId, orgId), eq(agentVersions.agentId, agentId), eq(agentVersions.version, version)));
    return row;
  }

  /** Newest first, the versions below `before` when given. */
  async list(orgId: string, agentId: string, limit: number, before?: number): Promise<AgentVersionRow[]> {
    const where = and(eq(agentVersions.clientId, orgId), eq(agentVersions.agentId, agentId), before === undefined ? undefined : lt(agentVersions.version, before));
    return this.#db.select().from(agentVersions).where(where).orderBy(desc(agentVersions.version)).limit(limit);
  }
}
