import { useState } from 'react';
import { Button, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ConfirmDelete } from '../../components/ConfirmDelete.tsx';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { formatDateTime } from '../../format.ts';
import { Invitations } from './Invitations.tsx';

const ROLES = ['admin', 'agent_manager', 'user'];

/** Members (change a role, remove; the API keeps the last admin) and invitations. Managing them needs admin. */
export function TeamPage() {
  const { orgId } = useCredentials();
  const { role, me } = useMe();
  const client = useQueryClient();
  const [removing, setRemoving] = useState<Schemas['Member'] | null>(null);
  const key = [orgId, 'members'];
  const members = useQuery({ queryKey: key, queryFn: async () => (await unwrap(api.GET('/api/auth/organizations/members', { params: { query: { page_size: 100 } } }))).data });
  const change = useMutation({
    mutationFn: ({ userId, newRole }: { userId: string; newRole: string }) =>
      unwrap(api.PATCH('/api/auth/organizations/members/{user_id}', { params: { path: { user_id: userId } }, body: { role: newRole as 'user' } })),
    onSettled: () => void client.invalidateQueries({ queryKey: key }),
  });
  const admin = atLeast(role, 'admin');
  return (
    <Stack>
      <Title order={1}>Team</Title>
      <ErrorAlert error={members.error ?? change.error} title="The change was refused" />
      {members.isPending ? <TableSkeleton label="Loading members" rows={3} /> : null}
      {members.data && members.data.length <= 1 ? (
        <EmptyState title="Only you so far">
          {admin ? 'Invite your team below by e-mail, each with the role they need: admins manage everything, agent managers build agents, users follow calls.' : 'An admin of the organization can invite your colleagues.'}
        </EmptyState>
      ) : null}
      {members.isPending ? null : (
      <Table.ScrollContainer minWidth={600}>
        <Table striped aria-label="Members" data-testid="members">
          <Table.Thead><Table.Tr><Table.Th>Member</Table.Th><Table.Th>Role</Table.Th><Table.Th>Joined</Table.Th><Table.Th /></Table.Tr></Table.Thead>
          <Table.Tbody>
            {(members.data ?? []).map((m) => (
              <Table.Tr key={m.user_id}>
                <Table.Td>{m.email ?? m.user_id}{m.user_id === me?.user_id ? <Text span size="xs" c="dimmed"> (you)</Text> : null}</Table.Td>
                <Table.Td>
                  {admin ? (
                    <Select aria-label={`Role of ${m.email ?? m.user_id}`} data={ROLES} value={m.role} allowDeselect={false} w={170}
                      onChange={(newRole) => newRole && newRole !== m.role && change.mutate({ userId: m.user_id, newRole })} />
                  ) : m.role}
                </Table.Td>
                <Table.Td>{formatDateTime(m.joined_at)}</Table.Td>
                <Table.Td>{admin ? <Button size="xs" variant="default" onClick={() => setRemoving(m)}>Remove</Button> : null}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      )}
      <Invitations admin={admin} />
      <ConfirmDelete what={removing?.email ?? removing?.user_id} action="Remove" opened={removing !== null} onClose={() => setRemoving(null)}
        onDelete={() => unwrap(api.DELETE('/api/auth/organizations/members/{user_id}', { params: { path: { user_id: removing!.user_id } } }))}
        onDeleted={() => void client.invalidateQueries({ queryKey: key })} />
    </Stack>
  );
}
