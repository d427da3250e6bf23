import { SipClient, TwirpError, type CreateSipInboundTrunkOptions } from 'livekit-server-sdk';
import { SipProviderError, type SipDialOut, type DispatchRuleSpec, type InboundTrunkSpec, type MediaEncryption, type OutboundTrunkSpec, type SipTrunks } from './sip-trunks.ts';

// SIPMediaEncryption of LiveKit's protocol (not re-exported by the SDK).
const MEDIA_ENCRYPTION: Record<MediaEncryption, number> = { disable: 0, allow: 1, require: 2 };
type LiveKitMediaEncryption = NonNullable<CreateSipInboundTrunkOptions['mediaEncryption']>;
const SIP_TRANSPORT_AUTO = 0 as never;

/**
 * SIP trunks and dispatch rules in a LiveKit server, through the SDK's SipClient (Twirp).
 * The organization is recorded in each resource's metadata.
 */
export class LiveKitSipTrunks implements SipTrunks {
  readonly #client: SipClient;
  constructor(options: { url: string; apiKey: string; apiSecret: string; timeoutSeconds: number }) {
    // No region failover: a self-hosted server has one address, and a stand-in must see each call once.
    this.#client = new SipClient(options.url, options.apiKey, options.apiSecret, { requestTimeout: options.timeoutSeconds, failover: false });
  }

  createInboundTrunk(orgId: string, spec: InboundTrunkSpec): Promise<string> {
    return attempt('create the inbound trunk', async () => {
      const trunk = await this.#client.createSipInboundTrunk(spec.name, [spec.phoneNumber], {
        metadata: JSON.stringify({ client_id: orgId }),
        authUsername: spec.authUsername,
        authPassword: spec.authPassword,
        mediaEncryption: MEDIA_ENCRYPTION[spec.mediaEncryption] as LiveKitMediaEncryption,
      });
      return trunk.sipTrunkId;
    });
  }

  createOutboundTrunk(orgId: string, spec: OutboundTrunkSpec): Promise<string> {
    return attempt('create the outbound trunk', async () => {
      const trunk = await this.#client.createSipOutboundTrunk(spec.name, spec.address, [spec.phoneNumber], {
        metadata: JSON.stringify({ client_id: orgId }),
        transport: SIP_TRANSPORT_AUTO,
        authUsername: spec.authUsername,
        authPassword: spec.authPassword,
        mediaEncryption: MEDIA_ENCRYPTION[spec.mediaEncryption] as LiveKitMediaEncryption,
      });
      return trunk.sipTrunkId;
    });
  }

  createDispatchRule(orgId: string, spec: DispatchRuleSpec): Promise<string> {
    return attempt('create the dispatch rule', async () => {
      const rule = await this.#client.createSipDispatchRule(
        { type: 'individual', roomPrefix: spec.roomPrefix, pin: spec.pin },
        { name: spec.name, trunkIds: spec.trunkIds, metadata: JSON.stringify({ client_id: orgId }) },
      );
      return rule.sipDispatchRuleId;
    });
  }

  /** CreateSIPParticipant on the outbound trunk: LiveKit dials the callee into the call's room. */
  dialOut(_orgId: string, call: SipDialOut): Promise<'placed'> {
    return attempt('place the call', async () => {
      await this.#client.createSipParticipant(call.trunkId, call.toNumber, call.roomName, {
        fromNumber: call.fromNumber,
        participantIdentity: call.callSid,
        participantAttributes: { call_sid: call.callSid, agent_id: call.agentId },
      });
      return 'placed' as const;
    });
  }

  deleteTrunk(_orgId: string, trunkId: string): Promise<void> {
    return attempt('delete a trunk', () => ignoreNotFound(this.#client.deleteSipTrunk(trunkId)));
  }

  deleteDispatchRule(_orgId: string, ruleId: string): Promise<void> {
    return attempt('delete a dispatch rule', () => ignoreNotFound(this.#client.deleteSipDispatchRule(ruleId)));
  }
}

async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (err instanceof TwirpError && (err.code === 'not_found' || err.status === 404)) return;
    throw err;
  }
}

async function attempt<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const reason = err instanceof TwirpError ? `${err.status} ${err.code ?? ''} ${err.message}`.replace(/\s+/g, ' ').trim() : (err as Error).message;
    // A 4xx is LiveKit refusing the request itself (a bad number, an unknown trunk); anything else it may answer later.
    const rejected = err instanceof TwirpError && err.status >= 400 && err.status < 500;
    throw new SipProviderError(`LiveKit could not ${what}: ${reason}`, rejected ? 'rejected' : 'unavailable');
  }
}
