import '@mantine/charts/styles.css';
import { Group, Loader, Paper, SegmentedControl, Select, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { useAgentOptions } from '../../hooks/useAgentOptions.ts';
import { useUrlState } from '../../hooks/useUrlState.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { formatCredits } from '../../format.ts';
import { AnalyticsCharts, AnalyticsTable, type Point } from './AnalyticsCharts.tsx';
import { SuccessRates } from './SuccessRates.tsx';
import { nextDay } from '../usage/usage.ts';
import { browserTimeZone, dayInZone, startOfDay, timeZones } from './time.ts';

const ZONES = timeZones();

/** Calls, minutes and cost per day over a range in a time zone, or per minute for one day; for all agents or one; and the analysis's success rate. */
export function AnalyticsPage() {
  const { params, set } = useUrlState();
  const { orgId } = useCredentials();
  const timezone = params.get('tz') ?? browserTimeZone();
  const granularity = params.get('day') ? 'minute' : 'day';
  const start = params.get('start') ?? dayInZone(timezone, 29);
  const end = params.get('end') ?? dayInZone(timezone);
  const day = params.get('day') ?? end;
  const agentId = params.get('agent') ?? '';

  const agents = useAgentOptions();
  const query = granularity === 'minute'
    ? { start_time: startOfDay(day, timezone).toISOString(), end_time: new Date(startOfDay(day, timezone).getTime() + 86_400_000).toISOString(), timezone }
    : { start_date: start, end_date: end, timezone };
  const metrics = useQuery({
    queryKey: [orgId, 'analytics', query, agentId],
    queryFn: async () => (await unwrap(api.GET('/api/analytics/calls/daily', { params: { query: { ...query, ...(agentId ? { agent_id: agentId } : {}) } } }))).data,
  });

  // The success rates read the same period, per day (per hour for one day).
  const successPeriod = granularity === 'minute'
    ? { start: query.start_time!, end: query.end_time!, granularity: 'hour' as const, timezone }
    : { start: startOfDay(start, timezone).toISOString(), end: startOfDay(nextDay(end), timezone).toISOString(), granularity: 'day' as const, timezone };
  const agentNames = new Map((agents.data ?? []).map((a) => [a.agent_id, a.agent_name]));

  const points: Point[] = (metrics.data?.daily ?? []).map((p) => ({
    date: granularity === 'minute' ? new Date(p.date).toLocaleTimeString(undefined, { timeZone: timezone, hour: '2-digit', minute: '2-digit' }) : p.date,
    calls: p.calls, minutes: Math.round((p.total_duration_seconds / 60) * 10) / 10, cost: p.cost_credits,
  }));
  const totals = (metrics.data?.daily ?? []).reduce((t, p) => ({ calls: t.calls + p.calls, seconds: t.seconds + p.total_duration_seconds, cost: t.cost + p.cost_credits }), { calls: 0, seconds: 0, cost: 0 });

  return (
    <Stack>
      <Title order={1}>Analytics</Title>
      <Paper withBorder p="sm">
        <Group align="flex-end" wrap="wrap">
          <SegmentedControl aria-label="Granularity" value={granularity} data={[{ value: 'day', label: 'Per day' }, { value: 'minute', label: 'Per minute (one day)' }]}
            onChange={(value) => set('day', value === 'minute' ? end : null)} />
          {granularity === 'day' ? (
            <>
              <TextInput label="From" type="date" value={start} onChange={(e) => set('start', e.currentTarget.value)} />
              <TextInput label="To" type="date" value={end} onChange={(e) => set('end', e.currentTarget.value)} />
            </>
          ) : <TextInput label="Day" type="date" value={day} onChange={(e) => set('day', e.currentTarget.value)} />}
          <Select label="Time zone" data={ZONES} value={timezone} searchable allowDeselect={false} onChange={(value) => set('tz', value)} w={220} />
          <Select label="Agent" placeholder="All agents" clearable value={agentId || null} onChange={(value) => set('agent', value)} w={220}
            data={(agents.data ?? []).map((a) => ({ value: a.agent_id, label: a.agent_name }))} />
        </Group>
      </Paper>
      <ErrorAlert error={metrics.error} title="The analytics could not be loaded" />
      {metrics.isPending ? <Loader aria-label="Loading analytics" /> : null}
      {metrics.data ? (
        <>
          <SimpleGrid cols={{ base: 1, sm: 3 }}>
            <Stat label="Calls" value={totals.calls.toLocaleString()} testId="total-calls" />
            <Stat label="Minutes" value={(Math.round((totals.seconds / 60) * 10) / 10).toLocaleString()} testId="total-minutes" />
            <Stat label="Cost (credits)" value={formatCredits(totals.cost)} testId="total-cost" />
          </SimpleGrid>
          <AnalyticsCharts points={points} />
          <SuccessRates period={successPeriod} agentId={agentId} agentName={(id) => agentNames.get(id) ?? id} />
          <AnalyticsTable points={points} onlyActive={granularity === 'minute'} />
        </>
      ) : null}
    </Stack>
  );
}

function Stat({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Paper withBorder p="md">
      <Text size="sm" c="dimmed">{label}</Text>
      <Text size="xl" fw={700} data-testid={testId}>{value}</Text>
    </Paper>
  );
}
