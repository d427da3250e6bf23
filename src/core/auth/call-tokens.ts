import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { Errors } from '../errors.ts';

/**
 * The call token (extensions.md §10): what the platform hands a voice runtime with each call it
 * connects. Signed with the embedded secret (the one console sessions use, which only this server
 * holds), with an issuer, audience and header type of its own, so a call token is never taken for a
 * user's session and a user's token never for a call token.
 */
export const CALL_TOKEN_ISSUER = 'switchboard-call';
const CALL_TOKEN_AUDIENCE = 'switchboard-runtime';
const CALL_TOKEN_TYPE = 'call+jwt';
/** The token outlives the call's longest duration by this much (the final report comes after the end). */
export const CALL_TOKEN_GRACE_SECONDS = 300;

/** What a verified call token grants: its call alone, of its organization and agent. */
export interface CallGrant {
  callSid: string;
  orgId: string;
  agentId: string;
}

export class CallTokens {
  readonly #key: Uint8Array;
  constructor(secret: string) {
    this.#key = new TextEncoder().encode(secret);
  }

  /** A token for the call, expiring `maxCallDurationSeconds` + 300 s from now. */
  async issue(grant: CallGrant, maxCallDurationSeconds: number): Promise<{ token: string; expiresAt: Date }> {
    const issuedAt = Math.floor(Date.now() / 1000);
    const exp = issuedAt + maxCallDurationSeconds + CALL_TOKEN_GRACE_SECONDS;
    const token = await new SignJWT({ org: grant.orgId, agent_id: grant.agentId, scope: 'runtime' })
      .setProtectedHeader({ alg: 'HS256', typ: CALL_TOKEN_TYPE })
      .setSubject(grant.callSid)
      .setIssuer(CALL_TOKEN_ISSUER)
      .setAudience(CALL_TOKEN_AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(exp)
      .sign(this.#key);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** The grant of a valid call token; 401 for anything else (expired, forged, another kind of token). */
  async verify(token: string): Promise<CallGrant> {
    try {
      const { payload, protectedHeader } = await jwtVerify(token, this.#key, {
        issuer: CALL_TOKEN_ISSUER, audience: CALL_TOKEN_AUDIENCE, algorithms: ['HS256'], typ: CALL_TOKEN_TYPE, requiredClaims: ['exp', 'sub'],
      });
      if (protectedHeader.typ !== CALL_TOKEN_TYPE || payload.scope !== 'runtime') throw Errors.invalidToken('not a call token');
      if (typeof payload.org !== 'string' || typeof payload.agent_id !== 'string') throw Errors.invalidToken('missing call claims');
      return { callSid: payload.sub!, orgId: payload.org, agentId: payload.agent_id };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw Errors.invalidToken('token expired');
      if (err instanceof joseErrors.JOSEError) throw Errors.invalidToken('invalid call token');
      throw err;
    }
  }
}

/** Whether a bearer token claims to be a call token (before verification: it only picks the verifier). */
export function claimsCallToken(token: string): boolean {
  try {
    return decodeJwt(token).iss === CALL_TOKEN_ISSUER || decodeProtectedHeader(token).typ === CALL_TOKEN_TYPE;
  } catch {
    return false;
  }
}
