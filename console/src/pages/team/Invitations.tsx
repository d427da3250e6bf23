import { useState } from 'react';
import { Button, Group, Paper, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';
import { formatDateTime } from '../../format.ts';

/** Pending invitations; an admin invites by e-mail with a role, or cancels. */
export function Invitations({ admin }: { admin: boolean }) {
  const { orgId } = useCredentials();
  const client = useQueryClient();
  const key = [orgId, 'invitations'];
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('user');
  const invitations = useQuery({ queryKey: key, queryFn: async () => (await unwrap(api.GET('/api/auth/organizations/invitations'))).invitations });
  const invite = useMutation({
    mutationFn: () => unwrap(api.POST('/api/auth/organizations/invitations', { body: { email, role: role as 'user' } })),
    onSuccess: () => { setEmail(''); void client.invalidateQueries({ queryKey: key }); },
  });
  const cancel = useMutation({
    mutationFn: (inviteId: string) => unwrap(api.DELETE('/api/auth/organizations/invitations/{invite_id}', { params: { path: { invite_id: inviteId } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: key }),
  });
  const pending = (invitations.data ?? []).filter((i) => i.status === 'pending');
  return (
    <Stack>
      <Title order={2} size="h3">Invitations</Title>
      {admin ? (
        <Paper withBorder p="sm" component="form" onSubmit={(e: React.FormEvent) => { e.preventDefault(); invite.mutate(); }}>
          <Group align="flex-end">
            <TextInput label="E-mail address" type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} error={fieldError(invite.error, 'email')} w={280} />
            <Select label="Role" data={['admin', 'agent_manager', 'user']} value={role} allowDeselect={false} onChange={(v) => v && setRole(v)} w={170} />
            <Button type="submit" loading={invite.isPending}>Invite</Button>
          </Group>
          <ErrorAlert error={invite.error} title="The invitation was refused" />
        </Paper>
      ) : null}
      <ErrorAlert error={invitations.error ?? cancel.error} />
      {pending.length === 0 ? <Text c="dimmed">No pending invitation.</Text> : (
        <Table striped aria-label="Invitations" data-testid="invitations">
          <Table.Thead><Table.Tr><Table.Th>E-mail</Table.Th><Table.Th>Role</Table.Th><Table.Th>Expires</Table.Th><Table.Th /></Table.Tr></Table.Thead>
          <Table.Tbody>
            {pending.map((i) => (
              <Table.Tr key={i.invite_id}>
                <Table.Td>{i.email}</Table.Td><Table.Td>{i.role}</Table.Td><Table.Td>{formatDateTime(i.expires_at)}</Table.Td>
                <Table.Td>{admin ? <Button size="xs" variant="default" loading={cancel.isPending && cancel.variables === i.invite_id} onClick={() => cancel.mutate(i.invite_id)}>Cancel invitation</Button> : null}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
