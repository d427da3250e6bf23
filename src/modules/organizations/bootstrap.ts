import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.ts';
import { OrganizationRepository } from './repository.ts';
import { provisionOrganizationIn, type ProvisionedOrganization } from './service.ts';

const BOOTSTRAP_LOCK = 7314002;

/**
 * First run: on an empty database, create organization "Default" with an admin key and write it to
 * `DATA_DIR/bootstrap.json` (mode 0600). Returns null when the database already has organizations.
 * The transaction-scoped advisory lock keeps two servers starting together from both bootstrapping.
 */
export async function bootstrapIfEmpty(db: Db, dataDir: string): Promise<ProvisionedOrganization | null> {
  const created = await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`);
    if ((await new OrganizationRepository(tx).countOrganizations()) > 0) return null;
    return provisionOrganizationIn(tx, { name: 'Default' });
  });
  if (created) {
    fs.mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, 'bootstrap.json');
    fs.writeFileSync(file, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
    fs.chmodSync(file, 0o600); // writeFileSync keeps the mode of a file that already existed
  }
  return created;
}
