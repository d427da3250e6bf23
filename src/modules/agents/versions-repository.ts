import { and, desc, eq, lt } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { agentVersions } from '../../db/schema/index.ts';

export type AgentVersionRow = typeof agentVersions.$inferSelect;

/** An organization's agent versions: every method takes the organization id first; rows are only ever inserted. */
export class AgentVersionRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, row: Omit<typeof agentVersions.$inferInsert, 'clientId'>): Promise<AgentVersionRow> {
    const [inserted] = await this.#db.insert(agentVersions).values({ ...row, clientId: orgId }).returning();
    return inserted!;
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
