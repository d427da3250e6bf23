import type { Db } from '../../db/database.ts';
import type { Logger } from '../../core/logger.ts';
import { ErrorCodes, Errors, isAppError } from '../../core/errors.ts';
import { newCallSid } from '../../core/ids.ts';
import type { AgentService } from '../agents/service.ts';
import type { CallStatus } from '../../core/call-enums.ts';
import { isFinal, statusStage, type CallService } from '../calls/service.ts';
import type { IntegrationService } from '../integrations/service.ts';
import { TelephonyRepository, type TelephonyCall, type TelephonyNumber } from './repository.ts';
import { verifyCarrierSignature } from './signature.ts';
import type { CallTokens } from '../../core/auth/call-tokens.ts';
import type { CarrierClient } from '../../adapters/carrier/carrier-client.ts';
import { connectStream, dialSip, escapeXml, reject } from './twiml.ts';
import { transaction } from '../../db/unit-of-work.ts';

/** A request of the carrier to one of its webhooks. */
export interface CarrierRequest {
  /** The request's query string with its `?` ('' without one): the carrier signed it with the URL. */
  query: string;
  /** The form parameters, every one of which the signature covers. */
  params: Record<string, string>;
  signature: string | undefined;
}

/**
 * Where the carrier's calls are connected to the voice runtime: RUNTIME_STREAM_URL / RUNTIME_SIP_URI,
 * else the built-in runtime's stream unless RUNTIME=off (extensions.md §10).
 */
export interface RuntimeTargets {
  streamUrl: string | undefined;
  sipUri: string | undefined;
  mode: 'in-process' | 'off';
  builtInStreamUrl: string;
}

/** The carrier's call statuses (Twilio's words) as the platform's. */
const STATUSES: Record<string, CallStatus> = {
  initiated: 'queued', queued: 'queued', ringing: 'ringing', 'in-progress': 'in_progress', answered: 'in_progress',
  completed: 'completed', busy: 'busy', 'no-answer': 'no_answer', failed: 'failed', canceled: 'canceled',
};

/**
 * Calls the platform places carry their organization and sid in the URLs given to the carrier
 * (`?org=...&call_sid=...`), signed by the carrier with the rest of the URL, so their webhooks find
 * the call even before the carrier's own sid is stored.
 */
export function placedCallQuery(orgId: string, callSid: string): string {
  return `?${new URLSearchParams({ org: orgId, call_sid: callSid })}`;
}

function placedCall(query: string): { orgId: string; callSid: string } | undefined {
  const params = new URLSearchParams(query);
  const orgId = params.get('org');
  const callSid = params.get('call_sid');
  return orgId && callSid ? { orgId, callSid } : undefined;
}

export interface TelephonyDeps {
  db: Db;
  calls: CallService;
  agents: AgentService;
  integrations: IntegrationService;
  /** The URLs given to the carrier, exactly as it signs them (CARRIER_A_VOICE_URL, CARRIER_A_STATUS_URL). */
  urls: { voice: string; status: string };
  runtime: RuntimeTargets;
  log: Logger;
  /** Hangs up and transfers the carrier legs of calls the runtime ended. */
  carrier: Pick<CarrierClient, 'updateCall'>;
  /** Issues the token each connected call's runtime acts with. */
  callTokens: Pick<CallTokens, 'issue'>;
}

/** carrier_a's voice and status webhooks (extensions.md §2): a ringing phone to a billed, reported call. */
export class TelephonyService {
  readonly #deps: TelephonyDeps;
  readonly #lookups: TelephonyRepository;
  constructor(deps: TelephonyDeps) {
    this.#deps = deps;
    this.#lookups = new TelephonyRepository(deps.db);
  }

