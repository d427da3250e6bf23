import type { CallGrant } from './auth/call-tokens.ts';
import type { Role } from './permissions.ts';

/** Who is calling: an API key (acting for the user who created it) or a signed-in user. */
export type Actor =
  | { type: 'api_key'; keyId: string; userId: string; name: string }
  | { type: 'user'; userId: string; email: string | null }
  /** A voice runtime acting with a call token: for its one call only (extensions.md §10). */
  | { type: 'runtime'; callSid: string; agentId: string; /** `call:<call_sid>`: the credential's identity for rate limits and idempotency. */ userId: string; email: null };

/** What every service call receives: the organization, the actor, its role there, the request id. */
export interface RequestContext {
  orgId: string;
  actor: Actor;
  role: Role;
  requestId: string;
  /** The client's address and user agent, as the audit log records them. */
  ip?: string;
  userAgent?: string;
  /**
   * For an API key: what it is narrowed to (empty lists: its whole role, any address). Absent for a
   * signed-in user. What the key hands on stays within it (core/auth/ceiling.ts).
   */
  narrowing?: KeyNarrowing;
  /** Set for a call token: the one call (and its agent) the request may touch. */
  call?: CallGrant;
}

export interface KeyNarrowing {
  scopes: readonly string[];
  allowedIps: readonly string[];
}

/** A caller identified but not bound to an organization (e.g. `GET /api/auth/me`). */
export interface Principal {
  actor: Actor;
  /** For API keys: the key's organization and role, and what it is narrowed to (empty lists: nothing). */
  apiKey?: { orgId: string; role: Role; scopes: string[]; allowedIps: string[] };
  /** A call token's grant. */
  call?: CallGrant;
  requestId: string;
  ip?: string;
  userAgent?: string;
}
