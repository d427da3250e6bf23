import { Anchor, Badge, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { Schemas } from '../../api/client.ts';
import { formatCredits, formatDateTime, formatDuration, formatTime, humanize } from '../../format.ts';

const STATUS_COLOR: Record<string, string> = { completed: 'green', failed: 'red', busy: 'orange', no_answer: 'orange', canceled: 'gray', in_progress: 'blue' };

export function CallsTable({ calls, searching }: { calls: Array<Schemas['CallSummary']>; searching: boolean }) {
  return (
    <Table.ScrollContainer minWidth={960}>
      <Table striped highlightOnHover aria-label="Calls" data-testid="calls-table">
        <Table.Thead>
          <Table.Tr>
            {/* The list is ordered by creation (newest first), so creation is the first column; a call may start later or never. */}
            <Table.Th>Created</Table.Th>
            <Table.Th>Agent</Table.Th>
            <Table.Th>From → To</Table.Th>
            <Table.Th>Direction</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Outcome</Table.Th>
            <Table.Th>Sentiment</Table.Th>
            <Table.Th ta="right">Duration</Table.Th>
            <Table.Th ta="right">Started</Table.Th>
            <Table.Th ta="right">Cost (credits)</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {calls.map((call) => (
            <Table.Tr key={call.call_sid}>
              <Table.Td>
                <Anchor component={Link} to={`/calls/${call.call_sid}`}>{formatDateTime(call.created_at)}</Anchor>
                {searching && call.snippet ? <Text size="xs" c="dimmed" lineClamp={2}>{call.snippet}</Text> : null}
              </Table.Td>
              <Table.Td>{call.agent_name ?? call.agent_id}</Table.Td>
              <Table.Td>{call.from_number ?? '—'} → {call.to_number}</Table.Td>
              <Table.Td>{call.call_type}</Table.Td>
              <Table.Td><Badge variant="dot" color={STATUS_COLOR[call.status] ?? 'gray'}>{humanize(call.status)}</Badge></Table.Td>
              <Table.Td data-testid="outcome"><Outcome call={call} /></Table.Td>
              <Table.Td data-testid="sentiment">{call.analysis_sentiment ?? '—'}</Table.Td>
              <Table.Td ta="right">{formatDuration(call.duration_seconds)}</Table.Td>
              <Table.Td ta="right">{call.start_time ? formatTime(call.start_time, call.created_at) : '—'}</Table.Td>
              <Table.Td ta="right">{formatCredits(call.total_cost)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** The post-call analysis's verdict: success or not, analysis failed, or a dash (no analysis, or success not judged). */
function Outcome({ call }: { call: Schemas['CallSummary'] }) {
  if (call.analysis_status === 'failed') return <Text size="sm" c="dimmed">analysis failed</Text>;
  if (call.analysis_success === null) return <>—</>;
  return <Badge variant="dot" color={call.analysis_success ? 'green' : 'red'}>{call.analysis_success ? 'success' : 'not a success'}</Badge>;
}
