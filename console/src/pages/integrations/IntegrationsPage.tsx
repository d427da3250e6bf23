import { useState } from 'react';
import { Alert, Badge, Button, Group, Paper, PasswordInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ConfirmDelete } from '../../components/ConfirmDelete.tsx';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { fieldError } from '../../components/apiErrors.ts';
import { atLeast, useMe } from '../../hooks/useMe.ts';

/** Telephony integrations: add with credentials (never shown again), Validate with the provider (any role), delete. */
export function IntegrationsPage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  const key = [orgId, 'integrations'];
  const [deleting, setDeleting] = useState<Schemas['IntegrationSummary'] | null>(null);
  const list = useQuery({ queryKey: key, queryFn: async () => (await unwrap(api.GET('/api/integrations', { params: { query: { page_size: 100 } } }))).data });
  const validate = useMutation({
    mutationFn: async (id: string) => unwrap(api.POST('/api/integrations/{integration_id}/validate', { params: { path: { integration_id: id } }, headers: { 'content-type': 'application/json' } })),
    onSettled: () => void client.invalidateQueries({ queryKey: key }),
  });
  const manage = atLeast(role, 'agent_manager');
  return (
    <Stack>
      <Title order={1}>Integrations</Title>
      {manage ? <AddIntegration onAdded={(id) => { void client.invalidateQueries({ queryKey: key }); validate.mutate(id); }} /> : null}
      <ErrorAlert error={list.error} />
      {validate.isPending ? <Text role="status">Checking the credentials with the provider…</Text> : null}
      {validate.data ? (
        <Alert color={validate.data.data.status === 'active' ? 'green' : 'red'} role="status" data-testid="validation-result"
          title={`“${validate.data.data.name}”: ${validate.data.data.status === 'active' ? 'the provider accepted the credentials' : 'the provider refused the credentials'}`}>
          {validate.data.message ?? `Validated: ${validate.data.data.status}`}
        </Alert>
      ) : null}
      <ErrorAlert error={validate.error} title="Validation failed" />
      {list.isPending ? <TableSkeleton label="Loading integrations" /> : list.data?.length === 0 ? (
        <EmptyState title="No integrations yet">
          An integration holds your provider account's credentials{manage ? ': add one above, and it is checked with the provider as soon as it is saved' : ''}.
          Phone numbers are imported through it.{manage ? '' : ' An agent manager or admin of the organization can add one.'}
        </EmptyState>
      ) : (
      <Table striped aria-label="Integrations" data-testid="integrations">
        <Table.Thead><Table.Tr><Table.Th>Name</Table.Th><Table.Th>Provider</Table.Th><Table.Th>Status</Table.Th><Table.Th /></Table.Tr></Table.Thead>
        <Table.Tbody>
          {(list.data ?? []).map((i) => (
            <Table.Tr key={i.integration_id}>
              <Table.Td>{i.name}</Table.Td><Table.Td>{i.provider}</Table.Td>
              <Table.Td><Badge variant="dot" color={i.status === 'active' ? 'green' : 'red'}>{i.status}</Badge></Table.Td>
              <Table.Td>
                <Group gap="xs">
                  <Button size="xs" variant="default" loading={validate.isPending && validate.variables === i.integration_id} onClick={() => validate.mutate(i.integration_id)}>Validate</Button>
                  {manage ? <Button size="xs" variant="default" onClick={() => setDeleting(i)}>Delete</Button> : null}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      )}
      <ConfirmDelete what={deleting?.name} opened={deleting !== null} onClose={() => setDeleting(null)}
        onDelete={() => unwrap(api.DELETE('/api/integrations/{integration_id}', { params: { path: { integration_id: deleting!.integration_id } } }))}
        onDeleted={() => void client.invalidateQueries({ queryKey: key })} />
    </Stack>
  );
}

/** Adds a carrier integration; the page validates it with the provider right after it is saved. */
function AddIntegration({ onAdded }: { onAdded: (integrationId: string) => void }) {
  const [name, setName] = useState('');
  const [sid, setSid] = useState('');
  const [token, setToken] = useState('');
  const add = useMutation({
    mutationFn: () => unwrap(api.POST('/api/integrations', { body: { name, provider: 'carrier_a', credentials: { account_sid: sid, auth_token: token } } })),
    onSuccess: (saved) => { setName(''); setSid(''); setToken(''); onAdded(saved.data.integration_id); },
  });
  return (
    <Paper withBorder p="sm" component="form" onSubmit={(e: React.FormEvent) => { e.preventDefault(); add.mutate(); }}>
      <Group align="flex-end">
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(add.error, 'name')} />
        <TextInput label="carrier_a account SID" required value={sid} onChange={(e) => setSid(e.currentTarget.value)} error={fieldError(add.error, 'credentials')} />
        <PasswordInput label="Auth token" required value={token} onChange={(e) => setToken(e.currentTarget.value)} w={220} />
        <Button type="submit" loading={add.isPending}>Add integration</Button>
      </Group>
      <ErrorAlert error={add.error} title="The integration was not added" />
    </Paper>
  );
}
