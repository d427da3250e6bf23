import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { BlockList } from 'node:net';

/**
 * Outbound HTTP to addresses users choose (tool webhooks), refusing private, loopback,
 * link-local, metadata and other non-public destinations. The check runs where the socket
 * connects: in the DNS lookup Node uses for the connection (so a name cannot resolve to one
 * address when checked and another when used) and on IP literals, and again on every redirect.
 */
const FORBIDDEN = new BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) FORBIDDEN.addSubnet(net4, prefix, 'ipv4');
for (const [net6, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64], ['2001::', 23],
] as const) FORBIDDEN.addSubnet(net6, prefix, 'ipv6');

export class DestinationRefusedError extends Error {
  override name = 'DestinationRefusedError';
}

/** Networks an operator allows despite the rules above, e.g. "127.0.0.1/32,10.1.0.0/16". */
export function parseAllowList(spec: string | undefined): BlockList {
  const list = new BlockList();
  for (const entry of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const [address, bits] = entry.split('/');
    const family = net.isIPv6(address!) ? 'ipv6' : 'ipv4';
    if (!net.isIP(address!)) throw new Error(`Not an IP network: ${entry}`);
    list.addSubnet(address!, bits === undefined ? (family === 'ipv4' ? 32 : 128) : Number(bits), family);
  }
  return list;
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 IPv6 address. */
function embeddedIpv4(address: string): string | null {
  const match = /^(?:::ffff:|::|64:ff9b::)(?:0:)?([0-9.]+)$/i.exec(address);
  if (match && net.isIPv4(match[1]!)) return match[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

export function isForbiddenAddress(address: string, allow: BlockList): boolean {
  const family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
  if (allow.check(address, family)) return false;
  if (family === 'ipv6') {
    const v4 = embeddedIpv4(address);
    if (v4) return isForbiddenAddress(v4, allow);
  }
  return FORBIDDEN.check(address, family);
}

function guardedLookup(allow: BlockList): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const bad = list.find((a) => isForbiddenAddress(a.address, allow));
      if (bad || list.length === 0) {
        return callback(new DestinationRefusedError(`${hostname} resolves to a non-public address`), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as any)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  url: string;
}

export interface SafeRequestOptions {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBodyBytes: number;
  maxRedirects?: number;
  allow: BlockList;
}

function once(url: URL, options: SafeRequestOptions, deadline: number): Promise<SafeResponse> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && isForbiddenAddress(host, options.allow)) {
    return Promise.reject(new DestinationRefusedError(`${host} is not a public address`));
  }
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, {
      method: options.method,
      headers: options.headers,
      lookup: guardedLookup(options.allow),
      timeout: Math.max(1, deadline - Date.now()),
      agent: false,
    });
    const timer = setTimeout(() => req.destroy(new Error('timed out')), Math.max(1, deadline - Date.now()));
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => { clearTimeout(timer); reject(err); });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      res.on('data', (chunk: Buffer) => {
        if (size >= options.maxBodyBytes) { truncated = true; res.destroy(); return; }
        const room = options.maxBodyBytes - size;
        if (chunk.length > room) truncated = true;
        chunks.push(chunk.subarray(0, room));
        size += Math.min(chunk.length, room);
        if (truncated) res.destroy();
      });
      const finish = () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated, url: url.toString() });
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', (err) => { clearTimeout(timer); if (!truncated) reject(err); else finish(); });
    });
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** One request, following up to `maxRedirects` redirects, each destination checked again. */
export async function safeRequest(target: string, options: SafeRequestOptions): Promise<SafeResponse> {
  const deadline = Date.now() + options.timeoutMs;
  let url = new URL(target);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DestinationRefusedError('only http and https are allowed');
    const res = await once(url, options, deadline);
    const location = res.headers.location;
    if (res.status >= 300 && res.status < 400 && location && hop < (options.maxRedirects ?? 3)) {
      url = new URL(location, url);
      if (res.status === 303) options = { ...options, method: 'GET', body: undefined };
      continue;
    }
    return res;
  }
}
