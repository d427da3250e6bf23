import type { Static } from 'typebox';
import type { Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import type { CallRow } from './repository.ts';
import type { Call, DialCallBody } from './schemas.ts';

type CallView = Static<typeof Call>;
export type DialInput = Static<typeof DialCallBody>;

/**
 * Told, inside the transaction that ends a call, that the call reached a final status (once per
 * call, whichever path ended it): campaigns move the call's contact in that same transaction.
 * Bound in the composition root, so this module imports none of its listeners.
 */
export interface CallEndListener {
  callEnded(within: Executor, orgId: string, call: { callSid: string; campaignId: string | null; status: string }): Promise<void>;
}

/**
 * Told, inside the transaction that gives an ended call its transcript (the final report, or the
 * runtime's report after the carrier ended the call), of the call as it now is: post-call analysis
 * queues its job there (extensions.md §13), so an ended call is never left without one.
 */
export interface EndedTranscriptListener {
  callEnded(within: Executor, orgId: string, call: CallRow): Promise<void>;
}

/**
 * Told after the transaction of a runtime's final report committed (never inside it: the listener
 * calls the carrier): telephony hangs up or transfers the carrier leg that is still up.
 */
export interface FinalReportListener {
  finalReported(orgId: string, call: CallRow): Promise<void>;
}

/** A call a campaign's dialer creates (outbound, queued), in the dialer's transaction. */
export interface CampaignCall {
  callSid: string;
  agentId: string;
  toNumber: string;
  fromNumber: string;
  campaignId: string;
}

/** What the placement of one outbound call the platform made (status `queued`) needs. */
export interface Placement {
  callSid: string;
  agentId: string;
  toNumber: string;
  fromNumber: string;
  fromPhoneNumberId: string;
}

/**
 * Places a created outbound call with its number's provider: resolves once the provider accepted it
 * (or left it queued for the voice runtime), throws when it refused or did not answer. Implemented
 * by telephony (OutboundDialing), used by the campaign dialer; bound in the composition root.
 */
export interface CallPlacer {
  place(orgId: string, call: Placement): Promise<void>;
}

/** `POST /api/calls/dial`: creates and places an outbound call (telephony implements it). */
export interface CallDialer {
  dial(ctx: RequestContext, input: DialInput): Promise<CallView>;
}

