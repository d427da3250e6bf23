import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { decodeTimeCursor, toPage, type Page } from '../../core/cursor.ts';
import { randomBase62 } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import { parseInstant } from '../../core/time-zones.ts';
import { AuditRepository, type AuditRow, type NewAuditRow } from './repository.ts';
import type { AuditEntry, ListAuditLogsQuery } from './schemas.ts';
import { transaction } from '../../db/unit-of-work.ts';

type AuditEntryView = Static<typeof AuditEntry>;

/** A change to record: what was done to which resource, and the names of the fields it set. */
export interface AuditChange {
  action: string;
  resourceType: string;
  resourceId: string;
  changedFields?: string[];
}

/** A change the platform made on its own (a scheduled job), not a caller. */
export interface SystemActor {
  system: string;
  orgId: string;
}

export const newAuditId = () => `aud_${randomBase62(20)}`;

function toView(row: AuditRow): AuditEntryView {
  return {
    audit_id: row.id, at: iso(row.at),
    actor: { type: row.actorType as AuditEntryView['actor']['type'], id: row.actorId, label: row.actorLabel },
    action: row.action, resource_type: row.resourceType, resource_id: row.resourceId, changed_fields: row.changedFields,
    ip: row.ip, user_agent: row.userAgent, request_id: row.requestId,
  };
}

/** Who did it, as the entry records it. A key is labelled with its name, a user with the e-mail. */
function actorOf(by: RequestContext | SystemActor): Pick<NewAuditRow, 'actorType' | 'actorId' | 'actorLabel' | 'ip' | 'userAgent' | 'requestId'> {
  if ('system' in by) return { actorType: 'system', actorId: by.system, actorLabel: by.system, ip: null, userAgent: null, requestId: null };
  const request = { ip: by.ip ?? null, userAgent: by.userAgent ?? null, requestId: by.requestId };
  if (by.actor.type === 'api_key') {
    return { actorType: 'api_key', actorId: by.actor.keyId, actorLabel: by.actor.name, ...request };
  }
  // A voice runtime's report with a call token: the platform's own runtime, labelled with its call.
  if (by.actor.type === 'runtime') return { actorType: 'system', actorId: by.actor.callSid, actorLabel: 'voice runtime (call token)', ...request };
  return { actorType: 'user', actorId: by.actor.userId, actorLabel: by.actor.email, ...request };
}

/**
 * The audit log (extensions.md §6): services record each change in the transaction that makes it,
 * so an entry exists exactly when its change committed. Only field names are recorded, never values,
 * so no secret can reach the log.
 */
export class AuditService {
  readonly #db: Db;
  constructor(deps: { db: Db }) {
    this.#db = deps.db;
  }

  /** Records changes of one organization, within the caller's transaction. */
  async record(within: Executor, by: RequestContext | SystemActor, changes: AuditChange | AuditChange[]): Promise<void> {
    const orgId = 'system' in by ? by.orgId : by.orgId;
    const actor = actorOf(by);
    const list = Array.isArray(changes) ? changes : [changes];
    await new AuditRepository(within).insert(orgId, list.map((change) => ({
      id: newAuditId(), ...actor,
      action: change.action, resourceType: change.resourceType, resourceId: change.resourceId, changedFields: change.changedFields ?? [],
    })));
  }

  /**
   * Runs a change and records it in one transaction: the work runs on the transaction it is given,
   * then `describe` names the change from its result (a created row's id is known only then).
   */
  async change<T>(ctx: RequestContext, work: (tx: Executor) => Promise<T>, describe: (result: T) => AuditChange): Promise<T> {
    return transaction(this.#db, async (tx) => {
      const result = await work(tx);
      await this.record(tx, ctx, describe(result));
      return result;
    });
  }

  async list(ctx: RequestContext, query: Static<typeof ListAuditLogsQuery>): Promise<Page<AuditEntryView>> {
    const before = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
    const rows = await new AuditRepository(this.#db).list(ctx.orgId, {
      actorId: query.actor_id, action: query.action, resourceType: query.resource_type, resourceId: query.resource_id,
      from: query.from === undefined ? undefined : parseInstant(query.from, 'querystring.from'),
      to: query.to === undefined ? undefined : parseInstant(query.to, 'querystring.to'),
    }, query.page_size + 1, before);
    return toPage(rows, query.page_size, (r) => ({ value: r.at.toISOString(), id: r.id }), toView);
  }

  /** Removes entries past the 365 days they are kept; the number removed. */
  async removeExpired(now: Date, batch = 5000): Promise<number> {
    const cutoff = new Date(now.getTime() - 365 * 86_400_000);
    let total = 0;
    for (;;) {
      const removed = await AuditRepository.deleteOlderThan(this.#db, cutoff, batch);
      total += removed;
      if (removed < batch) return total;
    }
  }
}
