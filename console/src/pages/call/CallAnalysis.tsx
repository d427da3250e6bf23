import { useState } from 'react';
import { Alert, Badge, Button, Group, Loader, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { formatDateTime } from '../../format.ts';
import { atLeast, useMe } from '../../hooks/useMe.ts';

const FINAL = ['completed', 'failed', 'busy', 'no_answer', 'canceled'];
const SENTIMENT_COLOR = { positive: 'green', neutral: 'gray', negative: 'red' } as const;

/**
 * The call's post-call analysis (extensions.md §13): summary, success and why, the caller's sentiment
 * and the structured data; pending while the job runs, failed with its reason. Rerunning it needs
 * `calls:analyze` (admin, agent_manager); the page then follows the call until the new analysis is in.
 */
export function CallAnalysis({ call }: { call: Schemas['Call'] }) {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  // The analysis a rerun replaces (its time, or '' when there was none): the rerun is done once the call shows another.
  const [replacing, setReplacing] = useState<string | null>(null);
  const analysis = call.analysis;
  const rerunDone = replacing !== null && (analysis?.analyzed_at ?? '') !== replacing;
  const rerunning = replacing !== null && !rerunDone;
  // Whether the job will analyze this call: its version's analysis is on and there is a transcript.
  const version = useQuery({
    queryKey: [orgId, 'agent', call.agent_id, 'version', call.agent_version],
    enabled: call.agent_version !== null && !analysis,
    retry: false,
    queryFn: async () => (await unwrap(api.GET('/api/agents/{agent_id}/versions/{version}', { params: { path: { agent_id: call.agent_id, version: String(call.agent_version) } } }))).data,
  });
  const expected = !analysis && version.data?.config.analysis?.enabled === true && FINAL.includes(call.status) && call.transcript.length > 0;
  const pending = rerunning || expected;
  // Follow the call while an analysis is on its way (the page's own query, refreshed more often).
  useQuery({
    queryKey: [orgId, 'call', call.call_sid],
    enabled: pending,
    refetchInterval: pending ? 1_500 : false,
    queryFn: async () => (await unwrap(api.GET('/api/calls/{call_sid}', { params: { path: { call_sid: call.call_sid } } }))).data,
  });
  const rerun = useMutation({
    mutationFn: async () => unwrap(api.POST('/api/calls/{call_sid}/analyze', {
      params: { path: { call_sid: call.call_sid }, header: { 'idempotency-key': crypto.randomUUID() } }, body: {},
    })),
    onSuccess: () => { setReplacing(analysis?.analyzed_at ?? ''); void client.invalidateQueries({ queryKey: [orgId, 'call', call.call_sid] }); },
  });

  return (
    <Paper withBorder p="md" data-testid="call-analysis" aria-labelledby="call-analysis-title">
      <Group justify="space-between" mb="xs">
        <Title order={2} size="h4" id="call-analysis-title">Analysis</Title>
        {atLeast(role, 'agent_manager') ? (
          <Button size="xs" variant="default" onClick={() => rerun.mutate()} loading={rerun.isPending} disabled={rerunning}>Rerun analysis</Button>
        ) : null}
      </Group>
      <ErrorAlert error={rerun.error} title="The analysis could not be rerun" />
      <div aria-live="polite">
        {pending ? (
          <Group gap="xs" mb="xs" data-testid="analysis-pending">
            <Loader size="xs" aria-hidden />
            <Text size="sm">{rerunning ? 'Analyzing the call again…' : 'Pending: the call is being analyzed…'}</Text>
          </Group>
        ) : null}
        {rerunDone ? <Text size="sm" c="dimmed" mb="xs" data-testid="analysis-rerun-done">The new analysis is in.</Text> : null}
      </div>
      {analysis ? <AnalysisView analysis={analysis} /> : pending ? null : <Text size="sm" c="dimmed">No analysis: {call.transcript.length === 0 ? 'the call has no transcript.' : "its agent version's analysis is off."}</Text>}
    </Paper>
  );
}

function AnalysisView({ analysis }: { analysis: Schemas['CallAnalysis'] }) {
  const data = Object.entries(analysis.structured_data ?? {});
  return (
    <Stack gap="sm">
      <Group gap="xs">
        <Badge variant="dot" color={analysis.status === 'completed' ? 'blue' : 'red'} data-testid="analysis-status">Analysis {analysis.status}</Badge>
        {analysis.success === null ? null : (
          <Badge variant="dot" color={analysis.success ? 'green' : 'red'} data-testid="analysis-success">{analysis.success ? 'Success' : 'Not a success'}</Badge>
        )}
        {analysis.sentiment ? <Badge variant="dot" color={SENTIMENT_COLOR[analysis.sentiment]} data-testid="analysis-sentiment">Sentiment: {analysis.sentiment}</Badge> : null}
      </Group>
      {analysis.status === 'failed' ? (
        <Alert color="red" role="status" title="The analysis failed" data-testid="analysis-error">{analysis.error ?? 'No reason was given.'}</Alert>
      ) : null}
      {analysis.summary ? <Text size="sm" data-testid="analysis-summary">{analysis.summary}</Text> : null}
      {analysis.success_reason ? <Text size="sm" data-testid="analysis-reason"><Text span fw={600}>Why: </Text>{analysis.success_reason}</Text> : null}
      {data.length ? (
        <Table aria-label="Structured data" data-testid="analysis-data">
          <Table.Tbody>
            {data.map(([key, value]) => (
              <Table.Tr key={key} data-key={key}><Table.Th scope="row">{key}</Table.Th><Table.Td>{typeof value === 'string' ? value : JSON.stringify(value)}</Table.Td></Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      <Text size="xs" c="dimmed">Version {analysis.agent_version ?? '—'} of the agent · {formatDateTime(analysis.analyzed_at)}</Text>
    </Stack>
  );
}
