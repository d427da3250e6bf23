import nodemailer, { type Transporter } from 'nodemailer';
import type { MailMessage, Mailer } from './mailer.ts';

/** Any SMTP server, through nodemailer (`SMTP_URL`, e.g. smtp://user:pass@mail.example.com:587). */
export class SmtpMailer implements Mailer {
  readonly kind = 'smtp' as const;
  readonly #transport: Transporter;
  readonly #from: string;
  constructor(url: string, from: string) {
    this.#transport = nodemailer.createTransport(url);
    this.#from = from;
  }

  async send(message: MailMessage): Promise<void> {
    await this.#transport.sendMail({ from: this.#from, to: message.to, subject: message.subject, text: message.text });
  }
}
