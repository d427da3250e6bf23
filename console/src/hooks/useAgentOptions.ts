import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client.ts';
import { useCredentials } from '../auth/useCredentials.ts';

/** The organization's agents for a picker (first 100): one cached query every form and filter shares. */
export function useAgentOptions() {
  const { orgId } = useCredentials();
  return useQuery({
    queryKey: [orgId, 'agents', 'options'],
    queryFn: async () => (await unwrap(api.GET('/api/agents', { params: { query: { page_size: 100 } } }))).data,
  });
}
