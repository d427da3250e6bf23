import '@mantine/charts/styles.css';
import { useState } from 'react';
import { Group, Loader, Paper, Select, Stack, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { useAgentOptions } from '../../hooks/useAgentOptions.ts';
import { useUrlState } from '../../hooks/useUrlState.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { browserTimeZone, dayInZone, startOfDay, timeZones } from '../analytics/time.ts';
import { UsageChart, UsageTable, type Group as UsageGroup } from './UsageChart.tsx';
import { CALL_TYPES, STATUSES, options } from '../calls/filters.ts';
import { GRANULARITIES, GROUP_BYS, METRICS, groupValue, nextDay } from './usage.ts';

const ZONES = timeZones();
const FILTERS = ['agent_id', 'call_type', 'status'] as const;
type UsageQuery = NonNullable<import('@switchboard/sdk/schema').paths['/api/analytics/usage']['get']['parameters']['query']>;

/**
 * GET /api/analytics/usage over a range of days in a time zone: a metric per bucket, grouped by
 * agent, number, status, end reason, direction, campaign or a metadata key; the table's totals are the API's.
 */
export function UsagePage() {
  const { params, set } = useUrlState();
  const { orgId } = useCredentials();
  const timezone = params.get('tz') ?? browserTimeZone();
  const start = params.get('start') ?? dayInZone(timezone, 29);
  const end = params.get('end') ?? dayInZone(timezone);
  const granularity = params.get('granularity') ?? 'day';
  const groupBy = params.get('group_by') ?? '';
  const metric = params.get('metric') ?? 'cost';
  const filters = Object.fromEntries(FILTERS.flatMap((name) => (params.get(name) ? [[name, params.get(name)!]] : [])));
  const [metadataKey, setMetadataKey] = useState(groupBy.startsWith('metadata.') ? groupBy.slice(9) : '');

  const agents = useAgentOptions();
  const valid = /^\d{4}-\d{2}-\d{2}$/.test(start) && /^\d{4}-\d{2}-\d{2}$/.test(end);
  const grouped = groupBy !== '' && groupBy !== 'metadata.';
  const query = valid ? {
    start: startOfDay(start, timezone).toISOString(), end: startOfDay(nextDay(end), timezone).toISOString(),
    timezone, granularity, ...(grouped ? { group_by: groupBy } : {}), ...filters,
  } as UsageQuery : null;
  const usage = useQuery({
    queryKey: [orgId, 'usage', query],
    enabled: query !== null,
    queryFn: async () => (await unwrap(api.GET('/api/analytics/usage', { params: { query: query! } }))).data,
  });

  const agentName = new Map((agents.data ?? []).map((a) => [a.agent_id, a.agent_name]));
  const groups: UsageGroup[] = (usage.data?.series ?? []).map((series) => {
    const value = groupValue(series);
    const label = !usage.data?.group_by ? 'All calls' : value === null ? '(none)' : usage.data.group_by === 'agent' ? agentName.get(value) ?? value : value;
    return { label, series };
  });

  return (
    <Stack>
      <Title order={1}>Usage</Title>
      <Paper withBorder p="sm">
        <Group align="flex-end" wrap="wrap">
          <TextInput label="From" type="date" value={start} onChange={(e) => set('start', e.currentTarget.value)} />
          <TextInput label="To" type="date" value={end} onChange={(e) => set('end', e.currentTarget.value)} />
          <Select label="Time zone" data={ZONES} value={timezone} searchable allowDeselect={false} onChange={(v) => set('tz', v)} w={200} />
          <Select label="Granularity" data={[...GRANULARITIES]} value={granularity} allowDeselect={false} onChange={(v) => set('granularity', v)} w={120} />
          <Select label="Group by" placeholder="No grouping" clearable w={170}
            data={[...GROUP_BYS.map((g) => ({ value: g, label: g.replaceAll('_', ' ').replace('.', ': ') })), { value: 'metadata', label: 'metadata key' }]}
            value={groupBy.startsWith('metadata.') ? 'metadata' : groupBy || null}
            onChange={(v) => set('group_by', v === 'metadata' ? `metadata.${metadataKey}` : v)} />
          {groupBy.startsWith('metadata.') ? (
            <TextInput label="Metadata key" placeholder="customer_id" value={metadataKey} w={160}
              onChange={(e) => setMetadataKey(e.currentTarget.value)}
              onBlur={() => set('group_by', `metadata.${metadataKey.trim()}`)}
              onKeyDown={(e) => { if (e.key === 'Enter') set('group_by', `metadata.${metadataKey.trim()}`); }} />
          ) : null}
          <Select label="Agent" placeholder="All agents" clearable value={filters.agent_id ?? null} onChange={(v) => set('agent_id', v)} w={180}
            data={(agents.data ?? []).map((a) => ({ value: a.agent_id, label: a.agent_name }))} />
          <Select label="Direction" placeholder="Any" clearable value={filters.call_type ?? null} onChange={(v) => set('call_type', v)} w={130} data={options(CALL_TYPES)} />
          <Select label="Status" placeholder="Any ended" clearable value={filters.status ?? null} onChange={(v) => set('status', v)} w={140} data={options(STATUSES)} />
          <Select label="Metric" data={METRICS.map(({ value, label }) => ({ value, label }))} value={metric} allowDeselect={false} onChange={(v) => set('metric', v)} w={210} />
        </Group>
      </Paper>
      <ErrorAlert error={usage.error} title="The usage could not be loaded" />
      {usage.isLoading ? <Loader aria-label="Loading usage" /> : null}
      {usage.data ? (
        <>
          <UsageChart report={usage.data} groups={groups} metric={metric} />
          <UsageTable report={usage.data} groups={groups} metric={metric} />
        </>
      ) : null}
    </Stack>
  );
}
