/**
 * `carrier_a`: the hosted telephony provider, a Twilio-compatible REST API
 * (`/2010-04-01/Accounts/{AccountSid}/...`, HTTP basic auth with the account SID and auth token).
 */
export interface CarrierCredentials {
  account_sid: string;
  auth_token: string;
}

export type CredentialCheck = { ok: true } | { ok: false; reason: string };

/** A number of the carrier account (`IncomingPhoneNumber`). */
export interface CarrierNumber {
  sid: string;
  phoneNumber: string;
}

/** Why a carrier call failed: the credentials, the provider's answer, or no answer at all. */
export class CarrierError extends Error {
  override name = 'CarrierError';
  readonly kind: 'rejected' | 'unavailable';
  constructor(kind: 'rejected' | 'unavailable', message: string) {
    super(message);
    this.kind = kind;
  }
}

/** A call the platform asks the carrier to place (the `Calls.json` parameters). */
export interface OutboundCarrierCall {
  to: string;
  from: string;
  /** Requested by the carrier when the callee answers (the voice webhook). */
  url: string;
  /** Where the carrier posts the call's progress (the status webhook). */
  statusCallback: string;
}

/** The progress events the platform follows: every step from placement to the end. */
const STATUS_CALLBACK_EVENTS = ['initiated', 'ringing', 'answered', 'completed'] as const;

export class CarrierClient {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  constructor(options: { baseUrl: string; timeoutMs: number }) {
    this.#baseUrl = options.baseUrl.replace(/\/$/, '');
    this.#timeoutMs = options.timeoutMs;
  }

  /** The provider's own test: fetch the account with the credentials. Never throws. */
  async checkCredentials(credentials: CarrierCredentials): Promise<CredentialCheck> {
    try {
      await this.#call(credentials, 'GET', '.json');
      return { ok: true };
    } catch (err) {
      const reason = err instanceof CarrierError ? err.message : 'the provider could not be reached';
      return { ok: false, reason };
    }
  }

  /** The account's number equal to `phoneNumber` (E.164), or undefined when the account has none. */
  async findIncomingNumber(credentials: CarrierCredentials, phoneNumber: string): Promise<CarrierNumber | undefined> {
    const body = (await this.#call(credentials, 'GET', `/IncomingPhoneNumbers.json?PhoneNumber=${encodeURIComponent(phoneNumber)}`)) as {
      incoming_phone_numbers?: Array<{ sid?: unknown; phone_number?: unknown }>;
    };
    const match = (body.incoming_phone_numbers ?? []).find((n) => n.phone_number === phoneNumber && typeof n.sid === 'string');
    return match ? { sid: match.sid as string, phoneNumber } : undefined;
  }

  /** Points the number's inbound calls at `voiceUrl` and their progress at `statusUrl` (HTTP POST). */
  async setVoiceUrl(credentials: CarrierCredentials, numberSid: string, voiceUrl: string, statusUrl?: string): Promise<void> {
    const form = new URLSearchParams({ VoiceUrl: voiceUrl, VoiceMethod: 'POST', ...(statusUrl ? { StatusCallback: statusUrl, StatusCallbackMethod: 'POST' } : {}) });
    await this.#call(credentials, 'POST', `/IncomingPhoneNumbers/${encodeURIComponent(numberSid)}.json`, form);
  }

  /**
   * Places an outbound call (`Calls.json`): the carrier requests `url` once the callee answers and
   * posts the call's progress to `statusCallback`. Resolves with the carrier's call sid.
   */
  async createCall(credentials: CarrierCredentials, call: OutboundCarrierCall): Promise<{ sid: string }> {
    const form = new URLSearchParams({ To: call.to, From: call.from, Url: call.url, Method: 'POST', StatusCallback: call.statusCallback, StatusCallbackMethod: 'POST' });
    // Repeated parameter, as the carrier reads it: one status callback per named event.
    for (const event of STATUS_CALLBACK_EVENTS) form.append('StatusCallbackEvent', event);
    const body = (await this.#call(credentials, 'POST', '/Calls.json', form)) as { sid?: unknown };
    if (typeof body.sid !== 'string') throw new CarrierError('unavailable', 'the provider answered without a call sid');
    return { sid: body.sid };
  }

  /**
   * Changes a live call (`Calls/{CallSid}.json`): `Status=completed` hangs it up; `Twiml` replaces
   * what it runs (a transfer: `<Dial>` to another number).
   */
  async updateCall(credentials: CarrierCredentials, callSid: string, change: { status: 'completed' } | { twiml: string }): Promise<void> {
    const form = new URLSearchParams('status' in change ? { Status: change.status } : { Twiml: change.twiml });
    await this.#call(credentials, 'POST', `/Calls/${encodeURIComponent(callSid)}.json`, form);
  }

  async #call(credentials: CarrierCredentials, method: 'GET' | 'POST', resource: string, form?: URLSearchParams): Promise<unknown> {
    const url = `${this.#baseUrl}/2010-04-01/Accounts/${encodeURIComponent(credentials.account_sid)}${resource}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: basicAuth(credentials), accept: 'application/json' },
        body: form,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      throw new CarrierError('unavailable', timedOut ? `the provider did not answer within ${this.#timeoutMs / 1000} s` : 'the provider could not be reached');
    }
    const text = await res.text().catch(() => '');
    if (res.status === 401 || res.status === 403) throw new CarrierError('rejected', 'the provider rejected the credentials');
    if (res.status === 404) throw new CarrierError('rejected', 'the provider does not know this account');
    // Any other 4xx is the provider refusing this request (a bad number, a number it does not own): its message says why.
    if (res.status >= 400 && res.status < 500) throw new CarrierError('rejected', `the provider refused the request: ${providerMessage(text) ?? `HTTP ${res.status}`}`);
    if (!res.ok) throw new CarrierError('unavailable', `the provider answered HTTP ${res.status}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CarrierError('unavailable', 'the provider answered with something other than JSON');
    }
  }
}

/** The `message` of a carrier error body (`{code, message, more_info, status}`), if it has one. */
function providerMessage(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message;
    return typeof message === 'string' && message ? message.slice(0, 300) : undefined;
  } catch {
    return undefined;
  }
}

function basicAuth(credentials: CarrierCredentials): string {
  return `Basic ${Buffer.from(`${credentials.account_sid}:${credentials.auth_token}`).toString('base64')}`;
}
