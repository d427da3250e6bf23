import { AreaChart, BarChart } from '@mantine/charts';
import { Paper, SimpleGrid, Table, Text, Title } from '@mantine/core';
import { formatCredits } from '../../format.ts';

export interface Point { date: string; calls: number; minutes: number; cost: number }

export function AnalyticsCharts({ points }: { points: Point[] }) {
  return (
    <SimpleGrid cols={{ base: 1, lg: 3 }}>
      <Chart title="Calls"><BarChart h={220} data={points} dataKey="date" series={[{ name: 'calls', label: 'Calls', color: 'blue.8' }]} /></Chart>
      <Chart title="Minutes"><AreaChart h={220} data={points} dataKey="date" series={[{ name: 'minutes', label: 'Minutes', color: 'teal.8' }]} curveType="linear" /></Chart>
      <Chart title="Cost (credits)"><BarChart h={220} data={points} dataKey="date" series={[{ name: 'cost', label: 'Credits', color: 'grape.8' }]} /></Chart>
    </SimpleGrid>
  );
}

function Chart({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Paper withBorder p="md" role="figure" aria-label={`${title} over the period`}>
      <Title order={2} size="h5" mb="sm">{title}</Title>
      {children}
    </Paper>
  );
}

/** The numbers under the charts, as the API gave them (per minute: only minutes with calls). */
export function AnalyticsTable({ points, onlyActive }: { points: Point[]; onlyActive: boolean }) {
  const rows = onlyActive ? points.filter((p) => p.calls > 0) : points;
  if (rows.length === 0) return <Text c="dimmed">No calls in this period.</Text>;
  return (
    <Table.ScrollContainer minWidth={400} mah={400}>
      <Table striped aria-label="Analytics per period" data-testid="analytics-table">
        <Table.Thead>
          <Table.Tr><Table.Th>{onlyActive ? 'Minute' : 'Day'}</Table.Th><Table.Th ta="right">Calls</Table.Th><Table.Th ta="right">Minutes</Table.Th><Table.Th ta="right">Cost (credits)</Table.Th></Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((p) => (
            <Table.Tr key={p.date}><Table.Td>{p.date}</Table.Td><Table.Td ta="right">{p.calls}</Table.Td><Table.Td ta="right">{p.minutes}</Table.Td><Table.Td ta="right">{formatCredits(p.cost)}</Table.Td></Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
