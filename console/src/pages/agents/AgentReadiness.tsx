import { Alert, Anchor, List } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { readinessProblems } from './voiceProviders.ts';

/**
 * Whether the agent can take calls: a call ends `error` when an integration for one of its providers
 * is missing or refused (extensions.md §10), so say so here, before the first call fails.
 */
export function AgentReadiness({ agent }: { agent: Schemas['Agent'] }) {
  const { orgId } = useCredentials();
  const integrations = useQuery({ queryKey: [orgId, 'integrations'], queryFn: async () => (await unwrap(api.GET('/api/integrations', { params: { query: { page_size: 100 } } }))).data });
  if (!integrations.data) return null;
  const problems = readinessProblems(agent, integrations.data);
  if (problems.length === 0) {
    return <Alert color="green" role="status" data-testid="readiness" title="Ready to take calls">Every provider it uses has an active integration.</Alert>;
  }
  return (
    <Alert color="orange" role="status" data-testid="readiness" title="This agent cannot take calls yet">
      <List size="sm">{problems.map((p) => <List.Item key={p}>{p}</List.Item>)}</List>
      <Anchor component={Link} to="/integrations" size="sm" c="inherit" underline="always">Go to Integrations</Anchor>
    </Alert>
  );
}
