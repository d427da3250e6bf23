import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client.ts';
import { useCredentials } from '../auth/useCredentials.ts';

export type Role = 'admin' | 'agent_manager' | 'user';
const RANK: Record<Role, number> = { user: 0, agent_manager: 1, admin: 2 };

/** The caller (GET /api/auth/me), the organization acted in and the caller's role there. */
export function useMe() {
  const { credentials, orgId } = useCredentials();
  const who = credentials.kind === 'session' ? credentials.email : credentials.kind === 'key' ? credentials.apiKey.slice(0, 12) : '';
  const query = useQuery({ queryKey: ['me', credentials.kind, who], queryFn: async () => (await unwrap(api.GET('/api/auth/me'))).data, staleTime: 60_000 });
  const me = query.data;
  const role: Role | undefined = me?.api_key ? me.api_key.role : me?.organizations.find((o) => o.organization_id === orgId)?.role;
  return { ...query, me, orgId, role };
}

/** Whether the role holds what an action needs (decisions.md §2): the server decides anyway; the console only stops offering. */
export function atLeast(role: Role | undefined, needed: Role): boolean {
  return role !== undefined && RANK[role] >= RANK[needed];
}
