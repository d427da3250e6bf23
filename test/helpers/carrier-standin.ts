import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for `carrier_a` (Twilio-compatible REST API) on 127.0.0.1: the account call, the
 * account's numbers (`IncomingPhoneNumbers.json?PhoneNumber=`) and their update (`VoiceUrl`).
 * Knows one account; an account SID starting with "AChang" never gets an answer (a provider that hangs).
 */
export interface CarrierStandIn {
  url: string;
  account: { sid: string; token: string };
  /** Numbers of the account by E.164, with the voice URL last set on each. */
  numbers: Map<string, { sid: string; voiceUrl?: string; voiceMethod?: string; statusCallback?: string }>;
  addNumber(phoneNumber: string): string;
  requests: Array<{ method: string; url: string; authorization?: string }>;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startCarrierStandIn(): Promise<CarrierStandIn> {
  const account = { sid: `AC${'0123456789abcdef'.repeat(2)}`, token: 'tok_secret_123' };
  const requests: CarrierStandIn['requests'] = [];
  const numbers: CarrierStandIn['numbers'] = new Map();
  let nextSid = 1;
  const server = http.createServer(async (req, res) => {
    requests.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url!, 'http://stand-in');
    const match = /^\/2010-04-01\/Accounts\/([^/]+?)(\.json|\/IncomingPhoneNumbers\.json|\/IncomingPhoneNumbers\/([^/]+)\.json)$/.exec(url.pathname);
    if (!match) return send(res, 404, { code: 20404, message: 'The requested resource was not found' });
    if (match[1]!.startsWith('AChang')) return; // never answers
    const expected = `Basic ${Buffer.from(`${account.sid}:${account.token}`).toString('base64')}`;
    if (match[1] !== account.sid || req.headers.authorization !== expected) return send(res, 401, { code: 20003, message: 'Authenticate' });

    if (match[2] === '.json') return send(res, 200, { sid: account.sid, status: 'active', friendly_name: 'Stand-in account' });
    if (match[2] === '/IncomingPhoneNumbers.json' && req.method === 'GET') {
      const wanted = url.searchParams.get('PhoneNumber');
      const list = [...numbers].filter(([n]) => !wanted || n === wanted).map(([n, v]) => ({ sid: v.sid, phone_number: n, voice_url: v.voiceUrl ?? null }));
      return send(res, 200, { incoming_phone_numbers: list, page: 0, page_size: 50 });
    }
    const entry = [...numbers].find(([, v]) => v.sid === match[3]);
    if (req.method !== 'POST' || !entry) return send(res, 404, { code: 20404, message: 'The requested resource was not found' });
    const form = new URLSearchParams(body);
    entry[1].voiceUrl = form.get('VoiceUrl') ?? entry[1].voiceUrl;
    entry[1].voiceMethod = form.get('VoiceMethod') ?? entry[1].voiceMethod;
    if (form.get('StatusCallback')) entry[1].statusCallback = form.get('StatusCallback')!;
    send(res, 200, { sid: entry[1].sid, phone_number: entry[0], voice_url: entry[1].voiceUrl, voice_method: entry[1].voiceMethod });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    account,
    numbers,
    addNumber(phoneNumber) {
      const sid = `PN${String(nextSid++).padStart(32, '0')}`;
      numbers.set(phoneNumber, { sid });
      return sid;
    },
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
