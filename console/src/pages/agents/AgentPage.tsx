import { Anchor, Loader, Stack, Tabs, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { useUrlState } from '../../hooks/useUrlState.ts';
import { AgentForm } from './AgentForm.tsx';
import { AgentReadiness } from './AgentReadiness.tsx';
import { AnalysisTab } from './analysis/AnalysisTab.tsx';
import { TalkPanel } from './talk/TalkPanel.tsx';
import { VersionsTab } from './versions/VersionsTab.tsx';

const TABS = ['settings', 'versions', 'analysis'] as const;

/**
 * A new agent (`/agents/new`) or an existing one, editable by agent_manager and admin, read-only for
 * users. An existing agent has tabs (kept in the address, `?tab=`): its settings, its versions
 * (history, comparison, restore, traffic split) and its post-call analysis.
 */
export function AgentPage() {
  const { agentId = 'new' } = useParams();
  const { orgId } = useCredentials();
  const { role } = useMe();
  const { params, set } = useUrlState();
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
  const manage = atLeast(role, 'agent_manager');
  const tab = TABS.find((t) => t === params.get('tab')) ?? 'settings';
  const form = creating || agent.data ? <AgentForm key={agent.data?.agent_id ?? 'new'} agent={agent.data} readOnly={!manage} onSaved={saved} /> : null;
  return (
    <Stack maw={tab === 'settings' ? 900 : 1200}>
      <Anchor component={Link} to="/agents" size="sm">← All agents</Anchor>
      <Title order={1}>{creating ? 'New agent' : (agent.data?.agent_name ?? 'Agent')}</Title>
      <ErrorAlert error={agent.error} title="The agent could not be loaded" />
      {!creating && agent.isPending ? <Loader aria-label="Loading the agent" /> : null}
      {creating ? form : agent.data ? (
        <Tabs value={tab} onChange={(value) => set('tab', value === 'settings' ? null : value)} keepMounted={false}>
          <Tabs.List mb="md">
            <Tabs.Tab value="settings">Settings</Tabs.Tab>
            <Tabs.Tab value="versions">Versions (v{agent.data.version})</Tabs.Tab>
            <Tabs.Tab value="analysis">Analysis</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="settings">
            <Stack>
              <AgentReadiness agent={agent.data} />
              {/* Talking to the agent is a call paid from the credits: agents:preview, admin and agent_manager. */}
              {manage ? <TalkPanel agentId={agent.data.agent_id} /> : null}
              {form}
            </Stack>
          </Tabs.Panel>
          <Tabs.Panel value="versions"><VersionsTab agent={agent.data} manage={manage} /></Tabs.Panel>
          <Tabs.Panel value="analysis"><AnalysisTab key={agent.data.updated_at} agent={agent.data} readOnly={!manage} /></Tabs.Panel>
        </Tabs>
      ) : null}
    </Stack>
  );
}
