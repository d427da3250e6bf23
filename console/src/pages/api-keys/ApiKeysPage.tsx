import { useState } from 'react';
import { Badge, Button, Group, Modal, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { formatDateTime } from '../../format.ts';
import { CreateKeyForm } from './CreateKeyForm.tsx';

/** The organization's API keys: a new key is shown once; revoking asks first. Managing keys needs agent_manager. */
export function ApiKeysPage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<Schemas['ApiKey'] | null>(null);
  const keys = useQuery({
    queryKey: [orgId, 'api-keys'],
    queryFn: async () => (await unwrap(api.GET('/api/api-keys', { params: { query: { page_size: 100 } } }))).data,
  });
  const revoke = useMutation({
    mutationFn: async (keyId: string) => unwrap(api.DELETE('/api/api-keys/{key_id}', { params: { path: { key_id: keyId } } })),
    onSuccess: () => { setRevoking(null); void client.invalidateQueries({ queryKey: [orgId, 'api-keys'] }); },
  });
  const manage = atLeast(role, 'agent_manager');

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>API keys</Title>
        {manage ? <Button onClick={() => setCreating(true)}>Create key</Button> : null}
      </Group>
      <ErrorAlert error={keys.error} />
      {keys.isPending ? <TableSkeleton label="Loading API keys" /> : keys.data?.length === 0 ? (
        <EmptyState title="No API keys yet" action={manage ? <Button onClick={() => setCreating(true)}>Create your first key</Button> : undefined}>
          A key lets your own code and the SDK use the API with a role you choose; it is shown once when it is created.
        </EmptyState>
      ) : (
      <Table.ScrollContainer minWidth={700}>
        <Table striped aria-label="API keys" data-testid="api-keys">
          <Table.Thead>
            <Table.Tr><Table.Th>Name</Table.Th><Table.Th>Key</Table.Th><Table.Th>Role</Table.Th><Table.Th>Status</Table.Th><Table.Th>Last used</Table.Th><Table.Th>Expires</Table.Th><Table.Th /></Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(keys.data ?? []).map((key) => (
              <Table.Tr key={key.key_id}>
                <Table.Td>{key.name}</Table.Td>
                <Table.Td><code>{key.prefix}…</code></Table.Td>
                <Table.Td>{key.role}</Table.Td>
                <Table.Td><Badge variant="dot" color={key.status === 'active' ? 'green' : 'gray'}>{key.status}</Badge></Table.Td>
                <Table.Td>{formatDateTime(key.last_used_at)}</Table.Td>
                <Table.Td>{formatDateTime(key.expires_at)}</Table.Td>
                <Table.Td>
                  {manage && key.status === 'active' && atLeast(role, key.role) ? (
                    <Button size="xs" variant="default" color="red" onClick={() => setRevoking(key)}>Revoke</Button>
                  ) : null}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      )}
      <Modal opened={creating} onClose={() => setCreating(false)} title="New API key">
        <CreateKeyForm maxRole={role} onDone={() => void client.invalidateQueries({ queryKey: [orgId, 'api-keys'] })} />
      </Modal>
      <Modal opened={revoking !== null} onClose={() => { setRevoking(null); revoke.reset(); }} title="Revoke this key?">
        <Stack>
          <Text>“{revoking?.name}” (<code>{revoking?.prefix}…</code>) stops working with the very next request. This cannot be undone.</Text>
          <ErrorAlert error={revoke.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setRevoking(null)}>Keep it</Button>
            <Button color="red" loading={revoke.isPending} onClick={() => revoking && revoke.mutate(revoking.key_id)}>Revoke key</Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
