import type { Db } from '../../db/database.ts';
import { outboxEmails } from '../../db/schema/index.ts';
import { newId } from '../../core/ids.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** How the platform sends email (invitations). */
export interface Mailer {
  readonly kind: 'outbox' | 'smtp';
  send(message: MailMessage): Promise<void>;
}

interface Log {
  info(obj: object, message: string): void;
}

/** The default: mail is stored in `outbox_emails` and written to the log, so a local install needs no mail server. */
export class OutboxMailer implements Mailer {
  readonly kind = 'outbox' as const;
  readonly #db: Db;
  readonly #log: Log | undefined;
  constructor(db: Db, log?: Log) {
    this.#db = db;
    this.#log = log;
  }

  async send(message: MailMessage): Promise<void> {
    await this.#db.insert(outboxEmails).values({ id: newId('mail'), ...message });
    this.#log?.info({ mail: message }, `mail to ${message.to} (outbox): ${message.subject}`);
  }
}
