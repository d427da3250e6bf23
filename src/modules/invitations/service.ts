import type { Static } from 'typebox';
import { type Database } from '../../db/database.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Principal, RequestContext } from '../../core/context.ts';
import { Errors } from '../../core/errors.ts';
import { assertInvitationWithinCaller } from '../../core/auth/ceiling.ts';
import { newId } from '../../core/ids.ts';
import { roleAtMost, type Role } from '../../core/permissions.ts';
import { iso } from '../../core/schemas.ts';
import type { OrganizationService } from '../organizations/service.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import type { AuditService } from '../audit/service.ts';
import { INVITATION_EMAIL } from './jobs.ts';
import { InvitationRepository, type InvitationRow } from './repository.ts';
import { INVITATION_DAYS, type CreateInvitationBody, type Invitation } from './schemas.ts';
import { transaction, clientTransaction } from '../../db/unit-of-work.ts';

type InvitationView = Static<typeof Invitation>;

/** `pending` past its expiry reads as `expired`: expiry is a matter of time, not of a job running. */
export function toInvitation(row: InvitationRow, now = new Date()): InvitationView {
  const status = row.status === 'pending' && row.expiresAt <= now ? 'expired' : row.status;
  return {
    invite_id: row.id, email: row.email, client_id: row.clientId, role: row.role as Role, invited_by: row.invitedBy,
    status: status as InvitationView['status'], created_at: iso(row.createdAt), expires_at: iso(row.expiresAt),
  };
}

export interface InvitationDeps {
  database: Database;
  queue: JobQueue;
  organizations: OrganizationService;
  /** invitation.accepted, in the transaction that adds the member. */
  outbox: EventOutbox;
  /** invitation.create / cancel / accept entries, in the same transaction. */
  audit: Pick<AuditService, 'record'>;
}

const audited = (action: string, inviteId: string, changedFields: string[] = []) =>
  ({ action, resourceType: 'invitation', resourceId: inviteId, changedFields });

export class InvitationService {
  readonly #deps: InvitationDeps;
  constructor(deps: InvitationDeps) {
    this.#deps = deps;
  }

  async list(ctx: RequestContext): Promise<{ invitations: InvitationView[] }> {
    const now = new Date();
    const rows = await new InvitationRepository(this.#deps.database.db).listPending(ctx.orgId, now);
    return { invitations: rows.map((r) => toInvitation(r, now)) };
  }

  /** Whether the address has an invitation still open in some organization (it may ask for a sign-in link). */
  hasPendingFor(email: string): Promise<boolean> {
    return new InvitationRepository(this.#deps.database.db).hasPendingFor(email, new Date());
  }

  /**
   * Invites an address with a role no higher than the inviter's (and, with an API key, within its
   * scopes and address rule: core/auth/ceiling.ts). An existing member or an open
   * invitation for the address is 409. The invitation and its email job commit together; a worker
   * sends the email and retries while the mail server refuses.
   */
  async create(ctx: RequestContext, input: Static<typeof CreateInvitationBody>): Promise<{ data: InvitationView; message: string }> {
    if (!roleAtMost(input.role, ctx.role)) throw Errors.roleTooHigh('invited role');
    // Inviting with a narrowed key may not give the invitee more than the key holds.
    assertInvitationWithinCaller(ctx, input.role);
    const email = input.email.trim().toLowerCase();
    const row = await clientTransaction(this.#deps.database, async (tx, client) => {
      const repo = new InvitationRepository(tx);
      if (await repo.isMemberByEmail(ctx.orgId, email)) throw Errors.conflict('already_member', `${email} is already a member`);
      const now = new Date();
      await repo.expireLapsed(ctx.orgId, email, now);
      const created = await repo.insert(ctx.orgId, {
        id: newId('inv'), email, role: input.role, invitedBy: ctx.actor.userId, createdAt: now, expiresAt: new Date(now.getTime() + INVITATION_DAYS * 86_400_000),
      });
      if (!created) throw Errors.conflict('invitation_pending', `${email} already has a pending invitation`);
      await this.#deps.queue.send(INVITATION_EMAIL, { clientId: ctx.orgId, inviteId: created.id }, { within: client });
      await this.#deps.audit.record(tx, ctx, audited('invitation.create', created.id, ['email', 'role']));
      return created;
    });
    return { data: toInvitation(row), message: `Invitation created; the email to ${email} is on its way` };
  }

  async cancel(ctx: RequestContext, inviteId: string): Promise<InvitationView> {
    const cancelled = await transaction(this.#deps.database.db, async (tx) => {
      const row = await new InvitationRepository(tx).settle(ctx.orgId, inviteId, { status: 'cancelled', cancelledAt: new Date() });
      if (row) await this.#deps.audit.record(tx, ctx, audited('invitation.cancel', inviteId, ['status']));
      return row;
    });
    if (cancelled) return toInvitation(cancelled);
    const repo = new InvitationRepository(this.#deps.database.db);
    const existing = await repo.findById(ctx.orgId, inviteId);
    if (!existing) throw Errors.notFound('Invitation');
    throw Errors.conflict(`invitation_${toInvitation(existing).status}`, `The invitation is ${toInvitation(existing).status}`);
  }

  /**
   * The invited person accepts with a token whose email is the invited address: the membership with
   * the invited role and the `accepted` status are written together, on the locked invitation.
   */
  async accept(principal: Principal, inviteId: string) {
    const { actor } = principal;
    if (actor.type !== 'user' || !actor.email) {
      throw Errors.forbidden('Accept an invitation with a sign-in token carrying your email, not an API key');
    }
    const email = actor.email.toLowerCase();
    return transaction(this.#deps.database.db, async (tx) => {
      const repo = new InvitationRepository(tx);
      const invitation = await repo.findForAccept(inviteId);
      if (!invitation) throw Errors.notFound('Invitation');
      if (invitation.email !== email) throw Errors.forbidden('This invitation was sent to another address');
      const status = toInvitation(invitation).status;
      if (status !== 'pending') throw Errors.conflict(`invitation_${status}`, `The invitation is ${status}`);
      const organizations = this.#deps.organizations;
      if (await organizations.membershipRole(invitation.clientId, actor.userId, tx)) {
        throw Errors.conflict('already_member', 'You are already a member of this organization');
      }
      await organizations.addMember(tx, invitation.clientId, actor.userId, invitation.role as Role);
      const accepted = await repo.settle(invitation.clientId, invitation.id, { status: 'accepted', acceptedAt: new Date(), acceptedBy: actor.userId });
      await this.#deps.outbox.emit(tx, invitation.clientId, 'invitation.accepted', toInvitation(accepted!));
      const joined = { ...principal, orgId: invitation.clientId, role: invitation.role as Role };
      await this.#deps.audit.record(tx, joined, audited('invitation.accept', invitation.id, ['status']));
      return { invitation: toInvitation(accepted!), organization_id: invitation.clientId, user_id: actor.userId, role: invitation.role as Role };
    });
  }
}
