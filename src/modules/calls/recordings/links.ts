import { createHmac, timingSafeEqual } from 'node:crypto';
import { Errors } from '../../../core/errors.ts';

export interface SignedRecording {
  orgId: string;
  callSid: string;
  /** Unix seconds, as the decimal text the signer wrote: the link is valid only in that exact form. */
  expires: string;
}

/** The one form `sign` writes; any other spelling of the same number (`017…`, `1.7e9`) is refused. */
const CANONICAL_EXPIRES = /^[1-9]\d{0,12}$/;

/**
 * HMAC-signed links to a recording on the local store: whoever holds the link may read that one
 * recording until it expires, without credentials (an `<audio>` element sends none). The
 * organization, the call and the expiry are all signed, so changing any of them breaks the link.
 */
export class RecordingLinks {
  readonly #key: Buffer;
  /** `purpose` names what the links open (exports sign their files with a key of their own). */
  constructor(secret: Buffer, purpose = 'switchboard/recording-links/v1') {
    // A key of its own, derived from the platform's secret, so a link signature is useless elsewhere.
    this.#key = createHmac('sha256', secret).update(purpose).digest();
  }

  #signature(link: SignedRecording): string {
    return createHmac('sha256', this.#key).update(`${link.orgId}\n${link.callSid}\n${link.expires}`).digest('base64url');
  }

  sign(orgId: string, callSid: string, lifetimeSeconds: number, now = Date.now()): SignedRecording & { sig: string } {
    const link = { orgId, callSid, expires: String(Math.floor(now / 1000) + lifetimeSeconds) };
    return { ...link, sig: this.#signature(link) };
  }

  /** Throws 403 for a tampered or expired link. */
  verify(link: SignedRecording, sig: string, now = Date.now()): void {
    if (!CANONICAL_EXPIRES.test(link.expires)) throw Errors.linkInvalid();
    const expected = Buffer.from(this.#signature(link));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw Errors.linkInvalid();
    }
    if (Number(link.expires) * 1000 <= now) throw Errors.linkExpired();
  }

  url(baseUrl: string, link: SignedRecording & { sig: string }): string {
    const query = new URLSearchParams({ org: link.orgId, expires: link.expires, sig: link.sig });
    return `${baseUrl.replace(/\/$/, '')}/api/recordings/${encodeURIComponent(link.callSid)}?${query}`;
  }
}
