import { randomBytes } from 'node:crypto';

/** Resource id prefixes of `spec/decisions.md` (`caj`: a bulk analysis job, `car`: one analysis run); each is followed by 12 lowercase hex characters. */
export type IdPrefix = 'org' | 'user' | 'agent' | 'tool' | 'intg' | 'phon' | 'apikey' | 'inv' | 'txn' | 'cs' | 'mail' | 'adj' | 'whk' | 'cmp' | 'sess' | 'link' | 'exp' | 'caj' | 'car';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Documents carry 16 hex characters. */
export function newDocumentId(): string {
  return `doc_${randomBytes(8).toString('hex')}`;
}

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 string (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * Events (`evt_`): 20 letters and digits (extensions.md §1). Webhook deliveries (`dlv_`) have 20 too,
 * made where the outbox writes them (platform/outbox.ts).
 */
export function newEventId(): string {
  return `evt_${randomBase62(20)}`;
}

/** Calls: `call_` followed by 20 letters and digits. */
export function newCallSid(): string {
  return `call_${randomBase62(20)}`;
}