  /** The TwiML answer to a call arriving at the carrier: the caller connected to the voice runtime, or rejected. */
  async answerVoice(req: CarrierRequest): Promise<string> {
    const placed = placedCall(req.query);
    if (placed) return this.#answerPlaced(req, placed);
    const number = await this.#lookups.numberByE164(req.params.To ?? '');
    // An unknown number has no token to check a signature with; rejecting changes nothing.
    if (!number || number.provider !== 'carrier_a') return reject();
    await this.#verify(number, this.#deps.urls.voice, req);
    if (!number.agentId) return reject();
    const providerCallSid = req.params.CallSid || undefined;
    const retried = providerCallSid ? await this.#lookups.callByProviderSid(number.clientId, providerCallSid) : undefined;
    if (retried) return this.#connect(retried);

    const agent = await this.#deps.agents.requireAgent(number.clientId, number.agentId);
    const status = STATUSES[req.params.CallStatus ?? ''];
    const row = {
      callSid: newCallSid(), agentId: agent.id, agentName: agent.agentName, callType: 'inbound',
      status: status === 'queued' ? 'queued' : 'ringing', toNumber: number.phoneNumber, fromNumber: req.params.From || null,
      recordingEnabled: agent.recordingEnabled, providerCallSid: providerCallSid ?? null,
    };
    try {
      const { call, admitted } = await transaction(this.#deps.db, (tx) => this.#deps.calls.openCall(tx, number.clientId, row, 'record_failed'));
      return admitted ? this.#connect(call) : reject();
    } catch (err) {
      // The carrier sent the same call twice at once: the other request made it.
      if (!isAppError(err, ErrorCodes.callExists) || !providerCallSid) throw err;
      const made = await this.#lookups.callByProviderSid(number.clientId, providerCallSid);
      // The sid is another organization's call (sids are unique system-wide): never that call's answer.
      if (!made) return reject();
      return this.#connect(made);
    }
  }

  /**
   * A status callback: the carrier's status and duration applied to the call. Only moves forward:
   * a repeated, late or out-of-order callback changes nothing, and a final one ends the call through
   * the path of every final report (CallService.applyReport), so the call is billed and counted once.
   */
  async applyStatus(req: CarrierRequest): Promise<void> {
    const placed = placedCall(req.query);
    const providerCallSid = req.params.CallSid || undefined;
    const placedCallRow = placed ? await this.#lookups.call(placed.orgId, placed.callSid) : undefined;
    const number = placedCallRow
      ? await this.#lookups.numberOf(placedCallRow.clientId, (placedCallRow.callType === 'outbound' ? placedCallRow.fromNumber : placedCallRow.toNumber) ?? '')
      : (await this.#lookups.numberByE164(req.params.To ?? '')) ?? (await this.#lookups.numberByE164(req.params.From ?? ''));
    if (!number || number.provider !== 'carrier_a') throw Errors.signatureInvalid();
    await this.#verify(number, this.#deps.urls.status, req);
    // The carrier's sid names a call of the organization whose integration signed, never another's.
    const call = placed ? placedCallRow : providerCallSid ? await this.#lookups.callByProviderSid(number.clientId, providerCallSid) : undefined;
    const status = STATUSES[req.params.CallStatus ?? ''];
    if (!call || !status) return; // a call this platform never made (rejected), or a status it does not track
    if (placed && providerCallSid) await this.#lookups.setProviderCallSid(call.clientId, call.callSid, providerCallSid);

    await transaction(this.#deps.db, async (tx) => {
      const current = await new TelephonyRepository(tx).call(call.clientId, call.callSid, { forUpdate: true });
      if (!current || isFinal(current.status) || statusStage(status) <= statusStage(current.status)) return;
      if (!isFinal(status)) {
        await this.#deps.calls.applyReport(tx, call.clientId, call.callSid, { status });
        return;
      }
      const duration = Number(req.params.CallDuration);
      const seconds = Number.isFinite(duration) && duration >= 0 && duration <= 86_400 ? duration : undefined;
      const now = new Date();
      // A call whose answer was never reported started CallDuration seconds before it ended.
      const start = !current.startTime && seconds ? new Date(now.getTime() - seconds * 1000).toISOString() : undefined;
      await this.#deps.calls.applyReport(tx, call.clientId, call.callSid, {
        status, end_time: now.toISOString(), ...(start ? { start_time: start } : {}),
        ...(seconds === undefined ? {} : { duration_seconds: seconds }),
        ...(status === 'failed' ? { end_reason: 'error' as const } : {}),
      });
    });
  }

  /** The carrier calls a number the platform dialled once it answers: the callee is connected to the runtime. */
  async #answerPlaced(req: CarrierRequest, placed: { orgId: string; callSid: string }): Promise<string> {
    const call = await this.#lookups.call(placed.orgId, placed.callSid);
    const number = call?.fromNumber ? await this.#lookups.numberOf(call.clientId, call.fromNumber) : undefined;
    if (!call || !number || number.provider !== 'carrier_a') throw Errors.signatureInvalid();
    await this.#verify(number, this.#deps.urls.voice, req);
    if (req.params.CallSid) await this.#lookups.setProviderCallSid(call.clientId, call.callSid, req.params.CallSid);
    return this.#connect(call);
  }

  /**
   * The TwiML connecting a live call to the voice runtime, with the call's token; an ended call, or
   * no runtime anywhere (RUNTIME=off and no URL), is rejected, the reason kept on the call's `error`.
   */
  async #connect(call: TelephonyCall): Promise<string> {
    if (isFinal(call.status)) return reject();
    const { streamUrl, sipUri, mode, builtInStreamUrl } = this.#deps.runtime;
    if (streamUrl || sipUri || mode === 'in-process') {
      const agent = await this.#deps.agents.requireAgent(call.clientId, call.agentId);
      const { token } = await this.#deps.callTokens.issue({ callSid: call.callSid, orgId: call.clientId, agentId: call.agentId }, agent.maxCallDurationSeconds);
      if (streamUrl || !sipUri) return connectStream(streamUrl ?? builtInStreamUrl, { call_sid: call.callSid, agent_id: call.agentId, token });
      return dialSip(sipUri, { 'X-Call-Sid': call.callSid, 'X-Agent-Id': call.agentId, 'X-Call-Token': token });
    }
    const message = 'No voice runtime: RUNTIME=off and neither RUNTIME_STREAM_URL nor RUNTIME_SIP_URI is set';
    this.#deps.log.warn({ callSid: call.callSid }, `carrier call rejected: ${message}`);
    const error = { provider: 'runtime', code: 'no_runtime', message };
    await transaction(this.#deps.db, (tx) => this.#deps.calls.applyReport(tx, call.clientId, call.callSid, { status: 'failed', end_reason: 'error', error }))
      .catch((err: unknown) => { if (!isAppError(err, ErrorCodes.callFinalized)) throw err; });
    return reject();
  }

  /**
   * After the runtime's final report of a carrier call whose leg is still up: hangs it up through
   * the carrier's REST API, or, ended `transferred`, dials the agent's transfer number into it.
   * A carrier that refuses is logged: the call is already ended and billed.
   */
  async finalReported(orgId: string, call: { callSid: string; agentId: string; callType: string; fromNumber: string | null; toNumber: string; providerCallSid: string | null; endReason: string | null }): Promise<void> {
    if (!call.providerCallSid) return;
    const number = await this.#lookups.numberOf(orgId, (call.callType === 'outbound' ? call.fromNumber : call.toNumber) ?? '');
    const integration = number?.provider === 'carrier_a' && number.integrationId ? await this.#lookups.integration(orgId, number.integrationId) : undefined;
    if (!integration) return;
    const agent = call.endReason === 'transferred' ? await this.#deps.agents.requireAgent(orgId, call.agentId).catch(() => undefined) : undefined;
    const change = agent?.transferNumber
      ? { twiml: `<Response><Dial>${escapeXml(agent.transferNumber)}</Dial></Response>` }
      : { status: 'completed' as const };
    try {
      await this.#deps.carrier.updateCall(this.#deps.integrations.credentialsOf(integration), call.providerCallSid, change);
    } catch (err) {
      this.#deps.log.warn({ err, callSid: call.callSid }, 'the carrier did not take the end of a call the runtime reported');
    }
  }

  /** 403 unless the request is signed with the auth token of the integration the number was imported through. */
  async #verify(number: TelephonyNumber, baseUrl: string, req: CarrierRequest): Promise<void> {
    const integration = number.integrationId ? await this.#lookups.integration(number.clientId, number.integrationId) : undefined;
    if (!integration) throw Errors.signatureInvalid();
    const credentials = this.#deps.integrations.credentialsOf(integration);
    const params = Object.entries(req.params);
    // The URL as the carrier requested it: the configured address with the query of this request.
    const url = baseUrl.split('?')[0] + req.query;
    if (!verifyCarrierSignature(credentials.auth_token, url, params, req.signature)) throw Errors.signatureInvalid();
    if (req.params.AccountSid !== undefined && req.params.AccountSid !== credentials.account_sid) throw Errors.signatureInvalid();
  }
}
