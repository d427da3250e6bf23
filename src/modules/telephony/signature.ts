import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * carrier_a's request signature (Twilio's documented `X-Twilio-Signature`): HMAC-SHA1, keyed with
 * the account's auth token, of the full URL the carrier requested followed by every POST parameter
 * as name then value, the parameters sorted by name; base64.
 */
export function carrierSignature(authToken: string, url: string, params: Array<[string, string]>): string {
  const sorted = [...params].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const data = url + sorted.map(([name, value]) => name + value).join('');
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Whether `signature` is the carrier's for this request (compared in constant time). */
export function verifyCarrierSignature(authToken: string, url: string, params: Array<[string, string]>, signature: string | undefined): boolean {
  if (!signature) return false;
  const expected = Buffer.from(carrierSignature(authToken, url, params));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
