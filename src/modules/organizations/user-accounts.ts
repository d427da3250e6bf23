import type { Db } from '../../db/database.ts';
import type { SignedInUser, UserDirectory } from '../../core/auth/ports.ts';
import { newId } from '../../core/ids.ts';
import { OrganizationRepository } from './repository.ts';

/** The organizations module's side of authentication: users by their token's subject, and their memberships. */
export class UserAccounts implements UserDirectory {
  readonly #db: Db;
  constructor(deps: { db: Db }) {
    this.#db = deps.db;
  }

  /**
   * The user of a verified token. On first sign-in, a user the CLI or an invitation created for the
   * token's email is taken over (its subject bound); otherwise a new user is created.
   */
  async userForIdentity(identity: { subject: string; email: string | null }): Promise<SignedInUser> {
    const repo = new OrganizationRepository(this.#db);
    const known = await repo.findUserBySubject(identity.subject);
    if (known) {
      if (identity.email && known.email !== identity.email) await repo.updateUserEmail(known.id, identity.email);
      return { id: known.id, email: identity.email ?? known.email };
    }
    const user =
      (identity.email && (await repo.claimUserByEmail(identity.email, identity.subject))) ||
      (await repo.upsertUserBySubject({ id: newId('user'), subject: identity.subject, email: identity.email }));
    return { id: user.id, email: user.email };
  }

  membershipRole(orgId: string, userId: string): Promise<string | undefined> {
    return new OrganizationRepository(this.#db).findMembershipRole(orgId, userId);
  }
}
