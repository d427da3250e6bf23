import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { JwtConfig } from '../../config.ts';
import type { Mailer } from '../../adapters/mail/mailer.ts';
import { signSessionToken } from '../../core/auth/tokens.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { SessionRepository } from './repository.ts';

/** How long an e-mailed link may be redeemed, once. */
export const LINK_TTL_MS = 15 * 60_000;
/** Links mailed to one address per LINK_TTL_MS; beyond it requests are answered alike and send nothing. */
export const LINKS_PER_ADDRESS = 5;
/** Life of a console session (its refresh cookie), from sign-in. */
export const SESSION_TTL_MS = 14 * 86_400_000;
/** Life of an access token: short, since signing out cannot recall one already handed out. */
const ACCESS_TTL_SECONDS = 600;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const secret = () => randomBytes(32).toString('base64url');

export interface SignedInSession {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  email: string;
  session_expires_at: string;
}

interface Log {
  info(obj: object, message: string): void;
  error(obj: object, message: string): void;
}

export interface SessionServiceDeps {
  db: Db;
  mailer: () => Promise<Mailer>;
  publicBaseUrl: string;
  jwt: JwtConfig;
  /** The embedded secret access tokens are signed with (src/core/auth/tokens.ts resolveSessionSecret). */
  sessionSecret: string;
  /** Whether the address may receive a link: a known user, or a pending invitation. */
  mayReceiveLink: (email: string) => Promise<boolean>;
  /** The token subject for the address: the subject of its user when bound, else the address itself. */
  subjectFor: (email: string) => Promise<string>;
  log: Log;
  now?: () => Date;
}

/**
 * The embedded identity provider's sign-in by e-mail link: a single-use link, redeemed for a session
 * whose refresh credential lives in an httpOnly cookie (the routes set it) and whose access tokens
 * are short-lived JWTs. Only hashes of links and refresh credentials are stored.
 */
export class SessionService {
  readonly #deps: SessionServiceDeps;
  readonly #now: () => Date;
  constructor(deps: SessionServiceDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
  }

  /**
   * Mails a link when the address may sign in and has not had too many lately. The answer is the same
   * in every case and does not wait for the mail, so it tells nothing about the address.
   */
  async requestLink(rawEmail: string, origin: { ip?: string }): Promise<void> {
    const email = rawEmail.trim().toLowerCase();
    const repo = new SessionRepository(this.#deps.db);
    if (!(await this.#deps.mayReceiveLink(email))) {
      this.#deps.log.info({ ip: origin.ip }, 'sign-in link refused: unknown address');
      return;
    }
    if ((await repo.countLinksSince(email, new Date(this.#now().getTime() - LINK_TTL_MS))) >= LINKS_PER_ADDRESS) {
      this.#deps.log.info({ ip: origin.ip }, 'sign-in link refused: too many for the address');
      return;
    }
    const url = await this.createLink(email);
    void this.#mail(email, url).catch((err: unknown) => this.#deps.log.error({ err }, 'sign-in link mail failed'));
  }

  /** A new link for the address, without mail (first run, the operator's CLI). */
  async createLink(rawEmail: string): Promise<string> {
    const email = rawEmail.trim().toLowerCase();
    const token = secret();
    await new SessionRepository(this.#deps.db).insertLink({
      id: newId('link'), email, tokenHash: sha256(token), expiresAt: new Date(this.#now().getTime() + LINK_TTL_MS),
    });
    return `${this.#deps.publicBaseUrl}/sign-in?token=${token}`;
  }

  /** Redeems a link once: a session, its refresh credential (for the cookie) and a first access token. */
  async redeem(token: string): Promise<{ session: SignedInSession; refresh: string }> {
    const now = this.#now();
    const repo = new SessionRepository(this.#deps.db);
    const email = await repo.consumeLink(sha256(token), now);
    if (!email) throw Errors.signInLinkInvalid();
    const id = newId('sess');
    const refreshSecret = secret();
    const subject = await this.#deps.subjectFor(email);
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
    await repo.insertSession({ id, email, subject, refreshHash: sha256(refreshSecret), expiresAt });
    return { session: await this.#issue({ id, email, subject, expiresAt }), refresh: `${id}.${refreshSecret}` };
  }

  /** A new access token for the session the refresh credential names. */
  async refresh(credential: string | undefined): Promise<SignedInSession> {
    const session = await this.#live(credential);
    if (!session) throw Errors.sessionInvalid();
    await new SessionRepository(this.#deps.db).touchSession(session.id, this.#now());
    return this.#issue(session);
  }

  /** Ends the session: its cookie refreshes nothing any more. Unknown or ended sessions are fine. */
  async signOut(credential: string | undefined): Promise<void> {
    const session = await this.#live(credential);
    if (session) await new SessionRepository(this.#deps.db).revokeSession(session.id, this.#now());
  }

  async #live(credential: string | undefined) {
    const [id, presented] = (credential ?? '').split('.');
    if (!id || !presented) return undefined;
    const session = await new SessionRepository(this.#deps.db).findLiveSession(id, this.#now());
    if (!session) return undefined;
    const matches = timingSafeEqual(Buffer.from(session.refreshHash), Buffer.from(sha256(presented)));
    return matches ? session : undefined;
  }

  async #issue(session: { id: string; email: string; subject: string; expiresAt: Date }): Promise<SignedInSession> {
    const ttlSeconds = Math.min(ACCESS_TTL_SECONDS, this.#deps.jwt.maxTtlSeconds);
    const accessToken = await signSessionToken(this.#deps.jwt, this.#deps.sessionSecret, {
      subject: session.subject, email: session.email, sessionId: session.id, ttlSeconds,
    });
    return { access_token: accessToken, token_type: 'Bearer', expires_in: ttlSeconds, email: session.email, session_expires_at: session.expiresAt.toISOString() };
  }

  async #mail(email: string, url: string): Promise<void> {
    const mailer = await this.#deps.mailer();
    await mailer.send({
      to: email,
      subject: 'Your Switchboard sign-in link',
      text: [
        'Open this link to sign in to the Switchboard console:',
        '',
        url,
        '',
        `It works once, within ${LINK_TTL_MS / 60_000} minutes. If you did not ask for it, ignore this mail.`,
      ].join('\n'),
    });
  }
}
