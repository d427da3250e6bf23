import type { Db } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { Errors } from '../../core/errors.ts';
import { ROLES, roleAtMost, type Role } from '../../core/permissions.ts';
import { iso } from '../../core/schemas.ts';
import type { ApiKeyService } from '../api-keys/service.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import type { AuditService } from '../audit/service.ts';
import { OrganizationRepository, type MemberRow } from './repository.ts';
import { transaction } from '../../db/unit-of-work.ts';

export const toMemberView = (row: MemberRow) => ({ user_id: row.userId, email: row.email, role: row.role as Role, joined_at: iso(row.createdAt) });

/**
 * Role changes and removals. The organization's admin rows are locked first, so two admins
 * demoting each other at once cannot leave it without one. A member's keys never outrank them:
 * keys above a new role are revoked, and a removed member's keys all are.
 */
export class MemberService {
  readonly #db: Db;
  readonly #apiKeys: ApiKeyService;
  readonly #outbox: EventOutbox;
  readonly #audit: Pick<AuditService, 'record'>;
  constructor(deps: { db: Db; apiKeys: ApiKeyService; outbox: EventOutbox; audit: Pick<AuditService, 'record'> }) {
    this.#db = deps.db;
    this.#apiKeys = deps.apiKeys;
    this.#outbox = deps.outbox;
    this.#audit = deps.audit;
  }

  async #change(ctx: RequestContext, userId: string, newRole: Role | null) {
    const { member, revocation } = await transaction(this.#db, async (tx) => {
      const repo = new OrganizationRepository(tx);
      const admins = await repo.lockAdmins(ctx.orgId);
      const member = await repo.findMember(ctx.orgId, userId);
      if (!member) throw Errors.notFound('Member');
      if (!roleAtMost(member.role as Role, ctx.role)) throw Errors.roleTooHigh("member's role");
      if (newRole && !roleAtMost(newRole, ctx.role)) throw Errors.roleTooHigh('new role');
      if (member.role === 'admin' && newRole !== 'admin' && admins.length <= 1) {
        throw Errors.conflict('last_admin', 'The organization needs at least one admin: make another member admin first');
      }
      if (newRole) {
        await repo.updateMembershipRole(ctx.orgId, userId, newRole);
        await this.#audit.record(tx, ctx, { action: 'member.update', resourceType: 'member', resourceId: userId, changedFields: ['role'] });
        const revocation = await this.#apiKeys.revokeUserKeys(tx, ctx.orgId, userId, ROLES.filter((r) => roleAtMost(r, newRole)));
        return { member: toMemberView({ ...member, role: newRole }), revocation };
      }
      await repo.deleteMembership(ctx.orgId, userId);
      await this.#audit.record(tx, ctx, { action: 'member.remove', resourceType: 'member', resourceId: userId });
      await this.#outbox.emit(tx, ctx.orgId, 'member.removed', { user_id: userId });
      return { member: toMemberView(member), revocation: await this.#apiKeys.revokeUserKeys(tx, ctx.orgId, userId) };
    });
    await this.#apiKeys.settleRevocation(revocation);
    return member;
  }

  updateRole(ctx: RequestContext, userId: string, role: Role) {
    return this.#change(ctx, userId, role);
  }

  remove(ctx: RequestContext, userId: string) {
    return this.#change(ctx, userId, null);
  }
}
