/** The roles of ../shared/spec/decisions.md §2, highest first: typed out here, not imported from the code under test. */
export const ROLES = ['admin', 'agent_manager', 'user'] as const;
export type Role = (typeof ROLES)[number];

/**
 * The role table of ../shared/spec/decisions.md §2, typed out here by hand (not computed from
 * src/core/permissions.ts), so the auth matrix checks the code against the contract. Members are
 * managed by admins only (invitations are admin-only in the contract, and so are the members they add).
 */
export const PERMISSION_TABLE: Readonly<Record<string, readonly Role[]>> = {
  'agents:read': ['admin', 'agent_manager', 'user'],
  'kb:read': ['admin', 'agent_manager', 'user'],
  'integrations:read': ['admin', 'agent_manager', 'user'],
  'phone_numbers:read': ['admin', 'agent_manager', 'user'],
  'tools:read': ['admin', 'agent_manager', 'user'],
  'calls:read': ['admin', 'agent_manager', 'user'],
  'analytics:read': ['admin', 'agent_manager', 'user'],
  'api_keys:read': ['admin', 'agent_manager', 'user'],
  'invitations:read': ['admin', 'agent_manager', 'user'],
  'billing:read': ['admin', 'agent_manager', 'user'],
  'members:read': ['admin', 'agent_manager', 'user'],

  'agents:create': ['admin', 'agent_manager'],
  'agents:update': ['admin', 'agent_manager'],
  'agents:delete': ['admin', 'agent_manager'],
  'kb:create': ['admin', 'agent_manager'],
  'kb:update': ['admin', 'agent_manager'],
  'kb:delete': ['admin', 'agent_manager'],
  'tools:create': ['admin', 'agent_manager'],
  'tools:update': ['admin', 'agent_manager'],
  'tools:delete': ['admin', 'agent_manager'],
  'phone_numbers:create': ['admin', 'agent_manager'],
  'phone_numbers:update': ['admin', 'agent_manager'],
  'phone_numbers:delete': ['admin', 'agent_manager'],
  'integrations:create': ['admin', 'agent_manager'],
  'integrations:update': ['admin', 'agent_manager'],
  'integrations:delete': ['admin', 'agent_manager'],
  'api_keys:create': ['admin', 'agent_manager'],
  'api_keys:delete': ['admin', 'agent_manager'],
  'calls:write': ['admin', 'agent_manager'],
  // extensions.md §2: "permission `calls:dial`: admin, agent_manager".
  'calls:dial': ['admin', 'agent_manager'],
  // extensions.md §11: "permission `agents:preview`: admin, agent_manager".
  'agents:preview': ['admin', 'agent_manager'],
  // extensions.md §4 names no role for exports; the calls they contain are every role's to read (calls:read).
  'calls:export': ['admin', 'agent_manager', 'user'],
  // extensions.md §13.
  'calls:analyze': ['admin', 'agent_manager'],
  'events:read': ['admin', 'agent_manager'],
  'webhooks:read': ['admin', 'agent_manager'],

  'integrations:validate': ['admin', 'agent_manager', 'user'],
  // extensions.md §10: "the one route that returns decrypted provider credentials, and only to the call's token".
  'runtime:call': [],

  'invitations:create': ['admin'],
  'invitations:delete': ['admin'],
  'members:update': ['admin'],
  'members:delete': ['admin'],
  'billing:purchase': ['admin'],
  // extensions.md §6 names no role for GET /api/limits: every member reads the limits its requests meet.
  'limits:read': ['admin', 'agent_manager', 'user'],
  // extensions.md §3: campaigns:read is every role's; the other campaign actions (create, update with
  // contacts and start/pause/resume/cancel, delete) are admin and agent_manager.
  'campaigns:read': ['admin', 'agent_manager', 'user'],
  'campaigns:create': ['admin', 'agent_manager'],
  'campaigns:update': ['admin', 'agent_manager'],
  'campaigns:delete': ['admin', 'agent_manager'],
  // extensions.md §7: the data settings are the admin's.
  'data_settings:read': ['admin'],
  'data_settings:update': ['admin'],
  // extensions.md §6: the audit log is the admin's.
  'audit_logs:read': ['admin'],
  'webhooks:write': ['admin'],
  'billing:settings': ['admin'],
};
