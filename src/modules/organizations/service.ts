import fs from 'node:fs';
import path from 'node:path';
import type { Db, Executor } from '../../db/database.ts';
import type { Principal, RequestContext } from '../../core/context.ts';
import { decodeTimeCursor, toPage, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Role } from '../../core/permissions.ts';
import { iso } from '../../core/schemas.ts';
import { issueApiKey } from '../api-keys/service.ts';
import { OrganizationRepository, type OrganizationRow } from './repository.ts';
import { toMemberView } from './members.ts';
import type { AuditService } from '../audit/service.ts';
import { transaction } from '../../db/unit-of-work.ts';


export interface OrganizationView {
  organization_id: string;
  name: string;
  role: Role;
  created_at: string;
}

export interface MemberView {
  user_id: string;
  email: string | null;
  role: Role;
  joined_at: string;
}

/** What the CLI and first-run bootstrap print: a new organization and its first admin key. */
export interface ProvisionedOrganization {
  organization_id: string;
  user_id: string;
  api_key: { key_id: string; key: string; role: Role };
}


/** Creates organization, user (unless given) and admin membership: the caller owns the transaction. */
async function createOrganizationIn(tx: Executor, name: string, userId: string): Promise<OrganizationRow> {
  const repo = new OrganizationRepository(tx);
  const org = await repo.insertOrganization({ id: newId('org'), name });
  await repo.insertMembership(org.id, userId, 'admin');
  return org;
}

/**
 * A new organization with a new admin user (email optional) and an admin API key, in one
 * transaction: used by `switchboard org:create` and the first-run bootstrap.
 */
export async function provisionOrganization(db: Db, input: { name: string; email?: string | null }): Promise<ProvisionedOrganization> {
  return transaction(db, (tx) => provisionOrganizationIn(tx, input));
}

export async function provisionOrganizationIn(tx: Executor, input: { name: string; email?: string | null }): Promise<ProvisionedOrganization> {
  const email = input.email ? input.email.toLowerCase() : null;
  const user = await new OrganizationRepository(tx).insertUser({ id: newId('user'), subject: null, email });
  const org = await createOrganizationIn(tx, input.name, user.id);
  const { view, key } = await issueApiKey(tx, org.id, { userId: user.id, name: 'Admin key', role: 'admin' });
  return { organization_id: org.id, user_id: user.id, api_key: { key_id: view.key_id, key, role: 'admin' } };
}

export class OrganizationService {
  readonly #db: Db;
  readonly #audit: Pick<AuditService, 'record'> | undefined;
  /** `audit`: absent only for the operator's CLI, whose changes are not a caller's. */
  constructor(deps: { db: Db; audit?: Pick<AuditService, 'record'> }) {
    this.#db = deps.db;
    this.#audit = deps.audit;
  }

