import { useState } from 'react';
import { Button, Code, Group, Modal, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ConfirmDelete } from '../../components/ConfirmDelete.tsx';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { ToolForm } from './ToolForm.tsx';

/** Webhook tools the agents may call: create, edit, delete (agent_manager), and Test, showing status, latency and body. */
export function ToolsPage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  const key = [orgId, 'tools'];
  const [editing, setEditing] = useState<Schemas['Tool'] | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Schemas['Tool'] | null>(null);
  const tools = useQuery({ queryKey: key, queryFn: async () => (await unwrap(api.GET('/api/tools', { params: { query: { page_size: 100 } } }))).data });
  const test = useMutation({
    mutationFn: async (id: string) => (await unwrap(api.POST('/api/tools/{tool_id}/test', { params: { path: { tool_id: id } }, body: {} }))).data,
  });
  const manage = atLeast(role, 'agent_manager');
  const refresh = () => void client.invalidateQueries({ queryKey: key });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Tools</Title>
        {manage ? <Button onClick={() => setEditing('new')}>New tool</Button> : null}
      </Group>
      <ErrorAlert error={tools.error ?? test.error} />
      {tools.isPending ? <TableSkeleton label="Loading tools" /> : tools.data?.length === 0 ? (
        <EmptyState title="No tools yet" action={manage ? <Button onClick={() => setEditing('new')}>Create your first tool</Button> : undefined}>
          A tool is a webhook your agents call during a conversation: to book an appointment, look up an order, or hand the call over.
          {manage ? '' : ' An agent manager or admin of the organization can create one.'}
        </EmptyState>
      ) : (
      <Table.ScrollContainer minWidth={700}>
        <Table striped aria-label="Tools" data-testid="tools">
          <Table.Thead><Table.Tr><Table.Th>Name</Table.Th><Table.Th>Webhook</Table.Th><Table.Th /></Table.Tr></Table.Thead>
          <Table.Tbody>
            {(tools.data ?? []).map((t) => (
              <Table.Tr key={t.tool_id}>
                <Table.Td><Text fw={600} size="sm">{t.tool_name}</Text><Text size="xs" c="dimmed">{t.tool_description}</Text></Table.Td>
                <Table.Td><code>{t.http_method} {t.webhook_url}</code></Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button size="xs" variant="default" loading={test.isPending && test.variables === t.tool_id} onClick={() => test.mutate(t.tool_id)}>Test</Button>
                    {manage ? <Button size="xs" variant="default" onClick={() => setEditing(t)}>Edit</Button> : null}
                    {manage ? <Button size="xs" variant="default" onClick={() => setDeleting(t)}>Delete</Button> : null}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      )}
      {test.data ? (
        <Stack gap="xs" data-testid="tool-test-result">
          <Title order={2} size="h4">Test of {test.data.request.method} {test.data.request.url}</Title>
          <Text role="status">{test.data.ok ? 'Answered' : 'Failed'}: status {test.data.status_code ?? '—'}, {Math.round(test.data.latency_ms)} ms{test.data.error ? ` — ${test.data.error}` : ''}</Text>
          {test.data.body ? <Code block>{test.data.body}{test.data.truncated ? '\n…' : ''}</Code> : null}
        </Stack>
      ) : null}
      <Modal opened={editing !== null} onClose={() => setEditing(null)} title={editing === 'new' ? 'New tool' : 'Edit tool'} size="lg">
        {editing ? <ToolForm tool={editing === 'new' ? undefined : editing} onSaved={() => { setEditing(null); refresh(); }} /> : null}
      </Modal>
      <ConfirmDelete what={deleting?.tool_name} opened={deleting !== null} onClose={() => setDeleting(null)} onDeleted={refresh}
        onDelete={() => unwrap(api.DELETE('/api/tools/{tool_id}', { params: { path: { tool_id: deleting!.tool_id } } }))} />
    </Stack>
  );
}
