import { and, asc, count, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { newestFirst } from '../../db/keyset.ts';
import { agents, agentTools, phoneNumbers, tools } from '../../db/schema/index.ts';

export type AgentRow = typeof agents.$inferSelect;
export type NewAgentRow = Omit<typeof agents.$inferInsert, 'clientId'>;

/** Agents of one organization and the tools they may call: every method takes the organization id first. */
export class AgentRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, row: NewAgentRow): Promise<AgentRow> {
    const [agent] = await this.#db.insert(agents).values({ ...row, clientId: orgId }).returning();
    return agent!;
  }

  async findById(orgId: string, agentId: string, options: { forUpdate?: boolean } = {}): Promise<AgentRow | undefined> {
    const query = this.#db.select().from(agents).where(and(eq(agents.clientId, orgId), eq(agents.id, agentId)));
    const [agent] = options.forUpdate ? await query.for('update') : await query;
    return agent;
  }

  async list(orgId: string, limit: number, before?: { at: Date; id: string }): Promise<AgentRow[]> {
    const page = newestFirst(agents.createdAt, agents.id, before);
    return this.#db.select().from(agents).where(and(eq(agents.clientId, orgId), page.after)).orderBy(...page.orderBy).limit(limit);
  }

  async count(orgId: string): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(agents).where(eq(agents.clientId, orgId));
    return row?.n ?? 0;
  }

  async update(orgId: string, agentId: string, changes: Partial<NewAgentRow>): Promise<AgentRow | undefined> {
    const [agent] = await this.#db
      .update(agents)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(agents.clientId, orgId), eq(agents.id, agentId)))
      .returning();
    return agent;
  }

  async delete(orgId: string, agentId: string): Promise<boolean> {
    const deleted = await this.#db.delete(agents).where(and(eq(agents.clientId, orgId), eq(agents.id, agentId))).returning({ id: agents.id });
    return deleted.length > 0;
  }

  /** Of the given tool ids, those that exist in the organization. */
  async existingToolIds(orgId: string, toolIds: string[]): Promise<string[]> {
    if (toolIds.length === 0) return [];
    const rows = await this.#db.select({ id: tools.id }).from(tools).where(and(eq(tools.clientId, orgId), inArray(tools.id, toolIds)));
    return rows.map((r) => r.id);
  }

  async replaceTools(orgId: string, agentId: string, toolIds: string[]): Promise<void> {
    await this.#db.delete(agentTools).where(and(eq(agentTools.clientId, orgId), eq(agentTools.agentId, agentId)));
    if (toolIds.length) await this.#db.insert(agentTools).values(toolIds.map((toolId) => ({ clientId: orgId, agentId, toolId })));
  }

  async toolIds(orgId: string, agentId: string): Promise<string[]> {
    const rows = await this.#db
      .select({ id: agentTools.toolId })
      .from(agentTools)
      .where(and(eq(agentTools.clientId, orgId), eq(agentTools.agentId, agentId)))
      .orderBy(asc(agentTools.createdAt), asc(agentTools.toolId));
    return rows.map((r) => r.id);
  }

  async phoneNumberIds(orgId: string, agentId: string): Promise<string[]> {
    const rows = await this.#db
      .select({ id: phoneNumbers.id })
      .from(phoneNumbers)
      .where(and(eq(phoneNumbers.clientId, orgId), eq(phoneNumbers.agentId, agentId)))
      .orderBy(asc(phoneNumbers.createdAt), asc(phoneNumbers.id));
    return rows.map((r) => r.id);
  }
}