  /** A new organization with a new admin user and an admin key (`switchboard org:create`, first run). */
  provision(input: { name: string; email?: string | null }): Promise<ProvisionedOrganization> {
    return provisionOrganization(this.#db, input);
  }

  /**
   * First run: on an empty database, organization "Default" with an admin key, written to
   * `DATA_DIR/bootstrap.json` (mode 0600). Null when the database already has organizations. The
   * transaction-scoped advisory lock keeps two servers starting together from both bootstrapping.
   */
  async bootstrapIfEmpty(dataDir: string, adminEmail?: string): Promise<ProvisionedOrganization | null> {
    const created = await transaction(this.#db, async (tx) => {
      const repo = new OrganizationRepository(tx);
      await repo.lockBootstrap();
      if ((await repo.countOrganizations()) > 0) return null;
      return provisionOrganizationIn(tx, { name: 'Default', email: adminEmail ?? null });
    });
    if (created) {
      fs.mkdirSync(dataDir, { recursive: true });
      const file = path.join(dataDir, 'bootstrap.json');
      fs.writeFileSync(file, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
      fs.chmodSync(file, 0o600); // writeFileSync keeps the mode of a file that already existed
    }
    return created;
  }

  /** Whether some user has this (lowercased) address: who may ask for a sign-in link. */
  async hasUserWithEmail(email: string): Promise<boolean> {
    return (await new OrganizationRepository(this.#db).usersByEmail(email)).length > 0;
  }

  /**
   * The token subject a sign-in by e-mail should carry: that of the address's user once bound (a user
   * of a production identity provider keeps theirs), else the address, as `auth:token` does.
   */
  async signInSubject(email: string): Promise<string> {
    const bound = (await new OrganizationRepository(this.#db).usersByEmail(email)).find((u) => u.subject !== null);
    return bound?.subject ?? email;
  }

  /** The organization's name, or undefined when there is none with this id. */
  async organizationName(orgId: string, within?: Executor): Promise<string | undefined> {
    return (await new OrganizationRepository(within ?? this.#db).findOrganization(orgId))?.name;
  }

  /** The addresses of the organization's admins (who are told when a webhook endpoint is disabled). */
  adminEmails(orgId: string): Promise<string[]> {
    return new OrganizationRepository(this.#db).adminEmails(orgId);
  }

  membershipRole(orgId: string, userId: string, within?: Executor): Promise<string | undefined> {
    return new OrganizationRepository(within ?? this.#db).findMembershipRole(orgId, userId);
  }

  /** Adds a member in the caller's transaction (an invitation accepted). */
  addMember(within: Executor, orgId: string, userId: string, role: Role): Promise<void> {
    return new OrganizationRepository(within).insertMembership(orgId, userId, role);
  }

  /** The calling user creates an organization and becomes its admin. */
  async create(principal: Principal, input: { name: string }): Promise<OrganizationView> {
    // An API key belongs to one organization; a new organization needs a person to be its admin.
    if (principal.actor.type !== 'user') throw Errors.userTokenRequired();
    const org = await transaction(this.#db, async (tx) => {
      const created = await createOrganizationIn(tx, input.name, principal.actor.userId);
      const ctx = { orgId: created.id, actor: principal.actor, role: 'admin' as const, requestId: principal.requestId, ip: principal.ip, userAgent: principal.userAgent };
      await this.#audit?.record(tx, ctx, { action: 'organization.create', resourceType: 'organization', resourceId: created.id, changedFields: ['name'] });
      return created;
    });
    return { organization_id: org.id, name: org.name, role: 'admin', created_at: iso(org.createdAt) };
  }

  async me(principal: Principal) {
    // Unreachable with a call token (the auth plugin refuses it on principal routes); said for the type.
    if (principal.actor.type === 'runtime') throw Errors.userTokenRequired();
    const repo = new OrganizationRepository(this.#db);
    const user = await repo.findUser(principal.actor.userId);
    if (!user) throw Errors.notFound('User');
    const memberships = await repo.membershipsOfUser(user.id);
    return {
      user_id: user.id,
      email: user.email,
      created_at: iso(user.createdAt),
      authenticated_with: principal.actor.type,
      ...(principal.actor.type === 'api_key'
        ? { api_key: {
          key_id: principal.actor.keyId, client_id: principal.apiKey!.orgId, role: principal.apiKey!.role,
          scopes: principal.apiKey!.scopes, allowed_ips: principal.apiKey!.allowedIps,
        } }
        : {}),
      organizations: memberships.map((m) => ({
        organization_id: m.organizationId,
        name: m.name,
        role: m.role as Role,
        joined_at: iso(m.joinedAt),
      })),
    };
  }

  async listMembers(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<MemberView>> {
    const repo = new OrganizationRepository(this.#db);
    const after = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
    const [rows, total] = await Promise.all([
      repo.listMembers(ctx.orgId, query.page_size + 1, after),
      repo.countMembers(ctx.orgId),
    ]);
    return toPage(rows, query.page_size, (r) => ({ value: r.createdAt.toISOString(), id: r.userId }), toMemberView, total);
  }
}

