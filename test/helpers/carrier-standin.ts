import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { signCarrierRequest } from './telephony.ts';

/**
 * A stand-in for `carrier_a` (Twilio-compatible REST API) on 127.0.0.1: the account call, the
 * account's numbers (`IncomingPhoneNumbers.json?PhoneNumber=`) and their update (`VoiceUrl`).
 * Knows one account; an account SID starting with "AChang" never gets an answer (a provider that hangs).
 * Outbound calls (`Calls.json`) are accepted, refused or left hanging as the test says, and then
 * played as the carrier would: signed form posts to the call's `Url` and `StatusCallback`.
 */
export interface CarrierStandIn {
  url: string;
  account: { sid: string; token: string };
  /** Numbers of the account by E.164, with the voice URL last set on each. */
  numbers: Map<string, { sid: string; voiceUrl?: string; voiceMethod?: string; statusCallback?: string }>;
  addNumber(phoneNumber: string): string;
  requests: Array<{ method: string; url: string; authorization?: string }>;
  /** The calls placed through `Calls.json`, in order, with the form parameters they came with. */
  placed: PlacedCall[];
  /** Changes of live calls (`Calls/{CallSid}.json`): a hang-up (`Status=completed`) or new TwiML (a transfer). */
  callUpdates: Array<{ callSid: string; status: string | null; twiml: string | null }>;
  /** How `Calls.json` answers a call to `to` (default: accept). */
  placement: (to: string) => 'accept' | 'reject' | 'hang';
  /** Played at once after an accepted placement when it returns an outcome (default: the test plays calls itself). */
  autoPlay: (call: PlacedCall) => Outcome | undefined;
  /** Plays a placed call to its end: the status callbacks (and, when answered, the voice request) in the carrier's order. */
  play(sid: string, outcome: Outcome): Promise<void>;
  /** Calls placed and not yet ended as the carrier sees them, now and at most. */
  active: { now: number; max: number };
  close(): Promise<void>;
}

export interface Outcome {
  result: 'answered' | 'busy' | 'no-answer' | 'failed';
  /** Answered calls: how long the call lasts (reported as CallDuration) and is held open before it completes. */
  durationSeconds?: number;
  holdMs?: number;
  /** Answered calls: held open until this settles too (a call talked through by a Media Streams caller). */
  until?: Promise<unknown>;
  /** Only the callbacks that change the outcome (the voice request and the final status), for runs of many calls. */
  brief?: boolean;
}

export interface PlacedCall {
  sid: string;
  to: string;
  from: string;
  url: string;
  statusCallback: string;
  statusCallbackEvents: string[];
  /** The webhooks' answers, in order: `status <code>` per post, the voice answer's body. */
  answers: string[];
  ended: boolean;
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
  const placed: PlacedCall[] = [];
  const active = { now: 0, max: 0 };
  let nextCall = 1;
  // Call sids are unique at the carrier: stand-ins of one test run (or of runs on one database) never repeat one.
  const runId = randomBytes(6).toString('hex');

  const post = async (call: PlacedCall, url: string, params: Record<string, string>) => {
    const full = { CallSid: call.sid, AccountSid: account.sid, From: call.from, To: call.to, Direction: 'outbound-api', ApiVersion: '2010-04-01', ...params };
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signCarrierRequest(account.token, url, full) },
      body: new URLSearchParams(full).toString(),
    });
    const text = await res.text();
    call.answers.push(`status ${res.status}`);
    return text;
  };
  const play = async (sid: string, outcome: Outcome) => {
    const call = placed.find((c) => c.sid === sid);
    if (!call || call.ended) throw new Error(`no live placed call ${sid}`);
    const status = (CallStatus: string, extra: Record<string, string> = {}) => post(call, call.statusCallback, { CallStatus, ...extra });
    // The call has ended at the carrier before it says so: it leaves the active count before the final callback.
    const end = () => {
      if (call.ended) return;
      call.ended = true;
      active.now--;
    };
    try {
      if (!outcome.brief) {
        await status('initiated');
        await status('ringing');
      }
      if (outcome.result !== 'answered') {
        end();
        await status(outcome.result);
        return;
      }
      call.answers.push(await post(call, call.url, { CallStatus: 'in-progress' }));
      if (!outcome.brief) await status('in-progress');
      if (outcome.holdMs) await new Promise((r) => setTimeout(r, outcome.holdMs));
      if (outcome.until) await outcome.until.catch(() => {});
      end();
      await status('completed', { CallDuration: String(outcome.durationSeconds ?? 0) });
    } finally {
      end();
    }
  };
  const placeCall = (res: http.ServerResponse, form: URLSearchParams) => {
    const to = form.get('To') ?? '';
    const answer = standIn.placement(to);
    if (answer === 'hang') return;
    if (answer === 'reject') return send(res, 400, { code: 21211, message: `The 'To' number ${to} is not a valid phone number.`, status: 400 });
    const call: PlacedCall = {
      sid: `CA${runId}${String(nextCall++).padStart(20, '0')}`, to, from: form.get('From') ?? '', url: form.get('Url') ?? '',
      statusCallback: form.get('StatusCallback') ?? '', statusCallbackEvents: form.getAll('StatusCallbackEvent'), answers: [], ended: false,
    };
    placed.push(call);
    active.now++;
    active.max = Math.max(active.max, active.now);
    send(res, 201, { sid: call.sid, status: 'queued', to, from: call.from, direction: 'outbound-api' });
    const outcome = standIn.autoPlay(call);
    if (outcome) setImmediate(() => void play(call.sid, outcome).catch(() => {}));
  };
  const server = http.createServer(async (req, res) => {
    requests.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url!, 'http://stand-in');
    const match = /^\/2010-04-01\/Accounts\/([^/]+?)(\.json|\/Calls\.json|\/IncomingPhoneNumbers\.json|\/IncomingPhoneNumbers\/([^/]+)\.json|\/Calls\/([^/]+)\.json)$/.exec(url.pathname);
    if (!match) return send(res, 404, { code: 20404, message: 'The requested resource was not found' });
    if (match[1]!.startsWith('AChang')) return; // never answers
    const expected = `Basic ${Buffer.from(`${account.sid}:${account.token}`).toString('base64')}`;
    if (match[1] !== account.sid || req.headers.authorization !== expected) return send(res, 401, { code: 20003, message: 'Authenticate' });

    if (match[2] === '/Calls.json' && req.method === 'POST') return placeCall(res, new URLSearchParams(body));
    if (match[4] && req.method === 'POST') {
      const form = new URLSearchParams(body);
      standIn.callUpdates.push({ callSid: decodeURIComponent(match[4]), status: form.get('Status'), twiml: form.get('Twiml') });
      return send(res, 200, { sid: match[4], status: form.get('Status') ?? 'in-progress' });
    }
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
  const standIn: CarrierStandIn = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    account,
    numbers,
    addNumber(phoneNumber) {
      const sid = `PN${String(nextSid++).padStart(32, '0')}`;
      numbers.set(phoneNumber, { sid });
      return sid;
    },
    requests,
    callUpdates: [],
    placed,
    placement: () => 'accept',
    autoPlay: () => undefined,
    play,
    active,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  return standIn;
}
