import type { Db } from '../../db/database.ts';
import type { Mailer } from '../../adapters/mail/mailer.ts';
import type { OrganizationService } from '../organizations/service.ts';
import { InvitationRepository } from './repository.ts';
import { toInvitation } from './service.ts';

export interface InvitationEmailerDeps {
  db: Db;
  /** Built on first use: the SMTP transport is loaded only by processes that send mail. */
  mailer: () => Promise<Mailer>;
  publicBaseUrl: string;
  organizations: OrganizationService;
}

/**
 * The invitation-email job: queued with the invitation, sent by a worker, retried while the mail
 * server refuses. An invitation cancelled or expired before its turn gets no email.
 * Delivery is at least once: a worker that dies between sending and finishing sends again.
 */
export class InvitationEmailer {
  readonly #deps: InvitationEmailerDeps;
  constructor(deps: InvitationEmailerDeps) {
    this.#deps = deps;
  }

  async send(job: { clientId: string; inviteId: string }): Promise<void> {
    const invitation = await new InvitationRepository(this.#deps.db).findById(job.clientId, job.inviteId);
    if (!invitation || toInvitation(invitation).status !== 'pending') return;
    const name = (await this.#deps.organizations.organizationName(invitation.clientId)) ?? 'an organization';
    const acceptUrl = `${this.#deps.publicBaseUrl}/api/auth/invitations/${invitation.id}/accept`;
    const mailer = await this.#deps.mailer();
    await mailer.send({
      to: invitation.email,
      subject: `You are invited to ${name} on Switchboard`,
      text: [
        `You have been invited to join ${name} on Switchboard as ${invitation.role}.`,
        '',
        `Accept by signing in with this address and sending POST ${acceptUrl}`,
        `(for example: curl -X POST ${acceptUrl} -H "Authorization: Bearer $TOKEN").`,
        '',
        `The invitation expires on ${invitation.expiresAt.toISOString()}.`,
      ].join('\n'),
    });
  }
}
