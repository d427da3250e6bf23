/**
 * What authentication needs from the modules that own keys and users. `core` defines these ports and
 * the api-keys and organizations modules implement them, so `core` imports no module.
 */

/** What authentication needs of a key, looked up by the hash of the presented secret. */
export interface KeyCredential {
  id: string;
  clientId: string;
  userId: string;
  /** The name it was issued with (it cannot be changed): how the audit log labels it. */
  name: string;
  role: string;
  status: string;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** Permissions the key is narrowed to; empty = its role's. */
  scopes: string[];
  /** Networks (CIDR text) the key is accepted from; empty = anywhere. */
  allowedIps: string[];
}

export interface ApiKeyLookup {
  /** The key whose secret hashes to `keyHash` (globally unique), whatever its status. */
  findByHash(keyHash: string): Promise<KeyCredential | undefined>;
  /** Records use to the minute; a racing second write is a no-op. */
  recordUse(keyId: string): Promise<void>;
}

export interface SignedInUser {
  id: string;
  email: string | null;
}

export interface UserDirectory {
  /** The user a verified token names (created on first sign-in). */
  userForIdentity(identity: { subject: string; email: string | null }): Promise<SignedInUser>;
  /** The user's role in the organization, or undefined when not a member. */
  membershipRole(orgId: string, userId: string): Promise<string | undefined>;
}
