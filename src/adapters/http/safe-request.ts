/*
 * Outbound HTTP to addresses users choose (tool webhooks), refused unless the destination is a
 * global unicast address or the operator allows its network (see outbound-addresses.ts). The check
 * runs where the socket connects: in the DNS lookup Node uses for the connection (so a name cannot
 * resolve to one address when checked and another when used) and on IP literals, and again on
 * every redirect.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { DestinationRefusedError, guardedLookup, isPermittedAddress, type AllowedNetworks } from './outbound-addresses.ts';

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
  /** Networks reachable although not global unicast (config's ALLOWED_NETWORKS). */
  allowedNetworks: AllowedNetworks;
}

function once(url: URL, options: SafeRequestOptions, deadline: number): Promise<SafeResponse> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && !isPermittedAddress(host, options.allowedNetworks)) {
    return Promise.reject(new DestinationRefusedError(`${host} is not a public address`));
  }
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, {
      method: options.method,
      headers: options.headers,
      lookup: guardedLookup(options.allowedNetworks),
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
