import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { addressInNetworks, parseIpAddress, type AllowedNetworks, type IpAddress } from '../../core/networks.ts';

export { isInNetworks, parseNetworks, type AllowedNetworks, type IpAddress } from '../../core/networks.ts';

/**
 * Which addresses outbound requests to user-chosen URLs (tool tests, webhook deliveries) may
 * reach: global unicast only, unless the operator's allow-list covers the address.
 *
 * IPv4: ipaddr.js's `unicast`, i.e. outside every block of the IANA IPv4 special-purpose
 * registry, multicast and broadcast. IPv6: inside 2000::/3 (the only block IANA allocates as
 * global unicast) and `unicast` for ipaddr.js, which refuses IPv4-compatible (::/96) and
 * IPv4-translated (::ffff:0:0/96) forms, the local-use NAT64 prefix, ULA, link-local,
 * documentation, benchmarking, ORCHID and the rest. Forms that reach an IPv4 host are judged by
 * that host too: IPv4-mapped and the well-known NAT64 prefix by their embedded address, 6to4 by
 * its relay's address, Teredo by both its server and its (obfuscated) client address.
 */
export class DestinationRefusedError extends Error {
  override name = 'DestinationRefusedError';
}

const GLOBAL_UNICAST_V6: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];
const WELL_KNOWN_NAT64: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96];

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

export function isGlobalUnicast(address: IpAddress): boolean {
  if (address instanceof ipaddr.IPv4) return address.range() === 'unicast';
  const parts = address.parts;
  if (address.isIPv4MappedAddress()) return isGlobalUnicast(address.toIPv4Address());
  if (address.match(WELL_KNOWN_NAT64)) return isGlobalUnicast(ipv4Of(parts[6]!, parts[7]!));
  switch (address.range()) {
    case '6to4':
      return isGlobalUnicast(ipv4Of(parts[1]!, parts[2]!));
    case 'teredo':
      return isGlobalUnicast(ipv4Of(parts[2]!, parts[3]!)) && isGlobalUnicast(ipv4Of(~parts[6]! & 0xffff, ~parts[7]! & 0xffff));
    case 'unicast':
      return address.match(GLOBAL_UNICAST_V6);
    default:
      return false;
  }
}

/** Whether a connection to this address (text, as DNS or a URL gives it) is permitted. */
export function isPermittedAddress(text: string, allowed: AllowedNetworks): boolean {
  const address = parseIpAddress(text);
  return address !== null && (addressInNetworks(address, allowed) || isGlobalUnicast(address));
}

/**
 * The outbound address rule for a URL as it is saved (a tool's webhook, a webhook endpoint): its
 * host, an address or every address its name resolves to now, must be permitted. Returns those
 * addresses. A name that resolves to nothing now is refused with `unresolvable: 'refuse'`, else
 * accepted with no addresses (every request re-checks the addresses it connects to).
 */
export async function checkHostAddresses(url: URL, allowed: AllowedNetworks, unresolvable: 'refuse' | 'accept'): Promise<string[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
  } catch {
    if (unresolvable === 'accept') return [];
    throw new DestinationRefusedError(`${host} does not resolve`);
  }
  if (addresses.length === 0 || addresses.some((a) => !isPermittedAddress(a, allowed))) {
    throw new DestinationRefusedError(`${host} resolves to a non-public address`);
  }
  return addresses;
}

type Resolver = (hostname: string, options: dns.LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

/**
 * A `lookup` for `http.request` / `net.connect`: the connection itself resolves through it, so
 * the addresses checked are the ones connected to (a rebinding DNS answer is checked too). One
 * non-permitted address refuses the name.
 */
export function guardedLookup(allowed: AllowedNetworks, resolve: Resolver = dns.lookup): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const refused = addresses.length === 0 || addresses.some((a) => !isPermittedAddress(a.address, allowed));
      if (refused) return callback(new DestinationRefusedError(`${hostname} resolves to a non-public address`), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, list: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
