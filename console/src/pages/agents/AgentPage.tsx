import { Anchor, Loader, Stack, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { AgentForm } from './AgentForm.tsx';
import { AgentReadiness } from './AgentReadiness.tsx';
import { TalkPanel } from './talk/TalkPanel.tsx';

/** A new agent (`/agents/new`) or an existing one, editable by agent_manager and admin, read-only for users. */
export function AgentPage() {
  const { agentId = 'new' } = useParams();
  const { orgId } = useCredentials();
  const { role } = useMe();
  const navigate = useNavigate();
  const client = useQueryClient();
  const creating = agentId === 'new';
  const agent = useQuery({
    queryKey: [orgId, 'agent', agentId],
    enabled: !creating,
    queryFn: async () => (await unwrap(api.GET('/api/agents/{agent_id}', { params: { path: { agent_id: agentId } } }))).data,
  });
  const saved = (id: string) => {
    void client.invalidateQueries({ queryKey: [orgId, 'agents'] });
    void client.invalidateQueries({ queryKey: [orgId, 'agent', id] });
    if (creating) navigate(`/agents/${id}`, { replace: true });
  };
  return (
    <Stack maw={900}>
      <Anchor component={Link} to="/agents" size="sm">← All agents</Anchor>
      <Title order={1}>{creating ? 'New agent' : (agent.data?.agent_name ?? 'Agent')}</Title>
      <ErrorAlert error={agent.error} title="The agent could not be loaded" />
      {agent.data ? <AgentReadiness agent={agent.data} /> : null}
      {/* Talking to the agent is a call paid from the credits: agents:preview, admin and agent_manager. */}
      {agent.data && atLeast(role, 'agent_manager') ? <TalkPanel agentId={agent.data.agent_id} /> : null}
      {!creating && agent.isPending ? <Loader aria-label="Loading the agent" /> : null}
      {creating || agent.data ? <AgentForm key={agent.data?.updated_at ?? 'new'} agent={agent.data} readOnly={!atLeast(role, 'agent_manager')} onSaved={saved} /> : null}
    </Stack>
  );
}
