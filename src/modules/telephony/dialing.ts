import type { Db } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { AppError, Errors } from '../../core/errors.ts';
import { newCallSid } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import { CarrierError, type CarrierClient } from '../../adapters/carrier/carrier-client.ts';
import { SipProviderError, type SipTrunks } from '../../adapters/sip/sip-trunks.ts';
import type { AgentService } from '../agents/service.ts';
import type { AuditService } from '../audit/service.ts';
import type { BillingService } from '../billing/service.ts';
import { checkMetadata, type CallDialer, type CallPlacer, type CallService, type DialInput, type Placement } from '../calls/service.ts';
import type { IntegrationService } from '../integrations/service.ts';
import type { PhoneNumberService } from '../phone-numbers/service.ts';
import { TelephonyRepository } from './repository.ts';
import { placedCallQuery } from './service.ts';
import { transaction } from '../../db/unit-of-work.ts';

export interface DialingDeps {
  db: Db;
  calls: CallService;
  agents: AgentService;
  phoneNumbers: PhoneNumberService;
  integrations: IntegrationService;
  billing: BillingService;
  carrier: CarrierClient;
  sip: SipTrunks;
  /** The carrier webhooks' addresses (CARRIER_A_VOICE_URL, CARRIER_A_STATUS_URL), given to the carrier with each placed call. */
  urls: { voice: string; status: string };
  log: Logger;
  /** call.dial, in the transaction that creates the call. */
  audit: Pick<AuditService, 'record'>;
}

/** The provider refused the placement (`rejected`, with its reason) or did not answer (`unavailable`). */
export class PlacementError extends Error {
  override name = 'PlacementError';
  readonly kind: 'rejected' | 'unavailable';
  constructor(kind: 'rejected' | 'unavailable', message: string, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
  }
}

const PREFIX_DEFAULT_ROOM = 'call-';

/**
 * Outbound calls (extensions.md §2): `POST /api/calls/dial`, and the placement of every call the
 * platform makes (campaigns bind their dialer here). carrier_a numbers are placed through the
 * carrier's `Calls.json`; SIP numbers through the SIP backend (LiveKit's CreateSIPParticipant, or
 * left queued for the runtime by the local backend).
 */
export class OutboundDialing implements CallDialer, CallPlacer {
  readonly #deps: DialingDeps;
  constructor(deps: DialingDeps) {
    this.#deps = deps;
  }

  async dial(ctx: RequestContext, input: DialInput): ReturnType<CallService['get']> {
    checkMetadata(input.metadata);
    const { db, calls } = this.#deps;
    const agent = await this.#deps.agents.requireAgent(ctx.orgId, input.agent_id);
    const number = await this.#deps.phoneNumbers.requireOutboundNumber(ctx.orgId, input.from_phone_number_id);
    const callSid = newCallSid();
    await transaction(db, async (tx) => {
      // Read in the transaction that admits the call: a balance spent meanwhile is seen.
      if ((await this.#deps.billing.balanceOf(tx, ctx.orgId)) <= 0) {
        throw Errors.conflict('insufficient_credits', 'The organization has no credits left to place a call; buy credits first');
      }
      await calls.openCall(tx, ctx.orgId, {
        callSid, agentId: agent.id, agentName: agent.agentName, callType: 'outbound', status: 'queued',
        toNumber: input.to_number, fromNumber: number.phoneNumber, recordingEnabled: agent.recordingEnabled,
        metadata: input.metadata ?? {}, variables: input.variables ?? {},
      });
      await this.#deps.audit.record(tx, ctx, { action: 'call.dial', resourceType: 'call', resourceId: callSid, changedFields: Object.keys(input) });
    });
    try {
      await this.place(ctx.orgId, { callSid, agentId: agent.id, toNumber: input.to_number, fromNumber: number.phoneNumber, fromPhoneNumberId: number.id });
    } catch (err) {
      if (!(err instanceof PlacementError)) throw err;
      // Never connected: ended through the final path, with no charge (a call without cost is waived).
      await calls.endUnconnected(ctx.orgId, callSid, 'failed');
      if (err.kind === 'rejected') throw Errors.conflict('carrier_rejected', `The provider refused the call: ${err.message}`, { cause: err });
      throw Errors.upstream('carrier_unavailable', `The provider did not place the call: ${err.message}`, { cause: err });
    }
    return calls.get(ctx, callSid);
  }

  /** Places a created call (`queued`) with its number's provider; throws PlacementError when it is not placed. */
  async place(orgId: string, call: Placement): Promise<void> {
    const number = await this.#deps.phoneNumbers.requireOutboundNumber(orgId, call.fromPhoneNumberId).catch((err: unknown) => {
      if (err instanceof AppError) throw new PlacementError('rejected', `the number cannot place calls (${err.message})`, { cause: err });
      throw err;
    });
    if (number.provider === 'carrier_a') return this.#placeWithCarrier(orgId, call, number.integrationId);
    try {
      await this.#deps.sip.dialOut(orgId, {
        trunkId: number.sipOutboundTrunkId ?? '', toNumber: call.toNumber, fromNumber: call.fromNumber,
        roomName: `${number.inboundRoomName || PREFIX_DEFAULT_ROOM}${call.callSid}`, callSid: call.callSid, agentId: call.agentId,
      });
    } catch (err) {
      if (err instanceof SipProviderError) throw new PlacementError(err.kind, err.message, { cause: err });
      throw err;
    }
  }

  async #placeWithCarrier(orgId: string, call: Placement, integrationId: string | null): Promise<void> {
    const lookups = new TelephonyRepository(this.#deps.db);
    const integration = integrationId ? await lookups.integration(orgId, integrationId) : undefined;
    if (!integration) throw new PlacementError('rejected', 'the number has no carrier integration');
    const query = placedCallQuery(orgId, call.callSid);
    try {
      const placed = await this.#deps.carrier.createCall(this.#deps.integrations.credentialsOf(integration), {
        to: call.toNumber, from: call.fromNumber, url: this.#deps.urls.voice + query, statusCallback: this.#deps.urls.status + query,
      });
      await lookups.setProviderCallSid(orgId, call.callSid, placed.sid);
    } catch (err) {
      if (err instanceof CarrierError) throw new PlacementError(err.kind, err.message, { cause: err });
      throw err;
    }
  }
}
