import type { Static } from 'typebox';
import type { Database, Db } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { decodeTimeCursor, toPage, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newCallSid } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import { isStorableInstant, parseInstant } from '../../core/time-zones.ts';
import type { CostBreakdown } from '../../db/schema/index.ts';
import { roundCredits } from '../../core/credits.ts';
import type { AgentService } from '../agents/service.ts';
import type { AnalyticsService } from '../analytics/service.ts';
import type { BillingService } from '../billing/service.ts';
import { CallRepository, type CallFilters, type CallRow, type NewCallRow } from './repository.ts';
import { listCallSummaries } from './call-list.ts';
import { FINAL_STATUSES, type Call, type CallStatus, type CallSummary, type CreateCallBody, type ListCallsQuery, type UpdateCallBody } from './schemas.ts';

type CallSummaryView = Static<typeof CallSummary>;
type CallView = Static<typeof Call>;
type UpdateInput = Static<typeof UpdateCallBody>;

export function isFinal(status: string): boolean {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

/** Position on the way queued → ringing → in_progress → final; a call only moves forward. */
function stage(status: string): number {
  if (isFinal(status)) return 3;
  return ({ queued: 0, ringing: 1, in_progress: 2 } as Record<string, number>)[status] ?? 0;
}

export function toCallSummary(row: CallRow): CallSummaryView {
  return {
    call_sid: row.callSid, to_number: row.toNumber, from_number: row.fromNumber, agent_id: row.agentId,
    agent_name: row.agentName, client_id: row.clientId, call_type: row.callType, status: row.status,
    recording_enabled: row.recordingEnabled, total_cost: row.totalCost, duration_seconds: row.durationSeconds,
    turn_count: row.turnCount, created_at: iso(row.createdAt), updated_at: iso(row.updatedAt),
    start_time: iso(row.startTime), end_time: iso(row.endTime), end_reason: row.endReason, billing_status: row.billingStatus,
  };
}

export function toCall(row: CallRow): CallView {
  return {
    ...toCallSummary(row),
    cost_breakdown: row.costBreakdown,
    transcript: row.transcript ?? [],
    has_recording: row.recordingKey !== null,
    recording_content_type: row.recordingContentType,
    recording_bytes: row.recordingBytes,
  };
}

/** `YYYY-MM-DD` is a UTC day: `from` starts at its beginning, `to` ends at its end. */
function boundary(value: string | undefined, edge: 'from' | 'to'): Date | undefined {
  if (value === undefined) return undefined;
  const isDay = value.length === 10;
  const path = `querystring.${edge}`;
  const at = parseInstant(isDay ? `${value}T00:00:00.000Z` : value, path);
  if (!(isDay && edge === 'to')) return at;
  const end = new Date(at.getTime() + 86_400_000);
  if (!isStorableInstant(end)) throw Errors.validation(`Invalid ${path}`, [{ path, message: 'is out of range (years 0001 to 9999)' }]);
  return end;
}

function time(value: string | undefined, field: string): Date | undefined {
  return value === undefined ? undefined : parseInstant(value, `body.${field}`);
}

function totalOf(breakdown: CostBreakdown): number {
  return roundCredits(breakdown.stt + breakdown.llm + breakdown.tts + breakdown.telephony + breakdown.platform);
}

/** The voice runtime reports calls here; users read them. */
export interface CallDeps {
  database: Pick<Database, 'db' | 'prepared'>;
  agents: AgentService;
  /** Debits the credits of a call that ends, in the call's transaction. */
  billing: BillingService;
  /** Counts the call that ends into the analytics rollups, in the call's transaction. */
  analytics: AnalyticsService;
}

export class CallService {
  readonly #db: Db;
  readonly #deps: CallDeps;
  readonly #calls: CallRepository;
  constructor(deps: CallDeps) {
    this.#deps = deps;
    this.#db = deps.database.db;
    this.#calls = new CallRepository(this.#db);
  }

  async create(ctx: RequestContext, input: Static<typeof CreateCallBody>): Promise<CallView> {
    const agent = await this.#deps.agents.requireAgent(ctx.orgId, input.agent_id);
    const status = input.status ?? 'queued';
    const startTime = time(input.start_time, 'start_time') ?? (status === 'in_progress' ? new Date() : null);
    const row = await this.#calls.insert(ctx.orgId, {
      callSid: input.call_sid ?? newCallSid(), agentId: agent.id, agentName: agent.agentName,
      callType: input.call_type, status, toNumber: input.to_number, fromNumber: input.from_number ?? null,
      recordingEnabled: agent.recordingEnabled, startTime,
    });
    if (!row) throw Errors.conflict('call_exists', `A call with call_sid ${input.call_sid} already exists`);
    return toCall(row);
  }

  async get(ctx: RequestContext, callSid: string): Promise<CallView> {
    const row = await this.#calls.findBySid(ctx.orgId, callSid);
    if (!row) throw Errors.notFound('Call');
    return toCall(row);
  }

  async list(ctx: RequestContext, query: Static<typeof ListCallsQuery>): Promise<Page<CallSummaryView>> {
    const filters: CallFilters = {
      agentId: query.agent_id, status: query.status, callType: query.call_type,
      from: boundary(query.from, 'from'), to: boundary(query.to, 'to'),
    };
    const before = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
    const rows = await listCallSummaries(this.#deps.database, ctx.orgId, filters, query.limit + 1, before);
    return toPage(rows, query.limit, (r) => ({ value: r.created_at, id: r.call_sid }), (r) => r);
  }

  /**
   * Applies the runtime's report. The row is locked, so of two concurrent final reports one wins
   * and the other gets 409; the final one debits the credits and feeds the rollups in the same
   * transaction, so a call is billed and counted exactly once.
   */
  async update(ctx: RequestContext, callSid: string, input: UpdateInput): Promise<CallView> {
    return this.#db.transaction(async (tx) => {
      const calls = new CallRepository(tx);
      const current = await calls.findBySid(ctx.orgId, callSid, { forUpdate: true });
      if (!current) throw Errors.notFound('Call');
      if (isFinal(current.status)) throw Errors.conflict('call_finalized', `The call already ended (${current.status}); it cannot change`);
      const changes = this.#changes(current, input);
      if (!isFinal(changes.status ?? current.status)) return toCall(await calls.update(ctx.orgId, callSid, changes));

      const cost = changes.totalCost ?? current.totalCost ?? 0;
      changes.billingStatus = cost > 0 ? ((await this.#deps.billing.debitForCall(tx, ctx.orgId, callSid, cost)) ? 'billed' : 'insufficient_credits') : 'waived';
      const updated = await calls.update(ctx.orgId, callSid, changes);
      await this.#deps.analytics.recordEndedCall(tx, ctx.orgId, {
        agentId: updated.agentId, at: updated.startTime ?? updated.createdAt, cost: updated.totalCost ?? 0, durationSeconds: updated.durationSeconds ?? 0,
      });
      return toCall(updated);
    });
  }

  /** The column changes of a report, with the rules of the status path and the derived fields. */
  #changes(current: CallRow, input: UpdateInput): Partial<NewCallRow> {
    const changes: Partial<NewCallRow> = {};
    const status: CallStatus = input.status ?? (current.status as CallStatus);
    if (stage(status) < stage(current.status)) {
      throw Errors.conflict('invalid_status_transition', `A call cannot move from ${current.status} back to ${status}`);
    }
    const final = isFinal(status);
    if (input.end_reason !== undefined && !final) {
      throw Errors.validation('end_reason is only given with a final status', [{ path: 'body.end_reason', message: 'needs a final status' }]);
    }
    changes.status = status;
    // A call connects when it reaches in_progress; one that ends without connecting has no start.
    const startTime = time(input.start_time, 'start_time') ?? current.startTime ?? (status === 'in_progress' ? new Date() : null);
    changes.startTime = startTime;
    if (input.transcript !== undefined) changes.transcript = input.transcript;
    if (input.turn_count !== undefined) changes.turnCount = input.turn_count;
    else if (input.transcript !== undefined) changes.turnCount = input.transcript.length;
    if (input.cost_breakdown !== undefined) {
      const total = totalOf(input.cost_breakdown);
      if (input.total_cost !== undefined && Math.abs(roundCredits(input.total_cost) - total) > 0.0001) {
        throw Errors.validation('total_cost is not the sum of cost_breakdown', [{ path: 'body.total_cost', message: `must equal the breakdown's sum (${total})` }]);
      }
      changes.costBreakdown = input.cost_breakdown;
      changes.totalCost = total;
    } else if (input.total_cost !== undefined) {
      changes.totalCost = roundCredits(input.total_cost);
    }
    if (input.duration_seconds !== undefined) changes.durationSeconds = input.duration_seconds;
    if (final) {
      const endTime = time(input.end_time, 'end_time') ?? new Date();
      if (startTime && endTime < startTime) {
        throw Errors.validation('end_time is before start_time', [{ path: 'body.end_time', message: 'must not be before start_time' }]);
      }
      changes.endTime = endTime;
      changes.endReason = input.end_reason ?? null;
      if (changes.durationSeconds === undefined) {
        changes.durationSeconds = current.durationSeconds ?? (startTime ? Math.round(endTime.getTime() - startTime.getTime()) / 1000 : 0);
      }
    } else if (input.end_time !== undefined) {
      throw Errors.validation('end_time is only given with a final status', [{ path: 'body.end_time', message: 'needs a final status' }]);
    }
    return changes;
  }
}
