import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { sipResources } from '../../db/schema/index.ts';
import { randomBase62 } from '../../core/ids.ts';

export type MediaEncryption = 'disable' | 'allow' | 'require';

export interface InboundTrunkSpec {
  name: string;
  phoneNumber: string;
  authUsername: string;
  authPassword: string;
  mediaEncryption: MediaEncryption;
}

export interface OutboundTrunkSpec extends InboundTrunkSpec {
  /** The SIP server outbound calls go to. */
  address: string;
}

export interface DispatchRuleSpec {
  name: string;
  trunkIds: string[];
  /** Each inbound call gets its own room named with this prefix. */
  roomPrefix: string;
  pin: string | undefined;
}

/** An outbound call through an outbound trunk, into the room where the voice runtime joins it. */
export interface SipDialOut {
  trunkId: string;
  toNumber: string;
  fromNumber: string;
  roomName: string;
  /** The call's sid: the SIP participant's identity, so the runtime knows which call it joined. */
  callSid: string;
  agentId: string;
}

/**
 * The SIP provider refused (`rejected`: the request itself was wrong, its message says why) or
 * did not answer (`unavailable`).
 */
export class SipProviderError extends Error {
  override name = 'SipProviderError';
  readonly kind: 'rejected' | 'unavailable';
  constructor(message: string, kind: 'rejected' | 'unavailable' = 'unavailable') {
    super(message);
    this.kind = kind;
  }
}

/**
 * Where the SIP trunks and dispatch rules of imported SIP numbers live. Every method takes the
 * organization first; ids look like LiveKit's (`ST_...` trunks, `SDR_...` dispatch rules).
 * Deleting something already gone succeeds, so clean-ups can be repeated.
 */
export interface SipTrunks {
  createInboundTrunk(orgId: string, spec: InboundTrunkSpec): Promise<string>;
  createOutboundTrunk(orgId: string, spec: OutboundTrunkSpec): Promise<string>;
  createDispatchRule(orgId: string, spec: DispatchRuleSpec): Promise<string>;
  deleteTrunk(orgId: string, trunkId: string): Promise<void>;
  deleteDispatchRule(orgId: string, ruleId: string): Promise<void>;
  /**
   * Places an outbound call: `placed` when the provider dialled it, `left_for_runtime` when this
   * backend has no dialler and the voice runtime places the queued call itself.
   */
  dialOut(orgId: string, call: SipDialOut): Promise<'placed' | 'left_for_runtime'>;
}

/**
 * The default backend: trunks and rules recorded in the `sip_resources` table, for a SIP server
 * that reads its configuration from there. Passwords and PINs stay sealed on the phone number row.
 */
export class LocalSipTrunks implements SipTrunks {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  createInboundTrunk(orgId: string, spec: InboundTrunkSpec): Promise<string> {
    return this.#record(orgId, 'ST_', 'inbound_trunk', {
      name: spec.name, numbers: [spec.phoneNumber], auth_username: spec.authUsername, media_encryption: spec.mediaEncryption,
    });
  }

  createOutboundTrunk(orgId: string, spec: OutboundTrunkSpec): Promise<string> {
    return this.#record(orgId, 'ST_', 'outbound_trunk', {
      name: spec.name, address: spec.address, numbers: [spec.phoneNumber], auth_username: spec.authUsername, media_encryption: spec.mediaEncryption,
    });
  }

  createDispatchRule(orgId: string, spec: DispatchRuleSpec): Promise<string> {
    return this.#record(orgId, 'SDR_', 'dispatch_rule', {
      name: spec.name, trunk_ids: spec.trunkIds, rule: { type: 'individual', room_prefix: spec.roomPrefix }, has_pin: spec.pin !== undefined,
    });
  }

  async deleteTrunk(orgId: string, trunkId: string): Promise<void> {
    await this.#db.delete(sipResources).where(and(eq(sipResources.clientId, orgId), eq(sipResources.id, trunkId)));
  }

  async deleteDispatchRule(orgId: string, ruleId: string): Promise<void> {
    await this.deleteTrunk(orgId, ruleId);
  }

  /** No SIP server is driven from here: the runtime reads the queued call and dials it through its own SIP stack. */
  async dialOut(): Promise<'left_for_runtime'> {
    return 'left_for_runtime';
  }

  async #record(orgId: string, prefix: string, kind: string, spec: Record<string, unknown>): Promise<string> {
    const id = `${prefix}${randomBase62(12)}`;
    await this.#db.insert(sipResources).values({ id, clientId: orgId, kind, spec });
    return id;
  }
}
