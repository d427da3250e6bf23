import { Alert, Code, Paper, Stack, Table, Text, Title } from '@mantine/core';
import type { Schemas } from '../../api/client.ts';
import { formatCredits, formatDateTime, formatDuration, humanize } from '../../format.ts';

const COMPONENTS = [['stt', 'Speech to text'], ['llm', 'Language model'], ['tts', 'Text to speech'], ['telephony', 'Telephony'], ['platform', 'Platform']] as const;

/** The call's facts, its cost per component, and the caller's metadata and variables. */
export function CallDetails({ call }: { call: Schemas['Call'] }) {
  const facts: Array<[string, string]> = [
    ['Direction', call.call_type],
    ['From', call.from_number ?? '—'],
    ['To', call.to_number],
    ['Started', formatDateTime(call.start_time)],
    ['Ended', formatDateTime(call.end_time)],
    ['Duration', formatDuration(call.duration_seconds)],
    ['End reason', humanize(call.end_reason)],
    ['Turns', String(call.turn_count ?? call.transcript.length)],
    ['Billing', humanize(call.billing_status)],
    ['Latency p50', call.latency_p50_ms === null || call.latency_p50_ms === undefined ? '—' : `${call.latency_p50_ms} ms`],
    ['Latency p95', call.latency_p95_ms === null || call.latency_p95_ms === undefined ? '—' : `${call.latency_p95_ms} ms`],
  ];
  return (
    <Stack>
      {call.error ? (
        <Alert color="red" role="status" data-testid="call-error" title={`The call failed: ${call.error.provider} (${call.error.code})`}>{call.error.message}</Alert>
      ) : null}
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="xs">Details</Title>
        <Table>
          <Table.Tbody>
            {facts.map(([label, value]) => (
              <Table.Tr key={label}><Table.Th scope="row">{label}</Table.Th><Table.Td>{value}</Table.Td></Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Paper>
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="xs">Cost (credits)</Title>
        {call.cost_breakdown ? (
          <Table aria-label="Cost breakdown">
            <Table.Tbody>
              {COMPONENTS.map(([key, label]) => (
                <Table.Tr key={key}><Table.Th scope="row">{label}</Table.Th><Table.Td ta="right">{formatCredits(call.cost_breakdown![key])}</Table.Td></Table.Tr>
              ))}
              {call.cost_breakdown.analysis === undefined ? null : (
                <Table.Tr><Table.Th scope="row">Post-call analysis</Table.Th><Table.Td ta="right">{formatCredits(call.cost_breakdown.analysis)}</Table.Td></Table.Tr>
              )}
              <Table.Tr><Table.Th scope="row">Total (credits)</Table.Th><Table.Td ta="right" fw={700}>{formatCredits(call.total_cost)}</Table.Td></Table.Tr>
            </Table.Tbody>
          </Table>
        ) : <Text size="sm" c="dimmed">Total: {formatCredits(call.total_cost)} credits (no breakdown reported).</Text>}
      </Paper>
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="xs">Metadata</Title>
        {Object.keys(call.metadata).length ? <Code block>{JSON.stringify(call.metadata, null, 2)}</Code> : <Text size="sm" c="dimmed">None.</Text>}
        {Object.keys(call.variables).length ? (
          <>
            <Title order={3} size="h5" mt="sm" mb="xs">Variables</Title>
            <Code block>{JSON.stringify(call.variables, null, 2)}</Code>
          </>
        ) : null}
      </Paper>
    </Stack>
  );
}
