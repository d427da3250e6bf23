/**
 * `carrier_a`: the hosted telephony provider, a Twilio-compatible REST API
 * (`/2010-04-01/Accounts/{AccountSid}.json`, HTTP basic auth with the account SID and auth token).
 */
export interface CarrierCredentials {
  account_sid: string;
  auth_token: string;
}

export type CredentialCheck = { ok: true } | { ok: false; reason: string };

export class CarrierClient {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  constructor(options: { baseUrl: string; timeoutMs: number }) {
    this.#baseUrl = options.baseUrl.replace(/\/$/, '');
    this.#timeoutMs = options.timeoutMs;
  }

  /** The provider's own test: fetch the account with the credentials. Never throws. */
  async checkCredentials(credentials: CarrierCredentials): Promise<CredentialCheck> {
    const url = `${this.#baseUrl}/2010-04-01/Accounts/${encodeURIComponent(credentials.account_sid)}.json`;
    try {
      const res = await fetch(url, {
        headers: { authorization: basicAuth(credentials), accept: 'application/json' },
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return { ok: true };
      if (res.status === 401 || res.status === 403) return { ok: false, reason: 'the provider rejected the credentials' };
      if (res.status === 404) return { ok: false, reason: 'the provider does not know this account' };
      return { ok: false, reason: `the provider answered HTTP ${res.status}` };
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      return { ok: false, reason: timedOut ? `the provider did not answer within ${this.#timeoutMs / 1000} s` : 'the provider could not be reached' };
    }
  }
}

function basicAuth(credentials: CarrierCredentials): string {
  return `Basic ${Buffer.from(`${credentials.account_sid}:${credentials.auth_token}`).toString('base64')}`;
}
