import type { Static } from 'typebox';
import type { Database, Db, Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { decodeTimeCursor, toPage, type Page } from '../../core/cursor.ts';
import { ErrorCodes, Errors, isAppError } from '../../core/errors.ts';
import { newCallSid } from '../../core/ids.ts';
import { parseInstant } from '../../core/time-zones.ts';
import type { AgentService } from '../agents/service.ts';
import type { AnalyticsService } from '../analytics/service.ts';
import type { BillingService } from '../billing/service.ts';
import type { DataSettingsService } from '../data-settings/service.ts';
import { CONCURRENCY_RETRY_AFTER_SECONDS, type LimitsService } from '../limits/service.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import type { AuditService } from '../audit/service.ts';
import { CallRepository, type CallRow, type NewCallRow } from './repository.ts';
import { callFiltersOf } from './call-filter-queries.ts';
import { listCallSummaries } from './call-list-queries.ts';
import type { CallStatus } from '../../core/call-enums.ts';
import { METADATA_MAX_BYTES, type Call, type CallSummary, type CreateCallBody, type ListCallsQuery, type UpdateCallBody } from './schemas.ts';
import { isFinal, statusStage, toCall } from './views.ts';
import type { CallEndListener, CampaignCall, EndedTranscriptListener, FinalReportListener } from './ports.ts';
import { costChanges, lateReportChanges } from './late-report.ts';
import { CallEnding } from './ending.ts';
import { transaction } from '../../db/unit-of-work.ts';

// The call's schemas, for the modules that answer a call (the voice runtime's call configuration).
export { Call as CallSchema, CallVariables } from './schemas.ts';
// The call as the API shows it, and the status rules, for the modules that meet calls through this service.
export { isFinal, statusStage, toCall } from './views.ts';

type CallSummaryView = Static<typeof CallSummary>;
type CallView = Static<typeof Call>;
type UpdateInput = Static<typeof UpdateCallBody>;

function time(value: string | undefined, field: string): Date | undefined {
  return value === undefined ? undefined : parseInstant(value, `body.${field}`);
}

/** `metadata` is bounded by its size as JSON, which no schema keyword can express. */
export function checkMetadata(metadata: Record<string, unknown> | undefined): void {
  if (metadata === undefined) return;
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > METADATA_MAX_BYTES) {
    throw Errors.validation('metadata is too large', [{ path: 'body.metadata', message: `must be at most ${METADATA_MAX_BYTES} bytes as JSON (is ${bytes})` }]);
  }
}

/** Whom a call's version stays with (extensions.md §12): the other party's number, else the call itself. */
function callerKey(row: NewCallRow): string {
  const other = row.callType === 'outbound' ? row.toNumber : row.fromNumber;
  return other || row.callSid;
}

// The ports other modules implement or call (listeners, placement, dialing): see ports.ts.
export type { CallDialer, CallEndListener, CallPlacer, CampaignCall, DialInput, EndedTranscriptListener, FinalReportListener, Placement } from './ports.ts';

/** The voice runtime reports calls here; users read them. */
export interface CallDeps {
  database: Pick<Database, 'db' | 'prepared' | 'planned'>;
  agents: AgentService;
  /** Debits the credits of a call that ends, in the call's transaction. */
  billing: BillingService;
  /** Counts the call that ends into the analytics rollups, in the call's transaction. */
  analytics: AnalyticsService;
  /** Redacts a reported transcript when the organization's policy says so. */
  dataSettings: DataSettingsService;
  /** Admits a new call within the organization's concurrency limit, in the transaction that inserts it. */
  limits: LimitsService;
  /** call.created / call.updated / call.ended, written in the call's transaction. */
  outbox: EventOutbox;
  /** call.create / call.update entries for the reports made through the API, in the call's transaction. */
  audit: Pick<AuditService, 'record'>;
}

export class CallService {
  readonly #db: Db;
  readonly #deps: CallDeps;
  readonly #calls: CallRepository;
  readonly #ending: CallEnding;
  readonly #finalReportListeners: FinalReportListener[] = [];
  constructor(deps: CallDeps) {
    this.#deps = deps;
    this.#db = deps.database.db;
    this.#calls = new CallRepository(this.#db);
    this.#ending = new CallEnding(deps);
  }

