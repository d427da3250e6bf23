import { Group, Loader, Paper, SegmentedControl, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { useUrlState } from '../../hooks/useUrlState.ts';
import { bucketLabel, groupValue } from '../usage/usage.ts';

type UsageQuery = NonNullable<import('@switchboard/sdk/schema').paths['/api/analytics/usage']['get']['parameters']['query']>;

/** A share (0 to 1) as a percentage with one decimal. */
export const percent = (rate: number) => `${(Math.round(rate * 1000) / 10).toLocaleString(undefined, { maximumFractionDigits: 1 })}%`;

/**
 * The post-call analysis's success rate (extensions.md §13: of the calls whose analysis judged success,
 * the share that succeeded) over the page's period, per agent or per version of the chosen agent:
 * GET /api/analytics/usage with group_by agent or agent_version and the metric success_rate, per bucket.
 * A bucket's rate cannot be added up into a group's rate over the period, so the table shows the
 * buckets; the period's rate of the whole selection is the API's total.
 */
export function SuccessRates({ period, agentId, agentName }: {
  period: { start: string; end: string; granularity: 'day' | 'hour'; timezone: string }; agentId: string; agentName: (id: string) => string;
}) {
  const { orgId } = useCredentials();
  const { params, set } = useUrlState();
  const per = params.get('success_per') === 'version' ? 'version' : 'agent';
  const query: UsageQuery | null = per === 'version' && !agentId ? null : {
    ...period, metrics: 'calls,success_rate', group_by: per === 'version' ? 'agent_version' : 'agent', ...(agentId ? { agent_id: agentId } : {}),
  } as UsageQuery;
  const usage = useQuery({
    queryKey: [orgId, 'usage', query],
    enabled: query !== null,
    queryFn: async () => (await unwrap(api.GET('/api/analytics/usage', { params: { query: query! } }))).data,
  });
  const report = usage.data;
  const groups = (report?.series ?? []).map((series) => {
    const value = groupValue(series);
    return { label: value === null ? (per === 'version' ? 'Unknown version' : '(none)') : per === 'version' ? `Version ${value}` : agentName(value), series };
  });
  const buckets = (groups[0]?.series.points ?? []).map((p, i) => ({ start: p.start, i })).filter(({ i }) => groups.some((g) => (g.series.points[i]?.calls ?? 0) > 0));
  const totals = report?.totals as Record<string, number> | undefined;
  return (
    <Paper withBorder p="md" data-testid="success-rates">
      <Group justify="space-between" mb="sm">
        <Title order={2} size="h5">Success rate</Title>
        <SegmentedControl aria-label="Success rate per" size="xs" value={per} onChange={(v) => set('success_per', v === 'version' ? 'version' : null)}
          data={[{ value: 'agent', label: 'Per agent' }, { value: 'version', label: 'Per version' }]} />
      </Group>
      <Text size="sm" c="dimmed" mb="sm">Of the calls whose analysis judged success, the share that succeeded (0% where none was judged).</Text>
      {query === null ? <Text size="sm">Choose an agent above to compare its versions.</Text> : null}
      <ErrorAlert error={usage.error} title="The success rates could not be loaded" />
      {usage.isLoading ? <Loader size="sm" aria-label="Loading the success rates" /> : null}
      {report && totals ? (
        <>
          <Text size="sm" mb="xs">Over the period: <Text span fw={700} data-testid="success-rate-total">{percent(totals.success_rate ?? 0)}</Text> of the judged calls, among {totals.calls} calls{agentId ? ` of ${agentName(agentId)}` : ''}.</Text>
          {buckets.length === 0 ? <Text c="dimmed" size="sm">No calls in this period.</Text> : (
            <Table.ScrollContainer minWidth={400}>
              <Table striped aria-label={`Success rate per ${period.granularity} and ${per}`} data-testid="success-rate-table">
                <Table.Thead>
                  <Table.Tr><Table.Th>{period.granularity === 'day' ? 'Day' : 'Hour'}</Table.Th>{groups.map((g) => <Table.Th key={g.label} ta="right">{g.label}</Table.Th>)}</Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {buckets.map(({ start, i }) => (
                    <Table.Tr key={start}>
                      <Table.Td>{bucketLabel(start, report.granularity, report.timezone)}</Table.Td>
                      {groups.map((g) => {
                        const point = g.series.points[i] as Record<string, number> | undefined;
                        return <Table.Td key={g.label} ta="right" data-group={g.label}>{point && point.calls > 0 ? `${percent(point.success_rate ?? 0)} (${point.calls} calls)` : '—'}</Table.Td>;
                      })}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
        </>
      ) : null}
    </Paper>
  );
}
