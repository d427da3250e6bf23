import { useState } from 'react';
import { Badge, Button, Group, Paper, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../../api/client.ts';
import { useCredentials } from '../../../auth/useCredentials.ts';
import { ErrorAlert } from '../../../components/ErrorAlert.tsx';
import { TableSkeleton } from '../../../components/Skeletons.tsx';
import { formatDateTime } from '../../../format.ts';
import { useMe } from '../../../hooks/useMe.ts';
import { RestoreDialog } from './RestoreDialog.tsx';
import { TrafficSplit } from './TrafficSplit.tsx';
import { VersionDiff } from './VersionDiff.tsx';
import { changedFields, useAgentVersions, type AgentVersion } from './versions.ts';

/**
 * The agent's versions (extensions.md §12): who saved each and what it changed, a side-by-side
 * comparison of any two, a restore (a new version equal to an old one), and the traffic split.
 * Restoring and splitting need agent_manager (`manage`).
 */
export function VersionsTab({ agent, manage }: { agent: Schemas['Agent']; manage: boolean }) {
  const versions = useAgentVersions(agent.agent_id);
  const authors = useAuthors();
  const [compared, setCompared] = useState<number | null>(null);
  const [restoring, setRestoring] = useState<AgentVersion | null>(null);
  const list = versions.data ?? [];
  const chosen = compared ?? list[1]?.version ?? agent.version;
  return (
    <Stack>
      <ErrorAlert error={versions.error} title="The versions could not be loaded" />
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="xs">History</Title>
        <Text size="sm" c="dimmed" mb="sm">Every save makes a new version; a call keeps the version it started with.</Text>
        {versions.isPending ? <TableSkeleton label="Loading the versions" rows={3} /> : (
          <Table.ScrollContainer minWidth={640}>
            <Table striped aria-label="Versions" data-testid="versions">
              <Table.Thead>
                <Table.Tr><Table.Th>Version</Table.Th><Table.Th>Author</Table.Th><Table.Th>Saved</Table.Th><Table.Th>What changed</Table.Th><Table.Th><VisuallyHidden>Actions</VisuallyHidden></Table.Th></Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((v, i) => {
                  const changed = i + 1 < list.length ? changedFields(list[i + 1]!.config, v.config) : null;
                  return (
                    <Table.Tr key={v.version} data-version={v.version}>
                      <Table.Td>
                        <Group gap={6} wrap="nowrap">v{v.version}{v.version === agent.version ? <Badge size="sm" variant="light">current</Badge> : null}</Group>
                      </Table.Td>
                      <Table.Td>{v.created_by ? authors.get(v.created_by) ?? v.created_by : '—'}</Table.Td>
                      <Table.Td>{formatDateTime(v.created_at)}</Table.Td>
                      <Table.Td data-testid="changed">{changed === null ? (v.version === 1 ? 'Created' : 'Earlier versions not shown') : changed.length ? changed.join(', ') : 'Nothing (a restore of the same configuration)'}</Table.Td>
                      <Table.Td>
                        <Group gap="xs" wrap="nowrap" justify="flex-end">
                          <Button size="xs" variant="default" onClick={() => setCompared(v.version)} aria-label={`Compare version ${v.version}`}>Compare</Button>
                          {manage && v.version !== agent.version ? (
                            <Button size="xs" variant="light" onClick={() => setRestoring(v)} aria-label={`Restore version ${v.version}`}>Restore</Button>
                          ) : null}
                        </Group>
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Paper>
      {list.length > 0 ? <VersionDiff agentId={agent.agent_id} versions={list} current={agent.version} chosen={chosen} onChoose={setCompared} /> : null}
      {/* The editor starts again from the saved split when that changes (a restore clears it), never while one types. */}
      {list.length > 0 ? <TrafficSplit key={JSON.stringify(agent.traffic)} agent={agent} versions={list} manage={manage} /> : null}
      <RestoreDialog agent={agent} version={restoring} onClose={() => setRestoring(null)} />
    </Stack>
  );
}

/** Who made the versions: the members' e-mails by user id (the member list; ids stay shown where it is not readable). */
function useAuthors(): Map<string, string> {
  const { orgId } = useCredentials();
  const { me } = useMe();
  const members = useQuery({
    queryKey: [orgId, 'members'], retry: false,
    queryFn: async () => (await unwrap(api.GET('/api/auth/organizations/members', { params: { query: { page_size: 100 } } }))).data,
  });
  const names = new Map((members.data ?? []).map((m) => [m.user_id, m.email ?? m.user_id]));
  if (me?.user_id) names.set(me.user_id, `${me.email ?? me.user_id} (you)`);
  return names;
}