  async create(ctx: RequestContext, input: Static<typeof CreateCallBody>): Promise<CallView> {
    checkMetadata(input.metadata);
    const agent = await this.#deps.agents.requireAgent(ctx.orgId, input.agent_id);
    const status = input.status ?? 'queued';
    const startTime = time(input.start_time, 'start_time') ?? (status === 'in_progress' ? new Date() : null);
    const row: NewCallRow = {
      callSid: input.call_sid ?? newCallSid(), agentId: agent.id, agentName: agent.agentName,
      callType: input.call_type, status, toNumber: input.to_number, fromNumber: input.from_number ?? null,
      recordingEnabled: agent.recordingEnabled, startTime, metadata: input.metadata ?? {}, variables: input.variables ?? {},
      // A call reported already ended through the API takes no later report.
      finalReportAt: isFinal(status) ? new Date() : null,
    };
    return toCall(await transaction(this.#db, async (tx) => {
      const { call } = await this.openCall(tx, ctx.orgId, row);
      await this.#deps.audit.record(tx, ctx, { action: 'call.create', resourceType: 'call', resourceId: call.callSid, changedFields: Object.keys(input) });
      return call;
    }));
  }

  /**
   * Inserts a new call in `tx` if the organization's concurrency limit admits it: the one way every
   * path creates a call (runtime report, dial, carrier voice webhook). The limit's lock is held until
   * `tx` ends, so concurrent creations never exceed it. Over the limit, `refuse` answers 429
   * `concurrency_limit`; `record_failed` keeps the call, ended `failed` through the final path.
   */
  async openCall(tx: Executor, orgId: string, row: NewCallRow, whenFull: 'refuse' | 'record_failed' = 'refuse'): Promise<{ call: CallRow; admitted: boolean }> {
    const { admitted, limit } = await this.#deps.limits.admitCall(tx, orgId);
    if (!admitted && whenFull === 'refuse') throw Errors.concurrencyLimit(limit, CONCURRENCY_RETRY_AFTER_SECONDS);
    const agentVersion = row.agentVersion ?? await this.#deps.agents.versionForCall(tx, orgId, row.agentId, callerKey(row));
    const created = await new CallRepository(tx).insert(orgId, { ...row, agentVersion, status: admitted ? row.status : 'queued' });
    if (!created) throw Errors.conflict(ErrorCodes.callExists, `A call with call_sid ${row.callSid} already exists`);
    await this.#deps.outbox.emit(tx, orgId, 'call.created', toCall(created), { agentId: created.agentId });
    if (admitted) return { call: created, admitted };
    return { call: await this.applyReport(tx, orgId, created.callSid, { status: 'failed', end_reason: 'error' }), admitted };
  }

  /** Registers a listener of the runtime's final reports, run after their commit (the composition root binds telephony). */
  onFinalReport(listener: FinalReportListener): void {
    this.#finalReportListeners.push(listener);
  }

  /** Registers a listener of ended calls with their transcript (the composition root binds post-call analysis). */
  onEndedTranscript(listener: EndedTranscriptListener): void {
    this.#ending.onTranscript(listener);
  }

  /** Registers a listener of final statuses (the composition root binds campaigns here). */
  onCallEnded(listener: CallEndListener): void {
    this.#ending.onEnded(listener);
  }

  /** Creates a campaign's call in the caller's transaction; the agent is read (and its name copied) there too. */
  async createCampaignCall(within: Executor, orgId: string, call: CampaignCall): Promise<void> {
    const agent = await this.#deps.agents.requireAgent(orgId, call.agentId, { within });
    const agentVersion = await this.#deps.agents.versionForCall(within, orgId, agent.id, call.toNumber);
    const row = await new CallRepository(within).insert(orgId, {
      callSid: call.callSid, agentId: agent.id, agentName: agent.agentName, agentVersion, callType: 'outbound', status: 'queued',
      toNumber: call.toNumber, fromNumber: call.fromNumber, recordingEnabled: agent.recordingEnabled, campaignId: call.campaignId,
    });
    if (!row) throw new Error(`call ${call.callSid} already exists`);
  }

  /**
   * Ends a call that never connected (a placement the provider refused, or whose outcome was lost
   * with a worker) through the same final path as the runtime's report. False when it had already
   * ended.
   */
  async endUnconnected(orgId: string, callSid: string, status: 'failed' | 'canceled'): Promise<boolean> {
    try {
      await transaction(this.#db, (tx) => this.applyReport(tx, orgId, callSid, { status, end_reason: 'error' }));
      return true;
    } catch (err) {
      if (isAppError(err, ErrorCodes.callFinalized)) return false;
      throw err;
    }
  }

  async get(ctx: RequestContext, callSid: string): Promise<CallView> {
    const row = await this.#calls.findBySid(ctx.orgId, callSid);
    if (!row) throw Errors.notFound('Call');
    return toCall(row);
  }

  async list(ctx: RequestContext, query: Static<typeof ListCallsQuery>): Promise<Page<CallSummaryView>> {
    const filters = callFiltersOf(query, 'querystring');
    const before = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
    const rows = await listCallSummaries(this.#deps.database, ctx.orgId, filters, query.limit + 1, before);
    return toPage(rows, query.limit, (r) => ({ value: r.created_at, id: r.call_sid }), (r) => r);
  }

  /** The runtime's report (`PATCH /api/calls/{call_sid}`). */
  async update(ctx: RequestContext, callSid: string, input: UpdateInput): Promise<CallView> {
    const { call, ended } = await transaction(this.#db, async (tx) => {
      const reported = await this.#report(tx, ctx.orgId, callSid, input, 'api');
      await this.#deps.audit.record(tx, ctx, { action: 'call.update', resourceType: 'call', resourceId: callSid, changedFields: Object.keys(input) });
      return reported;
    });
    // This report ended the call, so the carrier had not ended it: its leg is still up. (A late report's call was ended by the carrier.)
    if (ended) for (const listener of this.#finalReportListeners) await listener.finalReported(ctx.orgId, call);
    return toCall(call);
  }

  /**
   * Applies a report to a call in `tx`: the one path of every report (the runtime's PATCH, the
   * carrier's status callbacks). The row is locked, so of two concurrent final reports one wins and
   * the other gets 409 `call_finalized`; the final one debits the credits and feeds the rollups in
   * the same transaction, so a call is billed and counted exactly once.
   */
  async applyReport(tx: Executor, orgId: string, callSid: string, input: UpdateInput): Promise<CallRow> {
    return (await this.#report(tx, orgId, callSid, input, 'platform')).call;
  }

  /**
   * A report from the API (`api`: the runtime's PATCH) or from the platform itself (`platform`: the
   * carrier's status callback, a refused placement). A call the platform ended still takes the
   * API's report once, merged (`#lateReport`); after a final report through the API, nothing.
   * `ended`: this report ended the call.
   */
  async #report(tx: Executor, orgId: string, callSid: string, input: UpdateInput, via: 'api' | 'platform'): Promise<{ call: CallRow; ended: boolean }> {
    const calls = new CallRepository(tx);
    const current = await calls.findBySid(orgId, callSid, { forUpdate: true });
    if (!current) throw Errors.notFound('Call');
    const finalized = () => Errors.conflict(ErrorCodes.callFinalized, `The call already ended (${current.status}); it cannot change`);
    if (isFinal(current.status) && (via === 'platform' || current.finalReportAt !== null)) throw finalized();
    const report = input.transcript ? { ...input, transcript: await this.#deps.dataSettings.transcriptToStore(tx, orgId, input.transcript) } : input;
    if (isFinal(current.status)) return { call: await this.#lateReport(tx, orgId, current, report), ended: false };
    const changes = this.#changes(current, report);
    if (!isFinal(changes.status ?? current.status)) {
      const moved = await calls.update(orgId, callSid, changes);
      // A report that changes no status (a transcript so far, a cost) is not a status change.
      if (changes.status !== current.status) await this.#deps.outbox.emit(tx, orgId, 'call.updated', toCall(moved), { agentId: moved.agentId });
      return { call: moved, ended: false };
    }

    // Once per call: the locked row refuses every later report of a final call (409 call_finalized), but the one late report.
    changes.billingStatus = await this.#ending.charge(tx, orgId, callSid, changes.totalCost ?? current.totalCost ?? 0);
    if (via === 'api') changes.finalReportAt = new Date();
    const updated = await calls.update(orgId, callSid, changes);
    await this.#ending.ended(tx, orgId, updated);
    return { call: updated, ended: true };
  }

  /**
   * The runtime's report of a call the carrier already ended: merged into it (late-report.ts), the
   * call billed again to its new cost (one more ledger row for the difference, or its first debit
   * when nothing was charged) and its place in the analytics replaced, so it is still billed and
   * counted once. `call.updated` tells the subscribers; `call.ended` was sent when it ended.
   */
  async #lateReport(tx: Executor, orgId: string, current: CallRow, report: UpdateInput): Promise<CallRow> {
    const changes = lateReportChanges(current, report);
    changes.billingStatus = await this.#ending.rebill(tx, orgId, current, changes.totalCost ?? current.totalCost ?? 0);
    const updated = await new CallRepository(tx).update(orgId, current.callSid, changes);
    await this.#ending.reportedLate(tx, orgId, current, updated, Boolean(report.transcript?.length));
    return updated;
  }

  /** The column changes of a report, with the rules of the status path and the derived fields. */
  #changes(current: CallRow, input: UpdateInput): Partial<NewCallRow> {
    const changes: Partial<NewCallRow> = {};
    const status: CallStatus = input.status ?? (current.status as CallStatus);
    if (statusStage(status) < statusStage(current.status)) {
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
    Object.assign(changes, costChanges(input));
    if (input.duration_seconds !== undefined) changes.durationSeconds = input.duration_seconds;
    if (input.latency_p50_ms !== undefined) changes.latencyP50Ms = input.latency_p50_ms;
    if (input.latency_p95_ms !== undefined) changes.latencyP95Ms = input.latency_p95_ms;
    if (input.agent_version !== undefined) changes.agentVersion = input.agent_version;
    if (input.error !== undefined) changes.error = input.error;
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
