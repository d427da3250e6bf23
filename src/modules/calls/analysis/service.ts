import type { Static } from 'typebox';
import { clientOf, type Database, type Executor } from '../../../db/database.ts';
import type { RequestContext } from '../../../core/context.ts';
import { roundCredits } from '../../../core/credits.ts';
import { Errors } from '../../../core/errors.ts';
import { newId } from '../../../core/ids.ts';
import type { Logger } from '../../../core/logger.ts';
import { iso } from '../../../core/schemas.ts';
import type { LanguageModel, LlmCompletion } from '../../../adapters/providers/analysis-llm.ts';
import type { JobInfo } from '../../../jobs/job.ts';
import type { JobQueue } from '../../../jobs/queue.ts';
import type { AgentService } from '../../agents/service.ts';
import type { AnalyticsService } from '../../analytics/service.ts';
import type { AuditService } from '../../audit/service.ts';
import type { BillingService } from '../../billing/service.ts';
import type { EventOutbox } from '../../../platform/outbox.ts';
import type { IntegrationService } from '../../integrations/service.ts';
import { CallAnalysisRepository } from './repository.ts';
import { CALL_ANALYSIS, CALL_ANALYSIS_BATCH } from './jobs.ts';
import { analysisMessages, parseAnswer, retryMessages, type AnalysisAnswer } from './prompt.ts';
import type { AnalysisJobProgress, AnalyzeCallsBody } from './schemas.ts';
import { callFiltersOf, type CallFilterInput } from '../call-filter-queries.ts';
import { listCallSummaries } from '../call-list-queries.ts';
import { CallRepository, type CallAnalysis, type CallRow } from '../repository.ts';
import { usageOf } from '../late-report.ts';
import { isFinal, toCall } from '../views.ts';
import { transaction, clientTransaction } from '../../../db/unit-of-work.ts';

/** LLM prices in credits per 1k tokens (PRICES_FILE, README "Prices"). */
export interface AnalysisPrices {
  llm_per_1k_input_tokens: number;
  llm_per_1k_output_tokens: number;
}

export interface CallAnalysisDeps {
  database: Database;
  queue: JobQueue;
  agents: Pick<AgentService, 'analysisAtVersion'>;
  integrations: Pick<IntegrationService, 'languageModelFor'>;
  billing: Pick<BillingService, 'debitForAnalysis'>;
  /** Moves the ended call's place in the usage rollups to its new analysis (and cost), in the analysis's transaction. */
  analytics: Pick<AnalyticsService, 'replaceEndedCall'>;
  outbox: EventOutbox;
  /** call.analyze / call_analysis_job.create entries, in the request's transaction. */
  audit: Pick<AuditService, 'record'>;
  llm: LanguageModel;
  prices: AnalysisPrices;
  log: Logger;
  /** Attempts after the first (the queue's retry limit): a provider failure on the last one is stored `failed`. */
  retryLimit: number;
}

const LLM_TIMEOUT_MS = 120_000;
const BATCH_PAGE = 500;
type Outcome = { analysis: Omit<CallAnalysis, 'analyzed_at' | 'agent_version'>; usage: LlmCompletion[] };

const failed = (error: string): Outcome['analysis'] => ({ status: 'failed', summary: null, success: null, success_reason: null, sentiment: null, structured_data: null, error });
const completed = (answer: AnalysisAnswer): Outcome['analysis'] => ({ status: 'completed', ...answer, error: null });

/**
 * Post-call analysis (extensions.md §13). Each analysis is a run (a row): the one a call's end asks
 * for is unique per call and version, so a second end path finds it; the `call-analysis` job asks
 * the model outside any transaction, then stores the outcome, charges its cost and emits
 * `call.analyzed` in one transaction that first locks the run, so of any number of attempts of a
 * run exactly one stores it.
 */
export class CallAnalysisService {
  readonly #deps: CallAnalysisDeps;
  constructor(deps: CallAnalysisDeps) {
    this.#deps = deps;
  }

  /** In the transaction that ended a call with a transcript: queues its analysis when its version asks for one. */
  async callEnded(within: Executor, orgId: string, call: CallRow): Promise<void> {
    if (!call.transcript?.length) return;
    const config = await this.#deps.agents.analysisAtVersion(within, orgId, call.agentId, call.agentVersion);
    if (!config?.analysis?.enabled) return;
    const run = await new CallAnalysisRepository(within).insertRun(orgId, { id: newId('car'), callSid: call.callSid, agentVersion: config.version, trigger: 'call_end' });
    if (run) await this.#deps.queue.send(CALL_ANALYSIS, { clientId: orgId, runId: run.id }, { within: clientOf(within) });
  }

