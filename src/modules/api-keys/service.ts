import type { Db, Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { pageNewestFirst, type Page } from '../../core/cursor.ts';
import { Errors, type FieldError } from '../../core/errors.ts';
import { parseNetworks } from '../../core/networks.ts';
import { newId } from '../../core/ids.ts';
import { PERMISSIONS, roleAtMost, type Role } from '../../core/permissions.ts';
import { iso } from '../../core/schemas.ts';
import { generateApiKey } from '../../core/auth/api-key-secret.ts';
import { assertKeyWithinCaller } from '../../core/auth/ceiling.ts';
import { ApiKeyRepository, type ApiKeyRow } from './repository.ts';
import type { Revocations } from './revocations.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import type { AuditService } from '../audit/service.ts';
import { transaction } from '../../db/unit-of-work.ts';

export interface ApiKeyView {
  key_id: string;
  name: string;
  role: Role;
  prefix: string;
  client_id: string;
  user_id: string;
  status: 'active' | 'revoked';
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  scopes: string[];
  allowed_ips: string[];
}

export function toApiKeyView(row: ApiKeyRow): ApiKeyView {
  return {
    key_id: row.id,
    name: row.name,
    role: row.role as Role,
    prefix: row.prefix,
    client_id: row.clientId,
    user_id: row.userId,
    status: row.status as ApiKeyView['status'],
    created_at: iso(row.createdAt),
    last_used_at: iso(row.lastUsedAt),
    expires_at: iso(row.expiresAt),
    scopes: row.scopes,
    allowed_ips: row.allowedIps,
  };
}

/** `scopes` name permissions of the table and `allowed_ips` parse as networks; 400 with the entries that do not. */
function checkNarrowing(input: { scopes?: string[]; allowed_ips?: string[] }): void {
  const errors: FieldError[] = [];
  (input.scopes ?? []).forEach((scope, i) => {
    if (!Object.hasOwn(PERMISSIONS, scope)) errors.push({ path: `body.scopes.${i}`, message: `is not a permission (e.g. ${Object.keys(PERMISSIONS)[0]})` });
  });
  (input.allowed_ips ?? []).forEach((entry, i) => {
    try {
      parseNetworks(entry);
      if (entry.includes(',')) throw new Error('one network per entry');
    } catch {
      errors.push({ path: `body.allowed_ips.${i}`, message: 'is not an IP address or CIDR network' });
    }
  });
  if (errors.length) throw Errors.validation('Invalid API key restrictions', errors);
}

/** Creates a key and returns it with its full secret, which exists only in this return value. */
export async function issueApiKey(
  db: Executor,
  orgId: string,
  input: { userId: string; name: string; role: Role; expiresAt?: Date | null; scopes?: string[]; allowedIps?: string[] },
): Promise<{ view: ApiKeyView; key: string }> {
  const secret = generateApiKey();
  const row = await new ApiKeyRepository(db).insert(orgId, {
    id: newId('apikey'),
    userId: input.userId,
    name: input.name,
    role: input.role,
    prefix: secret.prefix,
    keyHash: secret.hash,
    expiresAt: input.expiresAt ?? null,
    scopes: input.scopes ?? [],
    allowedIps: input.allowedIps ?? [],
  });
  return { view: toApiKeyView(row), key: secret.key };
}

export class ApiKeyService {
  readonly #db: Db;
  readonly #revocations: Pick<Revocations, 'announce' | 'settle'>;
  readonly #outbox: EventOutbox;
  readonly #audit: Pick<AuditService, 'record'>;
  constructor(deps: { db: Db; revocations: Pick<Revocations, 'announce' | 'settle'>; outbox: EventOutbox; audit: Pick<AuditService, 'record'> }) {
    this.#db = deps.db;
    this.#revocations = deps.revocations;
    this.#outbox = deps.outbox;
    this.#audit = deps.audit;
  }

  /**
   * Revokes a user's active keys in the organization whose role is not in `keep` (all of them when
   * `keep` is empty), in the caller's transaction: a member demoted or removed keeps no key above
   * what they now hold. Pass the returned revocation to `settleRevocation` once the transaction
   * has committed.
   */
  async revokeUserKeys(within: Executor, orgId: string, userId: string, keep: readonly Role[] = []): Promise<number | undefined> {
    const revoked = await new ApiKeyRepository(within).revokeUserKeys(orgId, userId, keep);
    for (const row of revoked) await this.#outbox.emit(within, orgId, 'api_key.revoked', toApiKeyView(row));
    return revoked.length > 0 ? this.#revocations.announce(within) : undefined;
  }

  /** After the revoking transaction commits: returns once no process can accept the revoked keys from its cache. */
  async settleRevocation(revocation: number | undefined): Promise<void> {
    if (revocation !== undefined) await this.#revocations.settle(revocation);
  }

  async create(ctx: RequestContext, input: { name: string; role: Role; expires_at?: string; scopes?: string[]; allowed_ips?: string[] }) {
    if (!roleAtMost(input.role, ctx.role)) throw Errors.roleTooHigh('requested role');
    checkNarrowing(input);
    const allowedIps = input.allowed_ips?.map((ip) => ip.trim()) ?? [];
    // A key creates keys no wider than itself (users are not narrowed).
    assertKeyWithinCaller(ctx, { scopes: input.scopes ?? [], allowedIps });
    let expiresAt: Date | null = null;
    if (input.expires_at !== undefined) {
      expiresAt = new Date(input.expires_at);
      if (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() <= Date.now()) {
        throw Errors.validation('expires_at must be in the future', [{ path: 'body.expires_at', message: 'must be in the future' }]);
      }
    }
    const { view, key } = await transaction(this.#db, async (tx) => {
      const issued = await issueApiKey(tx, ctx.orgId, {
        userId: ctx.actor.userId, name: input.name, role: input.role, expiresAt, scopes: input.scopes, allowedIps,
      });
      await this.#outbox.emit(tx, ctx.orgId, 'api_key.created', issued.view);
      // Field names only: the key itself never reaches the log.
      await this.#audit.record(tx, ctx, { action: 'api_key.create', resourceType: 'api_key', resourceId: issued.view.key_id, changedFields: Object.keys(input) });
      return issued;
    });
    return { ...view, key };
  }

  async list(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<ApiKeyView>> {
    return pageNewestFirst(new ApiKeyRepository(this.#db), ctx.orgId, query, toApiKeyView);
  }

  async get(ctx: RequestContext, keyId: string): Promise<ApiKeyView> {
    const row = await new ApiKeyRepository(this.#db).findById(ctx.orgId, keyId);
    if (!row) throw Errors.notFound('API key');
    return toApiKeyView(row);
  }

  /** Revokes a key of the organization whose role is not above the caller's; idempotent. */
  async revoke(ctx: RequestContext, keyId: string): Promise<ApiKeyView> {
    const { view, revocation } = await transaction(this.#db, async (tx) => {
      const repo = new ApiKeyRepository(tx);
      const row = await repo.findById(ctx.orgId, keyId);
      if (!row) throw Errors.notFound('API key');
      if (!roleAtMost(row.role as Role, ctx.role)) throw Errors.roleTooHigh("key's role");
      const revoked = toApiKeyView((await repo.revoke(ctx.orgId, keyId))!);
      // Revoking twice is harmless and announces nothing new.
      if (row.status !== 'revoked') {
        await this.#audit.record(tx, ctx, { action: 'api_key.revoke', resourceType: 'api_key', resourceId: keyId, changedFields: ['status'] });
        await this.#outbox.emit(tx, ctx.orgId, 'api_key.revoked', revoked);
      }
      return { view: revoked, revocation: await this.#revocations.announce(tx) };
    });
    await this.settleRevocation(revocation);
    return view;
  }
}
