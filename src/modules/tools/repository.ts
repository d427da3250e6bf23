import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { belongsToAnotherOrganization } from '../../db/ownership.ts';
import { tools } from '../../db/schema/index.ts';
import { TenantRepository } from '../../db/tenant-repository.ts';

export type ToolRow = typeof tools.$inferSelect;
export type { ToolParameter } from '../../db/schema/index.ts';
export type NewToolRow = Omit<typeof tools.$inferInsert, 'clientId'>;

/** Tools of one organization: every method takes the organization id first (by id, list, count, update: TenantRepository). */
export class ToolRepository extends TenantRepository<typeof tools> {
  constructor(db: Executor) {
    super(db, tools);
  }

  /** Undefined when the organization has a tool of that name already. */
  async insert(orgId: string, row: NewToolRow): Promise<ToolRow | undefined> {
    const [tool] = await this.db.insert(tools).values({ ...row, clientId: orgId }).onConflictDoNothing().returning();
    return tool;
  }

  async findByName(orgId: string, name: string): Promise<ToolRow | undefined> {
    const [tool] = await this.db.select().from(tools).where(and(eq(tools.clientId, orgId), eq(tools.toolName, name)));
    return tool;
  }

  async delete(orgId: string, toolId: string): Promise<boolean> {
    const rows = await this.db.delete(tools).where(this.one(orgId, toolId)).returning({ id: tools.id });
    return rows.length > 0;
  }

  /** 403 rather than 404 on update, as the specification says. */
  existsElsewhere(orgId: string, toolId: string): Promise<boolean> {
    return belongsToAnotherOrganization(this.db, tools, orgId, toolId);
  }
}
