import { index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { clientId, createdAt } from './columns.ts';
import { agents } from './configuration.ts';

/**
 * Every configuration an agent has had (extensions.md §12): written once, in the transaction of the
 * create, PATCH or restore that made it, and never changed. The primary key is what keeps a version
 * number from being handed out twice; the agent's row lock keeps them gapless.
 */
export const agentVersions = pgTable(
  'agent_versions',
  {
    clientId: clientId(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    /** The agent's editable fields under their API names, as they were. */
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
    /** The user behind the change (an API key acts for its creator); null for changes made by the platform. */
    createdBy: text('created_by'),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.version] }), index('agent_versions_client_agent_idx').on(t.clientId, t.agentId, t.version)],
);

/** A traffic split: which versions take the new calls and in which proportions (weights sum to 100). */
export interface TrafficSplit {
  version: number;
  weight: number;
}
