import dns from 'node:dns/promises';
import { isPermittedAddress, type AllowedNetworks } from './outbound-addresses.ts';

/**
 * Checks, when a URL is stored, that the outbound address rule lets requests reach it: an address
 * literal is checked as written, a name by what it resolves to now. A name that does not resolve
 * yet is let through (the rule is applied again on every request, at connection time); the answer
 * is the reason when refused, null when permitted.
 */
export async function outboundRefusal(target: string, allowed: AllowedNetworks): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isPermittedAddress(host, allowed)) return null;
  if (/^[0-9.]+$/.test(host) || host.includes(':')) return `${host} is not a public address`;
  const addresses = await dns.lookup(host, { all: true }).catch(() => []);
  const refused = addresses.find((a) => !isPermittedAddress(a.address, allowed));
  return refused ? `${host} resolves to a non-public address (${refused.address})` : null;
}
