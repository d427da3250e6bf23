import type { Db } from '../../../db/database.ts';
import type { RequestContext } from '../../../core/context.ts';
import type { CallTokens } from '../../../core/auth/call-tokens.ts';
import { Errors } from '../../../core/errors.ts';
import { newCallSid } from '../../../core/ids.ts';
import type { AgentService } from '../../agents/service.ts';
import type { AuditService } from '../../audit/service.ts';
import type { BillingService } from '../../billing/service.ts';
import type { CallService } from '../service.ts';
import { transaction } from '../../../db/unit-of-work.ts';

export interface PreviewSessionDeps {
  db: Db;
  calls: CallService;
  agents: AgentService;
  billing: BillingService;
  callTokens: Pick<CallTokens, 'issue'>;
  audit: Pick<AuditService, 'record'>;
  /** The runtime's preview WebSocket, `{ws base}/api/runtime/preview` (the token is added per session). */
  previewUrl: string;
}

/** What the browser needs to talk to the agent (extensions.md §11). */
export interface PreviewSession {
  call_sid: string;
  websocket_url: string;
  token: string;
  expires_at: string;
}

/** What a preview call has in place of the other party's number: it has no phone leg. */
export const PREVIEW_TO_NUMBER = 'browser';

/**
 * `POST /api/agents/{agent_id}/preview-sessions`: a `preview` call admitted like a dialled one (credits
 * left, the concurrency limit, the agent's version picked), and the call token the browser hands the
 * runtime's preview WebSocket. The runtime acts with that same token, so the session is the call's own.
 */
export class PreviewSessions {
  readonly #deps: PreviewSessionDeps;
  constructor(deps: PreviewSessionDeps) {
    this.#deps = deps;
  }

  async create(ctx: RequestContext, agentId: string): Promise<PreviewSession> {
    const agent = await this.#deps.agents.requireAgent(ctx.orgId, agentId);
    const callSid = newCallSid();
    await transaction(this.#deps.db, async (tx) => {
      // Read in the transaction that admits the call, as dialing does: a balance spent meanwhile is seen.
      if ((await this.#deps.billing.balanceOf(tx, ctx.orgId)) <= 0) {
        throw Errors.conflict('insufficient_credits', 'The organization has no credits left to place a call; buy credits first');
      }
      await this.#deps.calls.openCall(tx, ctx.orgId, {
        callSid, agentId: agent.id, agentName: agent.agentName, callType: 'preview', status: 'queued',
        toNumber: PREVIEW_TO_NUMBER, fromNumber: null, recordingEnabled: agent.recordingEnabled, metadata: {}, variables: {},
      });
      await this.#deps.audit.record(tx, ctx, { action: 'call.preview', resourceType: 'call', resourceId: callSid, changedFields: [] });
    });
    const { token, expiresAt } = await this.#deps.callTokens.issue({ callSid, orgId: ctx.orgId, agentId: agent.id }, agent.maxCallDurationSeconds);
    return {
      call_sid: callSid,
      websocket_url: `${this.#deps.previewUrl}?token=${encodeURIComponent(token)}`,
      token,
      expires_at: expiresAt.toISOString(),
    };
  }
}
