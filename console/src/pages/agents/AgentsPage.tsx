import { useState } from 'react';
import { Anchor, Button, Group, Stack, Table, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ConfirmDelete } from '../../components/ConfirmDelete.tsx';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { formatDateTime } from '../../format.ts';

/** The organization's agents; creating, editing and deleting need agent_manager. */
export function AgentsPage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  const [deleting, setDeleting] = useState<Schemas['AgentSummary'] | null>(null);
  const agents = useQuery({ queryKey: [orgId, 'agents'], queryFn: async () => (await unwrap(api.GET('/api/agents', { params: { query: { page_size: 100 } } }))).data });
  const manage = atLeast(role, 'agent_manager');
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Agents</Title>
        {manage ? <Button component={Link} to="/agents/new">New agent</Button> : null}
      </Group>
      <ErrorAlert error={agents.error} />
      {agents.isPending ? <TableSkeleton label="Loading agents" /> : agents.data?.length === 0 ? (
        <EmptyState title="No agent yet" action={manage ? <Button component={Link} to="/agents/new">Create your first agent</Button> : undefined}>
          An agent answers and places calls: its prompt, its language, the voices and models it uses, and the tools and documents it may consult.
          {manage ? '' : ' An agent manager or admin of the organization can create one.'}
        </EmptyState>
      ) : (
        <Table.ScrollContainer minWidth={700}>
          <Table striped aria-label="Agents" data-testid="agents">
            <Table.Thead>
              <Table.Tr><Table.Th>Name</Table.Th><Table.Th>Language</Table.Th><Table.Th>Voice stack</Table.Th><Table.Th>Recording</Table.Th><Table.Th>Updated</Table.Th><Table.Th /></Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(agents.data ?? []).map((a) => (
                <Table.Tr key={a.agent_id}>
                  <Table.Td><Anchor component={Link} to={`/agents/${a.agent_id}`}>{a.agent_name}</Anchor></Table.Td>
                  <Table.Td>{a.language}</Table.Td>
                  <Table.Td>{a.stt_provider} · {a.llm_provider} {a.llm_model} · {a.tts_provider}</Table.Td>
                  <Table.Td>{a.recording_enabled ? 'on' : 'off'}</Table.Td>
                  <Table.Td>{formatDateTime(a.updated_at)}</Table.Td>
                  <Table.Td>{manage ? <Button size="xs" variant="default" onClick={() => setDeleting(a)}>Delete</Button> : null}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <ConfirmDelete what={deleting?.agent_name} opened={deleting !== null} onClose={() => setDeleting(null)}
        onDelete={() => unwrap(api.DELETE('/api/agents/{agent_id}', { params: { path: { agent_id: deleting!.agent_id } } }))}
        onDeleted={() => void client.invalidateQueries({ queryKey: [orgId, 'agents'] })}
        explain409={<>Phone numbers still route calls to this agent. Assign them to another agent or unassign them on the <Anchor component={Link} to="/phone-numbers">Phone numbers</Anchor> page, then delete it.</>} />
    </Stack>
  );
}
