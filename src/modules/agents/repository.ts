import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { agentDocuments, agents, agentTools, documents, phoneNumbers, tools } from '../../db/schema/index.ts';
import { TenantRepository } from '../../db/tenant-repository.ts';

/** What an agent links to by id lists (`tool_ids`, `documentation_ids`). */
const LINKS = {
  tools: { table: agentTools, column: agentTools.toolId, key: 'toolId', target: tools },
  documents: { table: agentDocuments, column: agentDocuments.documentId, key: 'documentId', target: documents },
} as const;
export type LinkKind = keyof typeof LINKS;

export type AgentRow = typeof agents.$inferSelect;
export interface AgentLinks { toolIds: string[]; documentIds: string[]; phoneNumberIds: string[] }
export type { TrafficSplit } from '../../db/schema/index.ts';
export type NewAgentRow = Omit<typeof agents.$inferInsert, 'clientId'>;

/** Agents of one organization and the tools they may call: every method takes the organization id first (by id, list, count, update: TenantRepository). */
export class AgentRepository extends TenantRepository<typeof agents> {
  constructor(db: Executor) {
    super(db, agents);
  }

  async insert(orgId: string, row: NewAgentRow): Promise<AgentRow> {
    const [agent] = await this.db.insert(agents).values({ ...row, clientId: orgId }).returning();
    return agent!;
  }

  async delete(orgId: string, agentId: string): Promise<boolean> {
    const deleted = await this.db.delete(agents).where(this.one(orgId, agentId)).returning({ id: agents.id });
    return deleted.length > 0;
  }

  /** Of the given tool or document ids, those that exist in the organization. */
  async existingIds(kind: LinkKind, orgId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const { target } = LINKS[kind];
    const rows = await this.db.select({ id: target.id }).from(target).where(and(eq(target.clientId, orgId), inArray(target.id, ids)));
    return rows.map((r) => r.id);
  }

  /** Replaces the agent's tool set or document set whole. */
  async replaceLinks(kind: LinkKind, orgId: string, agentId: string, ids: string[]): Promise<void> {
    const { table, key } = LINKS[kind];
    await this.db.delete(table).where(and(eq(table.clientId, orgId), eq(table.agentId, agentId)));
    if (ids.length) await this.db.insert(table).values(ids.map((id) => ({ clientId: orgId, agentId, [key]: id }) as never));
  }

  /**
   * What the agent links to, each list oldest link first (ties by id): one statement, so reading an
   * agent costs one round trip for its links rather than one per kind.
   */
  async links(orgId: string, agentId: string): Promise<AgentLinks> {
    const { rows: [row] } = await this.db.execute<{ tool_ids: string[]; document_ids: string[]; phone_number_ids: string[] }>(sql`SELECT
      ARRAY(SELECT tool_id FROM agent_tools WHERE client_id = ${orgId} AND agent_id = ${agentId} ORDER BY created_at, tool_id) AS tool_ids,
      ARRAY(SELECT document_id FROM agent_documents WHERE client_id = ${orgId} AND agent_id = ${agentId} ORDER BY created_at, document_id) AS document_ids,
      ARRAY(SELECT id FROM phone_numbers WHERE client_id = ${orgId} AND agent_id = ${agentId} ORDER BY created_at, id) AS phone_number_ids`);
    return { toolIds: row!.tool_ids, documentIds: row!.document_ids, phoneNumberIds: row!.phone_number_ids };
  }

  async phoneNumberIds(orgId: string, agentId: string): Promise<string[]> {
    const rows = await this.db
      .select({ id: phoneNumbers.id })
      .from(phoneNumbers)
      .where(and(eq(phoneNumbers.clientId, orgId), eq(phoneNumbers.agentId, agentId)))
      .orderBy(asc(phoneNumbers.createdAt), asc(phoneNumbers.id));
    return rows.map((r) => r.id);
  }
}
