import { useState } from 'react';
import { Button, Group, Modal, Select, Stack, Table, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { useAgentOptions } from '../../hooks/useAgentOptions.ts';
import { ConfirmDelete } from '../../components/ConfirmDelete.tsx';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { ImportNumberForm } from './ImportNumberForm.tsx';

/** Numbers of the organization (carrier_a or SIP): import, assign to an agent or unassign, delete. Changes need agent_manager. */
export function PhoneNumbersPage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  const [importing, setImporting] = useState(false);
  const [deleting, setDeleting] = useState<Schemas['PhoneNumber'] | null>(null);
  const key = [orgId, 'phone-numbers'];
  const numbers = useQuery({ queryKey: key, queryFn: async () => (await unwrap(api.GET('/api/phone-numbers', { params: { query: { page_size: 100 } } }))).data });
  const agents = useAgentOptions();
  const assign = useMutation({
    mutationFn: ({ id, agentId }: { id: string; agentId: string | null }) =>
      unwrap(api.PATCH('/api/phone-numbers/{phone_number_id}', { params: { path: { phone_number_id: id } }, body: { agent_id: agentId } })),
    onSettled: () => void client.invalidateQueries({ queryKey: key }),
  });
  const manage = atLeast(role, 'agent_manager');
  const agentOptions = (agents.data ?? []).map((a) => ({ value: a.agent_id, label: a.agent_name }));
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Phone numbers</Title>
        {manage ? <Button onClick={() => setImporting(true)}>Import a number</Button> : null}
      </Group>
      <ErrorAlert error={numbers.error ?? assign.error} />
      {numbers.isPending ? <TableSkeleton label="Loading phone numbers" /> : numbers.data?.length === 0 ? (
        <EmptyState title="No phone numbers yet" action={manage ? <Button onClick={() => setImporting(true)}>Import your first number</Button> : undefined}>
          Import a number from your carrier account or a SIP trunk, then choose the agent that answers it.
          {manage ? '' : ' An agent manager or admin of the organization can import one.'}
        </EmptyState>
      ) : (
      <Table.ScrollContainer minWidth={700}>
        <Table striped aria-label="Phone numbers" data-testid="phone-numbers">
          <Table.Thead><Table.Tr><Table.Th>Number</Table.Th><Table.Th>Provider</Table.Th><Table.Th>Directions</Table.Th><Table.Th>Agent</Table.Th><Table.Th /></Table.Tr></Table.Thead>
          <Table.Tbody>
            {(numbers.data ?? []).map((n) => (
              <Table.Tr key={n.phone_number_id}>
                <Table.Td>{n.phone_number}</Table.Td>
                <Table.Td>{n.provider === 'sip' ? `SIP (${n.sip?.trunk_name ?? ''})` : 'carrier_a'}</Table.Td>
                <Table.Td>{[n.supports_inbound && 'inbound', n.supports_outbound && 'outbound'].filter(Boolean).join(', ') || '—'}</Table.Td>
                <Table.Td>
                  {manage ? (
                    <Select aria-label={`Agent answering ${n.phone_number}`} placeholder="Unassigned" clearable data={agentOptions} value={n.agent_id} w={220}
                      onChange={(agentId) => assign.mutate({ id: n.phone_number_id, agentId })} />
                  ) : (agentOptions.find((a) => a.value === n.agent_id)?.label ?? 'Unassigned')}
                </Table.Td>
                <Table.Td>{manage ? <Button size="xs" variant="default" onClick={() => setDeleting(n)}>Delete</Button> : null}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      )}
      <Modal opened={importing} onClose={() => setImporting(false)} title="Import a phone number" size="lg">
        <ImportNumberForm onDone={() => { setImporting(false); void client.invalidateQueries({ queryKey: key }); }} />
      </Modal>
      <ConfirmDelete what={deleting?.phone_number} opened={deleting !== null} onClose={() => setDeleting(null)}
        onDelete={() => unwrap(api.DELETE('/api/phone-numbers/{phone_number_id}', { params: { path: { phone_number_id: deleting!.phone_number_id } } }))}
        onDeleted={() => void client.invalidateQueries({ queryKey: key })} />
    </Stack>
  );
}
