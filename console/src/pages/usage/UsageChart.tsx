import { BarChart } from '@mantine/charts';
import { Paper, Table, Text, Title } from '@mantine/core';
import { formatCredits } from '../../format.ts';
import { METRICS, bucketLabel, seriesTotal, type Report } from './usage.ts';

const COLORS = ['blue.8', 'teal.8', 'grape.8', 'orange.8', 'red.8', 'green.8', 'indigo.8', 'pink.8', 'cyan.8', 'yellow.8'];
const MOST = 10;

export interface Group { label: string; series: Report['series'][number] }

/** The metric per bucket, one stacked bar per group (the ten largest groups when there are more). */
export function UsageChart({ report, groups, metric }: { report: Report; groups: Group[]; metric: string }) {
  const summed = METRICS.find((m) => m.value === metric)?.summed ?? true;
  const shown = [...groups].sort((a, b) => seriesTotal(b.series, metric) - seriesTotal(a.series, metric)).slice(0, MOST);
  const data = (shown[0]?.series.points ?? []).map((point, i) => ({
    bucket: bucketLabel(point.start, report.granularity, report.timezone),
    ...Object.fromEntries(shown.map((g, k) => [`g${k}`, (g.series.points[i] as Record<string, number>)[metric] ?? 0])),
  }));
  const label = METRICS.find((m) => m.value === metric)?.label ?? metric;
  return (
    <Paper withBorder p="md" role="figure" aria-label={`${label} per ${report.granularity}${report.group_by ? ` and ${report.group_by}` : ''}`}>
      <Title order={2} size="h5" mb="sm">{label} per {report.granularity}{groups.length > MOST ? ` (the ${MOST} largest groups)` : ''}</Title>
      <BarChart h={280} data={data} dataKey="bucket" type={summed ? 'stacked' : 'default'} withLegend={Boolean(report.group_by)}
        series={shown.map((g, k) => ({ name: `g${k}`, label: g.label, color: COLORS[k % COLORS.length]! }))} />
    </Paper>
  );
}

/** Per group: the sums of the API's buckets; the last row is the API's totals. */
export function UsageTable({ report, groups, metric }: { report: Report; groups: Group[]; metric: string }) {
  if (groups.length === 0) return <Text c="dimmed">No calls in this period.</Text>;
  const extra = ['calls', 'duration_seconds', 'cost'].includes(metric) ? null : METRICS.find((m) => m.value === metric);
  const totals = report.totals as Record<string, number>;
  const cell = (value: number | undefined, testId?: string) => <Table.Td ta="right" data-testid={testId}>{formatCredits(value)}</Table.Td>;
  return (
    <Table.ScrollContainer minWidth={500}>
      <Table striped aria-label="Usage per group" data-testid="usage-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{report.group_by ?? 'All calls'}</Table.Th>
            <Table.Th ta="right">Calls</Table.Th><Table.Th ta="right">Duration (s)</Table.Th><Table.Th ta="right">Cost (credits)</Table.Th>
            {extra ? <Table.Th ta="right">{extra.label}</Table.Th> : null}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {groups.map((g) => (
            <Table.Tr key={g.label} data-group={g.label}>
              <Table.Td>{g.label}</Table.Td>
              {cell(seriesTotal(g.series, 'calls'), 'group-calls')}
              {cell(seriesTotal(g.series, 'duration_seconds'), 'group-duration')}
              {cell(seriesTotal(g.series, 'cost'), 'group-cost')}
              {extra ? (extra.summed ? cell(seriesTotal(g.series, extra.value)) : <Table.Td ta="right">—</Table.Td>) : null}
            </Table.Tr>
          ))}
        </Table.Tbody>
        <Table.Tfoot>
          <Table.Tr fw={700}>
            <Table.Td>Total</Table.Td>
            {cell(totals.calls, 'total-calls')}
            {cell(totals.duration_seconds, 'total-duration')}
            {cell(totals.cost, 'total-cost')}
            {extra ? cell(totals[extra.value]) : null}
          </Table.Tr>
        </Table.Tfoot>
      </Table>
    </Table.ScrollContainer>
  );
}
