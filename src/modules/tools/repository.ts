import { and, count, eq } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { newestFirst } from '../../db/keyset.ts';
import { belongsToAnotherOrganization } from '../../db/ownership.ts';
import { tools } from '../../db/schema/index.ts';

export type ToolRow = typeof tools.$inferSelect;
export type { ToolParameter } from '../../db/schema/index.ts';
export type NewToolRow = Omit<typeof tools.$inferInsert, 'clientId'>;

/** Tools of one organization: every method takes the organization id first. */
export class ToolRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, row: NewToolRow): Promise<ToolRow | undefined> {
    const [tool] = await this.#db.insert(tools).values({ ...row, clientId: orgId }).onConflictDoNothing().returning();
    return tool;
  }

  async findById(orgId: string, toolId: string): Promise<ToolRow | undefined> {
    const [tool] = await this.#db.select().from(tools).where(and(eq(tools.clientId, orgId), eq(tools.id, toolId)));
    return tool;
  }

  async findByName(orgId: string, name: string): Promise<ToolRow | undefined> {
    const [tool] = await this.#db.select().from(tools).where(and(eq(tools.clientId, orgId), eq(tools.toolName, name)));
    return tool;
  }

  /** 403 rather than 404 on update, as the specification says. */
  existsElsewhere(orgId: string, toolId: string): Promise<boolean> {
    return belongsToAnotherOrganization(this.#db, tools, orgId, toolId);
  }

  async list(orgId: string, limit: number, before?: { at: Date; id: string }): Promise<ToolRow[]> {
    const page = newestFirst(tools, orgId, before);
    return this.#db.select().from(tools).where(page.where).orderBy(...page.orderBy).limit(limit);
  }

  async count(orgId: string): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(tools).where(eq(tools.clientId, orgId));
    return row?.n ?? 0;
  }

  async update(orgId: string, toolId: string, changes: Partial<NewToolRow>): Promise<ToolRow | undefined> {
    const [tool] = await this.#db
      .update(tools)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(tools.clientId, orgId), eq(tools.id, toolId)))
      .returning();
    return tool;
  }

  async delete(orgId: string, toolId: string): Promise<boolean> {
    const rows = await this.#db.delete(tools).where(and(eq(tools.clientId, orgId), eq(tools.id, toolId))).returning({ id: tools.id });
    return rows.length > 0;
  }
}
