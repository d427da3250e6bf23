/**
 * Roles and permissions as data, in one place (`spec/decisions.md` section 2).
 * Roles, highest first: admin > agent_manager > user.
 */
export const ROLES = ['admin', 'agent_manager', 'user'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { admin: 3, agent_manager: 2, user: 1 };

/** True when `role` is not above `ceiling` (a caller may grant or revoke up to its own role). */
export function roleAtMost(role: Role, ceiling: Role): boolean {
  return RANK[role] <= RANK[ceiling];
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

const ALL: readonly Role[] = ROLES;
const MANAGERS: readonly Role[] = ['admin', 'agent_manager'];
const ADMINS: readonly Role[] = ['admin'];

const READ_RESOURCES = [
  'agents', 'kb', 'integrations', 'phone_numbers', 'tools', 'calls', 'analytics', 'api_keys', 'invitations', 'billing', 'members',
] as const;
const MANAGED_RESOURCES = ['agents', 'kb', 'tools', 'phone_numbers', 'integrations'] as const;

function table(): Record<string, readonly Role[]> {
  const permissions: Record<string, readonly Role[]> = {};
  for (const resource of READ_RESOURCES) permissions[`${resource}:read`] = ALL;
  for (const resource of MANAGED_RESOURCES) {
    for (const action of ['create', 'update', 'delete']) permissions[`${resource}:${action}`] = MANAGERS;
  }
  permissions['api_keys:create'] = MANAGERS;
  permissions['api_keys:delete'] = MANAGERS;
  permissions['integrations:validate'] = ALL;
  permissions['invitations:create'] = ADMINS;
  permissions['invitations:delete'] = ADMINS;
  permissions['members:update'] = ADMINS;
  permissions['members:delete'] = ADMINS;
  permissions['billing:purchase'] = ADMINS;
  permissions['calls:write'] = MANAGERS;
  // extensions.md §2: placing calls is for admins and agent managers.
  permissions['calls:dial'] = MANAGERS;
  // extensions.md §11: talking to an agent in the browser (a preview call, paid from the credits).
  permissions['agents:preview'] = MANAGERS;
  // extensions.md §4 names no role for exports: whoever reads the calls may take them out (a permission of
  // its own, so an API key's scopes can withhold bulk exports while allowing reads).
  permissions['calls:export'] = ALL;
  // extensions.md §13: running post-call analysis again (it costs credits) is for admins and agent managers.
  permissions['calls:analyze'] = MANAGERS;
  // extensions.md §6 names no role for reading limits: every member sees the limits its requests meet.
  permissions['limits:read'] = ALL;
  // extensions.md §3: campaigns are read by every role and run by admins and agent managers.
  permissions['campaigns:read'] = ALL;
  for (const action of ['create', 'update', 'delete']) permissions[`campaigns:${action}`] = MANAGERS;
  permissions['data_settings:read'] = ADMINS;
  permissions['data_settings:update'] = ADMINS;
  permissions['audit_logs:read'] = ADMINS;
  // extensions.md §1: events and webhook endpoints are read by managers and changed by admins.
  permissions['events:read'] = MANAGERS;
  permissions['webhooks:read'] = MANAGERS;
  permissions['webhooks:write'] = ADMINS;
  permissions['billing:settings'] = ADMINS;
  // extensions.md §10: a call's runtime configuration (decrypted provider credentials) and its tool
  // calls are for the call's token alone; no role holds them.
  permissions['runtime:call'] = [];
  return permissions;
}

export const PERMISSIONS: Readonly<Record<string, readonly Role[]>> = Object.freeze(table());

export function hasPermission(role: Role, permission: string): boolean {
  const allowed = PERMISSIONS[permission];
  if (!allowed) throw new Error(`Unknown permission ${permission}`);
  return allowed.includes(role);
}
