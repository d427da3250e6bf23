import type { Principal, RequestContext } from '../context.ts';
import { Errors } from '../errors.ts';
import { isRole } from '../permissions.ts';
import { API_KEY_PATTERN, hashApiKey } from './api-key-secret.ts';
import type { ApiKeyLookup, UserDirectory } from './ports.ts';
import type { TokenVerifier } from './tokens.ts';
import { claimsCallToken, type CallTokens } from './call-tokens.ts';

const LAST_USED_RESOLUTION_MS = 60_000;

export interface CredentialHeaders {
  apiKey: string | undefined;
  authorization: string | undefined;
}

/**
 * Turns request credentials into a principal, and a principal plus `X-Organization-Id` into a
 * request context. Keys are looked up on every request (no cache), so a revoked or expired key is
 * refused on the very next request.
 */
export class Authenticator {
  readonly #keys: ApiKeyLookup;
  readonly #users: UserDirectory;
  readonly #tokens: TokenVerifier;
  readonly #calls: CallTokens | undefined;
  /** Per-process memory of the last `last_used_at` write per key, so a burst writes once. */
  readonly #lastTouched = new Map<string, number>();

  constructor(deps: { keys: ApiKeyLookup; users: UserDirectory; tokens: TokenVerifier; calls?: CallTokens }) {
    this.#keys = deps.keys;
    this.#calls = deps.calls;
    this.#users = deps.users;
    this.#tokens = deps.tokens;
  }

  async principal(headers: CredentialHeaders, requestId: string): Promise<Principal> {
    if (headers.apiKey !== undefined) return this.#fromApiKey(headers.apiKey, requestId);
    if (headers.authorization !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization);
      if (!match) throw Errors.invalidToken('expected "Bearer <token>"');
      if (this.#calls && claimsCallToken(match[1]!)) {
        const call = await this.#calls.verify(match[1]!);
        return { actor: { type: 'runtime', callSid: call.callSid, agentId: call.agentId, userId: `call:${call.callSid}`, email: null }, call, requestId };
      }
      return this.#fromToken(match[1]!, requestId);
    }
    throw Errors.unauthenticated();
  }

  async context(principal: Principal, orgHeader: string | undefined): Promise<RequestContext> {
    if (orgHeader === undefined || orgHeader === '') throw Errors.organizationRequired();
    if (principal.call) {
      if (principal.call.orgId !== orgHeader) throw Errors.organizationForbidden();
      // The role only satisfies the type: a call token reaches the routes that accept it (auth plugin), nothing else.
      return { orgId: orgHeader, actor: principal.actor, role: 'agent_manager', requestId: principal.requestId, call: principal.call };
    }
    if (principal.apiKey) {
      if (principal.apiKey.orgId !== orgHeader) throw Errors.organizationForbidden();
      const { role, scopes, allowedIps } = principal.apiKey;
      return { orgId: orgHeader, actor: principal.actor, role, requestId: principal.requestId, narrowing: { scopes, allowedIps } };
    }
    if (principal.actor.type !== 'user') throw Errors.organizationForbidden();
    const role = await this.#users.membershipRole(orgHeader, principal.actor.userId);
    if (!role || !isRole(role)) throw Errors.organizationForbidden();
    return { orgId: orgHeader, actor: principal.actor, role, requestId: principal.requestId };
  }

  async #fromApiKey(presented: string, requestId: string): Promise<Principal> {
    if (!API_KEY_PATTERN.test(presented)) throw Errors.invalidApiKey();
    const key = await this.#keys.findByHash(hashApiKey(presented));
    const now = Date.now();
    if (!key || key.status !== 'active' || !isRole(key.role)) throw Errors.invalidApiKey();
    if (key.expiresAt && key.expiresAt.getTime() <= now) throw Errors.invalidApiKey();
    this.#recordUse(key.id, key.lastUsedAt, now);
    return {
      actor: { type: 'api_key', keyId: key.id, userId: key.userId, name: key.name },
      apiKey: { orgId: key.clientId, role: key.role, scopes: key.scopes ?? [], allowedIps: key.allowedIps ?? [] },
      requestId,
    };
  }

  async #fromToken(token: string, requestId: string): Promise<Principal> {
    const identity = await this.#tokens.verify(token);
    const user = await this.#users.userForIdentity(identity);
    return { actor: { type: 'user', userId: user.id, email: identity.email ?? user.email }, requestId };
  }

  #recordUse(keyId: string, lastUsedAt: Date | null, now: number): void {
    if (lastUsedAt && now - lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    const touched = this.#lastTouched.get(keyId);
    if (touched !== undefined && now - touched < LAST_USED_RESOLUTION_MS) return;
    this.#lastTouched.set(keyId, now);
    if (this.#lastTouched.size > 10_000) this.#lastTouched.clear(); // bounded memory; worst case one extra write
    this.#keys.recordUse(keyId).catch(() => this.#lastTouched.delete(keyId));
  }
}