  /** `POST /api/calls/{call_sid}/analyze`: a new run with the call's version or the one named. */
  async rerun(ctx: RequestContext, callSid: string, version: number | undefined): Promise<ReturnType<typeof toCall>> {
    return clientTransaction(this.#deps.database, async (tx, client) => {
      const call = await new CallRepository(tx).findBySid(ctx.orgId, callSid);
      if (!call) throw Errors.notFound('Call');
      if (!call.transcript?.length) throw Errors.conflict('no_transcript', 'The call has no transcript to analyze');
      const config = await this.#deps.agents.analysisAtVersion(tx, ctx.orgId, call.agentId, version ?? call.agentVersion);
      if (!config) throw Errors.notFound(version === undefined ? 'Agent' : `Agent version ${version}`);
      const run = await new CallAnalysisRepository(tx).insertRun(ctx.orgId, { id: newId('car'), callSid, agentVersion: config.version, trigger: 'rerun' });
      await this.#deps.queue.send(CALL_ANALYSIS, { clientId: ctx.orgId, runId: run!.id }, { within: client });
      await this.#deps.audit.record(tx, ctx, { action: 'call.analyze', resourceType: 'call', resourceId: callSid, changedFields: version === undefined ? [] : ['agent_version'] });
      return toCall(call);
    });
  }

  /** `POST /api/calls/analyze`: the filters are checked now (400), the calls gathered by the batch job. */
  async rerunMany(ctx: RequestContext, input: Static<typeof AnalyzeCallsBody>): Promise<{ job_id: string }> {
    callFiltersOf(input as CallFilterInput, 'body');
    const id = newId('caj');
    await clientTransaction(this.#deps.database, async (tx, client) => {
      await new CallAnalysisRepository(tx).insertBatch(ctx.orgId, { id, filters: input });
      await this.#deps.queue.send(CALL_ANALYSIS_BATCH, { clientId: ctx.orgId, batchId: id }, { within: client });
      await this.#deps.audit.record(tx, ctx, { action: 'call_analysis_job.create', resourceType: 'call_analysis_job', resourceId: id, changedFields: Object.keys(input).sort() });
    });
    return { job_id: id };
  }

  async progress(ctx: RequestContext, jobId: string): Promise<Static<typeof AnalysisJobProgress>> {
    const repo = new CallAnalysisRepository(this.#deps.database.db);
    const batch = await repo.findBatch(ctx.orgId, jobId);
    if (!batch) throw Errors.notFound('Analysis job');
    const counts = await repo.batchCounts(ctx.orgId, jobId);
    const done = { completed: counts.completed ?? 0, failed: counts.failed ?? 0, pending: counts.pending ?? 0 };
    const total = done.completed + done.failed + done.pending;
    const status = batch.status === 'pending' ? 'pending' : done.pending > 0 ? 'running' : 'completed';
    return { job_id: batch.id, status, total, ...done, created_at: iso(batch.createdAt)! };
  }

  /**
   * The batch job: pages through the matching calls (newest first), adding a run per call with a
   * transcript and queuing it in the same transaction. A retry adds only what is missing (a run is
   * unique per batch and call).
   */
  async runBatch(payload: { clientId: string; batchId: string }): Promise<void> {
    const { clientId: orgId, batchId } = payload;
    const batch = await new CallAnalysisRepository(this.#deps.database.db).findBatch(orgId, batchId);
    if (!batch || batch.status !== 'pending') return;
    const filters = callFiltersOf(batch.filters as CallFilterInput, 'body');
    let before: { at: Date; id: string } | undefined;
    for (;;) {
      const page = await listCallSummaries(this.#deps.database, orgId, filters, BATCH_PAGE, before);
      await clientTransaction(this.#deps.database, async (tx, client) => {
        for (const call of page) {
          if (!call.turn_count) continue;
          const run = await new CallAnalysisRepository(tx).insertRun(orgId, { id: newId('car'), callSid: call.call_sid, agentVersion: null, trigger: 'bulk', batchId });
          if (run) await this.#deps.queue.send(CALL_ANALYSIS, { clientId: orgId, runId: run.id }, { within: client });
        }
      });
      if (page.length < BATCH_PAGE) break;
      const last = page[page.length - 1]!;
      before = { at: new Date(last.created_at), id: last.call_sid };
    }
    const counts = await new CallAnalysisRepository(this.#deps.database.db).batchCounts(orgId, batchId);
    await new CallAnalysisRepository(this.#deps.database.db).setBatch(orgId, batchId, { status: 'running', total: Object.values(counts).reduce((a, b) => a + b, 0) });
  }

  /**
   * The analysis job. A provider failure is retried; on the last attempt it is stored `failed`.
   * Output that does not validate is asked for again once with the errors, then stored `failed`.
   */
  async run(payload: { clientId: string; runId: string }, job: JobInfo): Promise<void> {
    const { clientId: orgId, runId } = payload;
    const run = await new CallAnalysisRepository(this.#deps.database.db).findRun(orgId, runId);
    if (!run || run.status !== 'pending') return;
    const call = await new CallRepository(this.#deps.database.db).findBySid(orgId, run.callSid);
    if (!call || !call.transcript?.length) {
      // Nothing to analyze (deleted, or its transcript removed by retention): the run ends, the call keeps what it has.
      await new CallAnalysisRepository(this.#deps.database.db).finishRun(orgId, runId, 'failed');
      return;
    }
    const config = await this.#deps.agents.analysisAtVersion(this.#deps.database.db, orgId, call.agentId, run.agentVersion ?? call.agentVersion);
    const version = config?.version ?? run.agentVersion ?? call.agentVersion;
    let outcome: Outcome;
    if (!config) outcome = { analysis: failed(`agent version ${run.agentVersion ?? call.agentVersion ?? 'latest'} no longer exists`), usage: [] };
    else {
      try {
        outcome = await this.#ask(orgId, config, call);
      } catch (err) {
        this.#deps.log.warn({ err, call_sid: call.callSid, attempt: job.retryCount }, 'post-call analysis: the model failed');
        if (job.retryCount < this.#deps.retryLimit) throw err;
        outcome = { analysis: failed(`the language model failed: ${(err as Error).message.slice(0, 500)}`), usage: [] };
      }
    }
    await this.#store(orgId, runId, call.callSid, { ...outcome.analysis, agent_version: version, analyzed_at: new Date().toISOString() }, this.#costOf(outcome.usage));
  }

  async #ask(orgId: string, config: NonNullable<Awaited<ReturnType<AgentService['analysisAtVersion']>>>, call: CallRow): Promise<Outcome> {
    const settings = config.analysis ?? { enabled: false };
    const model = await this.#deps.integrations.languageModelFor(orgId, settings.llm_integration_id ?? null, config);
    if (typeof model === 'string') return { analysis: failed(model), usage: [] };
    const ask = (messages: ReturnType<typeof analysisMessages>) => this.#deps.llm.complete({
      provider: model.provider, model: config.llmModel, credentials: model.credentials, messages, timeoutMs: LLM_TIMEOUT_MS,
    });
    const messages = analysisMessages(settings, call.transcript ?? []);
    const first = await ask(messages);
    const firstParse = parseAnswer(first.text, settings);
    if ('answer' in firstParse) return { analysis: completed(firstParse.answer), usage: [first] };
    const second = await ask(retryMessages(messages, first.text, firstParse.errors));
    const secondParse = parseAnswer(second.text, settings);
    if ('answer' in secondParse) return { analysis: completed(secondParse.answer), usage: [first, second] };
    return { analysis: failed(`the model's output was invalid twice: ${secondParse.errors.join('; ').slice(0, 1000)}`), usage: [first, second] };
  }

  #costOf(usage: LlmCompletion[]): number {
    const { prices } = this.#deps;
    const input = usage.reduce((sum, u) => sum + u.inputTokens, 0);
    const output = usage.reduce((sum, u) => sum + u.outputTokens, 0);
    return roundCredits((input / 1000) * prices.llm_per_1k_input_tokens + (output / 1000) * prices.llm_per_1k_output_tokens);
  }

  /** One transaction: the run (locked: one attempt stores), the call's analysis and cost, the ledger entry, `call.analyzed`. */
  async #store(orgId: string, runId: string, callSid: string, analysis: CallAnalysis, cost: number): Promise<void> {
    await transaction(this.#deps.database.db, async (tx) => {
      const runs = new CallAnalysisRepository(tx);
      const run = await runs.findRun(orgId, runId, { forUpdate: true });
      if (!run || run.status !== 'pending') return;
      const calls = new CallRepository(tx);
      const call = await calls.findBySid(orgId, callSid, { forUpdate: true });
      if (!call) return runs.finishRun(orgId, runId, 'failed');
      const charged = cost > 0 && (await this.#deps.billing.debitForAnalysis(tx, orgId, callSid, runId, cost));
      const changes: Parameters<CallRepository['update']>[2] = { analysis };
      if (charged) {
        const breakdown = call.costBreakdown ?? { stt: 0, llm: 0, tts: 0, telephony: 0, platform: 0 };
        changes.costBreakdown = { ...breakdown, analysis: roundCredits((breakdown.analysis ?? 0) + cost) };
        changes.totalCost = roundCredits((call.totalCost ?? 0) + cost);
      } else if (cost > 0) {
        this.#deps.log.warn({ call_sid: callSid, cost }, 'post-call analysis: the balance does not cover its cost; not charged');
      }
      const updated = await calls.update(orgId, callSid, changes);
      // A call still running (a rerun of a partial transcript) is counted with its analysis when it ends.
      if (isFinal(call.status)) await this.#deps.analytics.replaceEndedCall(tx, orgId, usageOf(call), usageOf(updated));
      await runs.finishRun(orgId, runId, analysis.status);
      await this.#deps.outbox.emit(tx, orgId, 'call.analyzed', toCall(updated), { agentId: updated.agentId });
    });
  }
}
