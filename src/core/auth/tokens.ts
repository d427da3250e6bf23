import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, errors as joseErrors, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import type { JwtConfig } from '../../config.ts';
import { Errors } from '../errors.ts';
import { readOrCreateSecretFile } from '../secret-file.ts';

export interface VerifiedIdentity {
  subject: string;
  email: string | null;
}

/** How far a token's `iat` may lie ahead of our clock (the issuer's clock may run a little fast). */
const CLOCK_SKEW_SECONDS = 30;

// Asymmetric algorithms only for a JWKS: an HMAC "key" made from a public key must never verify.
const JWKS_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * The issuer of the console's access tokens (an e-mail link redeemed, src/modules/sessions). They are
 * HS256 with the embedded secret even when a JWKS is configured: only this server holds that secret.
 */
export const SESSION_ISSUER = 'switchboard-sign-in';

/**
 * Verifies bearer tokens: against the identity provider's JWKS when configured, otherwise with the
 * embedded development issuer's HS256 secret. `alg: none` and every other algorithm are refused.
 * A token must expire (`exp`), must not be issued in the future, and may live at most
 * `maxTtlSeconds`: a leaked token without an end, or one minted for years, is useless.
 */
export class TokenVerifier {
  readonly #config: JwtConfig;
  readonly #key: Uint8Array | JWTVerifyGetKey;
  readonly #algorithms: string[];
  readonly #sessionKey: Uint8Array | undefined;

  /** `sessionSecret`: the embedded secret the console's session tokens are signed with. */
  constructor(config: JwtConfig, secret: string | undefined, sessionSecret?: string) {
    this.#config = config;
    this.#sessionKey = sessionSecret ? new TextEncoder().encode(sessionSecret) : undefined;
    if (config.jwksUrl) {
      this.#key = createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 5000 });
      this.#algorithms = JWKS_ALGORITHMS;
    } else {
      if (!secret) throw new Error('An HS256 secret is required when no JWKS URL is configured');
      this.#key = new TextEncoder().encode(secret);
      this.#algorithms = ['HS256'];
    }
  }

  async verify(token: string): Promise<VerifiedIdentity> {
    let payload;
    try {
      if (this.#sessionKey && claimedIssuer(token) === SESSION_ISSUER) {
        const options = { issuer: SESSION_ISSUER, audience: this.#config.audience, algorithms: ['HS256'], requiredClaims: ['exp', 'sid'] };
        payload = (await jwtVerify(token, this.#sessionKey, options)).payload;
      } else {
        const options = { issuer: this.#config.issuer, audience: this.#config.audience, algorithms: this.#algorithms, requiredClaims: ['exp'] };
        // Two calls rather than a union argument: jose overloads on the key's type.
        payload =
          this.#key instanceof Uint8Array
            ? (await jwtVerify(token, this.#key, options)).payload
            : (await jwtVerify(token, this.#key, options)).payload;
      }
    } catch (err) {
      throw Errors.invalidToken(describe(err));
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw Errors.invalidToken('missing sub claim');
    const now = Math.floor(Date.now() / 1000);
    if (payload.iat !== undefined && payload.iat > now + CLOCK_SKEW_SECONDS) throw Errors.invalidToken('claim iat rejected: issued in the future');
    if (payload.exp! - (payload.iat ?? now) > this.#config.maxTtlSeconds) {
      throw Errors.invalidToken(`token lifetime above the maximum of ${this.#config.maxTtlSeconds} s`);
    }
    const email = typeof payload.email === 'string' && payload.email !== '' ? payload.email.toLowerCase() : null;
    return { subject: payload.sub, email };
  }
}

/** The `iss` a token claims, before any verification: it only chooses the key to verify with. */
function claimedIssuer(token: string): unknown {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

function describe(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'token expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) return err.reason === 'missing' ? `missing ${err.claim} claim` : `claim ${err.claim} rejected`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no matching key';
  if (err instanceof joseErrors.JWKSTimeout) return 'identity provider keys unavailable';
  return 'malformed token';
}

/** The embedded issuer's secret: from config, else generated once into the data directory. */
export function resolveJwtSecret(config: JwtConfig, dataDir: string): string | undefined {
  if (config.jwksUrl) return undefined;
  return config.secret ?? readOrCreateSecretFile(dataDir, 'jwt-secret', () => randomBytes(32).toString('base64url'));
}

/**
 * The embedded secret console sessions are signed with: JWT_SECRET, else the data directory's,
 * whether or not a production identity provider (JWKS) signs the other tokens.
 */
export function resolveSessionSecret(config: JwtConfig, dataDir: string): string {
  return config.secret ?? readOrCreateSecretFile(dataDir, 'jwt-secret', () => randomBytes(32).toString('base64url'));
}

/** Signs a console session's short-lived access token (`sid` names the session it came from). */
export async function signSessionToken(
  config: JwtConfig,
  secret: string,
  claims: { subject: string; email: string; sessionId: string; ttlSeconds: number },
): Promise<string> {
  return new SignJWT({ email: claims.email, sid: claims.sessionId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.subject)
    .setIssuer(SESSION_ISSUER)
    .setAudience(config.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + claims.ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}

/** Signs a development token with the embedded issuer's secret (the CLI's `auth:token`). */
export async function signDevelopmentToken(
  config: JwtConfig,
  secret: string,
  claims: { subject: string; email: string; ttlSeconds: number },
): Promise<string> {
  return new SignJWT({ email: claims.email })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.subject)
    .setIssuer(config.issuer)
    .setAudience(config.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + claims.ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
