import { useState } from 'react';
import { Code, Group, Loader, Paper, Select, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.ts';
import { useCredentials } from '../../../auth/useCredentials.ts';
import { ErrorAlert } from '../../../components/ErrorAlert.tsx';
import { showValue, type AgentVersion } from './versions.ts';

/**
 * Two versions side by side, the fields that differ only (GET …/versions/{version}/diff?against=N,
 * whose `from` is the value in `against`): by default the chosen version against the current one.
 */
export function VersionDiff({ agentId, versions, current, chosen, onChoose }: {
  agentId: string; versions: AgentVersion[]; current: number; chosen: number; onChoose: (version: number) => void;
}) {
  const { orgId } = useCredentials();
  const [against, setAgainst] = useState<number | null>(null);
  const base = against ?? current;
  const diff = useQuery({
    queryKey: [orgId, 'agent', agentId, 'diff', chosen, base],
    queryFn: async () => (await unwrap(api.GET('/api/agents/{agent_id}/versions/{version}/diff', {
      params: { path: { agent_id: agentId, version: String(chosen) }, query: { against: base } },
    }))).data,
  });
  const options = versions.map((v) => ({ value: String(v.version), label: `Version ${v.version}${v.version === current ? ' (current)' : ''}` }));
  const changes = diff.data?.changes ?? [];
  return (
    <Paper withBorder p="md" data-testid="version-diff">
      <Title order={2} size="h4" mb="sm">Compare versions</Title>
      <Group align="flex-end" mb="sm">
        <Select label="Version" data={options} value={String(chosen)} allowDeselect={false} onChange={(v) => v && onChoose(Number(v))} w={200} />
        <Select label="Compared with" data={options} value={String(base)} allowDeselect={false} onChange={(v) => v && setAgainst(Number(v))} w={200} />
      </Group>
      <ErrorAlert error={diff.error} title="The versions could not be compared" />
      {diff.isPending ? <Loader size="sm" aria-label="Comparing the versions" /> : chosen === base || changes.length === 0 ? (
        <Text size="sm" c="dimmed">{chosen === base ? 'Choose two different versions.' : `Versions ${chosen} and ${base} have the same configuration.`}</Text>
      ) : (
        <Table.ScrollContainer minWidth={600}>
          <Table aria-label={`Version ${base} and version ${chosen}, the fields that differ`} data-testid="diff-table" style={{ tableLayout: 'fixed' }}>
            <Table.Thead>
              <Table.Tr><Table.Th w="20%">Field</Table.Th><Table.Th>Version {base}{base === current ? ' (current)' : ''}</Table.Th><Table.Th>Version {chosen}{chosen === current ? ' (current)' : ''}</Table.Th></Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {changes.map((change) => (
                <Table.Tr key={change.field} data-field={change.field}>
                  <Table.Th scope="row"><code>{change.field}</code></Table.Th>
                  <Table.Td data-side="from"><Value value={change.from} /></Table.Td>
                  <Table.Td data-side="to"><Value value={change.to} /></Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Paper>
  );
}

function Value({ value }: { value: unknown }) {
  const text = showValue(value);
  return typeof value === 'object' && value !== null ? <Code block>{text}</Code> : <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{text}</Text>;
}
