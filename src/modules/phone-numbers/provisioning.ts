import { Errors } from '../../core/errors.ts';
import { CarrierError, type CarrierClient, type CarrierCredentials } from '../../adapters/carrier/carrier-client.ts';
import { SipProviderError, type MediaEncryption, type SipTrunks } from '../../adapters/sip/sip-trunks.ts';

/**
 * What importing a number does at its provider, made before the number's row is written and
 * undone when a later step fails, so a failure half-way leaves no number and no orphan trunk.
 */

export interface SipNumberInput {
  phoneNumber: string;
  trunkName: string;
  username: string;
  password: string;
  serverAddress: string | undefined;
  roomPrefix: string;
  pin: string | undefined;
  mediaEncryption: MediaEncryption;
}

export interface SipTrunkIds {
  inboundTrunkId: string;
  outboundTrunkId: string | null;
  dispatchRuleId: string;
}

/** Inbound trunk with the number, outbound trunk when a server address is given, and the dispatch rule. */
export async function createSipTrunks(trunks: SipTrunks, orgId: string, input: SipNumberInput): Promise<SipTrunkIds> {
  const undo: Array<() => Promise<void>> = [];
  const auth = { phoneNumber: input.phoneNumber, authUsername: input.username, authPassword: input.password, mediaEncryption: input.mediaEncryption };
  try {
    const inboundTrunkId = await trunks.createInboundTrunk(orgId, { name: input.trunkName, ...auth });
    undo.push(() => trunks.deleteTrunk(orgId, inboundTrunkId));
    let outboundTrunkId: string | null = null;
    if (input.serverAddress) {
      const id = await trunks.createOutboundTrunk(orgId, { name: `${input.trunkName} (outbound)`, address: input.serverAddress, ...auth });
      undo.push(() => trunks.deleteTrunk(orgId, id));
      outboundTrunkId = id;
    }
    const dispatchRuleId = await trunks.createDispatchRule(orgId, {
      name: `${input.trunkName} inbound`, trunkIds: [inboundTrunkId], roomPrefix: input.roomPrefix, pin: input.pin,
    });
    return { inboundTrunkId, outboundTrunkId, dispatchRuleId };
  } catch (err) {
    const leftovers = await runAll(undo.reverse());
    throw sipFailure(err, leftovers);
  }
}

/** Deletes what `createSipTrunks` made; what could not be deleted is named in the error. */
export async function releaseSipTrunks(trunks: SipTrunks, orgId: string, ids: SipTrunkIds): Promise<void> {
  const steps = [
    () => trunks.deleteDispatchRule(orgId, ids.dispatchRuleId),
    () => trunks.deleteTrunk(orgId, ids.inboundTrunkId),
    ...(ids.outboundTrunkId ? [() => trunks.deleteTrunk(orgId, ids.outboundTrunkId!)] : []),
  ];
  const failures = await runAll(steps);
  if (failures.length) throw sipFailure(failures[0], failures);
}

async function runAll(steps: Array<() => Promise<void>>): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      failures.push(err);
    }
  }
  return failures;
}

function sipFailure(err: unknown, leftovers: unknown[]): Error {
  if (!(err instanceof SipProviderError)) return err as Error;
  const note = leftovers.length ? ` (and ${leftovers.length} clean-up step(s) failed: ${leftovers.map((e) => (e as Error).message).join('; ')})` : '';
  return Errors.upstream('sip_provider_error', `${err.message}${note}`, { cause: err });
}

/** Finds the number in the carrier account and points its inbound calls at the platform; returns its carrier SID. */
export async function connectCarrierNumber(
  carrier: CarrierClient,
  credentials: CarrierCredentials,
  phoneNumber: string,
  voiceUrl: string,
  statusUrl?: string,
): Promise<string> {
  try {
    const found = await carrier.findIncomingNumber(credentials, phoneNumber);
    if (!found) {
      throw Errors.validation(`The carrier account has no number ${phoneNumber}`, [{ path: 'body.phone_number', message: 'not in the carrier account' }]);
    }
    await carrier.setVoiceUrl(credentials, found.sid, voiceUrl, statusUrl);
    return found.sid;
  } catch (err) {
    if (!(err instanceof CarrierError)) throw err;
    if (err.kind === 'rejected') throw Errors.conflict('integration_invalid', `The integration's credentials do not work: ${err.message}; validate or update the integration`, { cause: err });
    throw Errors.upstream('carrier_unavailable', `The carrier could not be used: ${err.message}`, { cause: err });
  }
}
