import type { Db } from '../../db/database.ts';
import type { Mailer } from '../../adapters/mail/mailer.ts';
import type { InvitationEmailJob } from '../../jobs/queue.ts';
import { OrganizationRepository } from '../organizations/repository.ts';
import { InvitationRepository } from './repository.ts';
import { toInvitation } from './service.ts';

/**
 * The invitation-email job: queued with the invitation, sent by a worker, retried while the mail
 * server refuses. An invitation cancelled or expired before its turn gets no email.
 * Delivery is at least once: a worker that dies between sending and finishing sends again.
 */
export class InvitationEmailer {
  readonly #db: Db;
  readonly #mailer: Mailer;
  readonly #publicBaseUrl: string;
  constructor(db: Db, mailer: Mailer, publicBaseUrl: string) {
    this.#db = db;
    this.#mailer = mailer;
    this.#publicBaseUrl = publicBaseUrl;
  }

  async send(job: InvitationEmailJob): Promise<void> {
    const invitation = await new InvitationRepository(this.#db).findById(job.clientId, job.inviteId);
    if (!invitation || toInvitation(invitation).status !== 'pending') return;
    const org = await new OrganizationRepository(this.#db).findOrganization(invitation.clientId);
    const name = org?.name ?? 'an organization';
    const acceptUrl = `${this.#publicBaseUrl}/api/auth/invitations/${invitation.id}/accept`;
    await this.#mailer.send({
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
