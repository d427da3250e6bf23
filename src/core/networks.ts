import net from 'node:net';
import ipaddr from 'ipaddr.js';

// IP addresses and networks (CIDR) as the platform reads them: the operator's allow-lists, webhook
// destinations, and the addresses an API key is restricted to.

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;
export type Network = readonly [IpAddress, number];
export type AllowedNetworks = readonly Network[];

/**
 * A strict parse: dotted-quad IPv4 or IPv6, normalized by the WHATWG URL parser first (ipaddr.js
 * reads `::a.b.c.d` as `::ffff:a.b.c.d`, another address), IPv4-mapped IPv6 read as its IPv4.
 */
export function parseIpAddress(text: string): IpAddress | null {
  const family = net.isIP(text);
  if (family === 0) return null;
  let address: IpAddress;
  if (family === 4) {
    address = ipaddr.IPv4.parse(text);
  } else {
    let canonical: string;
    try {
      canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
    } catch {
      return null; // a zone index (fe80::1%eth0): never a global address
    }
    address = ipaddr.IPv6.parse(canonical);
  }
  return address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}

/** "10.0.0.0/8, 127.0.0.1, fd00::/8" → networks (a bare address is a network of itself). Throws on a bad entry. */
export function parseNetworks(spec: string): Network[] {
  return spec.split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    const [text, bits, extra] = entry.split('/');
    const address = parseIpAddress(text!);
    const width = address instanceof ipaddr.IPv4 ? 32 : 128;
    const prefix = bits === undefined ? width : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!address || extra !== undefined || !(prefix >= 0 && prefix <= width)) throw new Error(`not an IP network: "${entry}"`);
    return [address, prefix] as const;
  });
}

export function addressInNetworks(address: IpAddress, allowed: AllowedNetworks): boolean {
  return allowed.some(([network, prefix]) => address instanceof ipaddr.IPv4
    ? network instanceof ipaddr.IPv4 && address.match(network, prefix)
    : network instanceof ipaddr.IPv6 && address.match(network, prefix));
}

/** Whether this address (text) is in one of these networks. */
export function isInNetworks(text: string, allowed: AllowedNetworks): boolean {
  const address = parseIpAddress(text);
  return address !== null && addressInNetworks(address, allowed);
}
