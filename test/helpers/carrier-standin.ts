import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for `carrier_a` (Twilio-compatible REST API) on 127.0.0.1. Knows one account; an
 * account SID starting with "AChang" never gets an answer (a provider that hangs).
 */
export interface CarrierStandIn {
  url: string;
  account: { sid: string; token: string };
  requests: Array<{ method: string; url: string; authorization?: string }>;
  close(): Promise<void>;
}

export async function startCarrierStandIn(): Promise<CarrierStandIn> {
  const account = { sid: `AC${'0123456789abcdef'.repeat(2)}`, token: 'tok_secret_123' };
  const requests: CarrierStandIn['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\.json$/.exec(req.url!.split('?')[0]!);
    if (!match) { res.writeHead(404, { 'content-type': 'application/json' }); return res.end('{"code":20404}'); }
    if (match[1]!.startsWith('AChang')) return; // never answers
    const expected = `Basic ${Buffer.from(`${account.sid}:${account.token}`).toString('base64')}`;
    if (match[1] !== account.sid || req.headers.authorization !== expected) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end('{"code":20003,"message":"Authenticate"}');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ sid: account.sid, status: 'active', friendly_name: 'Stand-in account' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    account,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
