import { useState } from 'react';
import { Button, Collapse, Group, NumberInput, Paper, Select, SimpleGrid, TextInput } from '@mantine/core';
import { useAgentOptions } from '../../hooks/useAgentOptions.ts';
import { BILLING_STATUSES, CALL_TYPES, END_REASONS, NUMBER_FILTERS, SENTIMENTS, STATUSES, TEXT_FILTERS, options } from './filters.ts';

type Values = Record<string, string>;

const valuesOf = (params: URLSearchParams): Values => ({
  ...Object.fromEntries([...TEXT_FILTERS, ...NUMBER_FILTERS].map((name) => [name, params.get(name) ?? ''])),
  // metadata.<key>=<value> filters, edited as "key=value" lines separated by commas
  metadata: [...params].filter(([name]) => name.startsWith('metadata.')).map(([name, value]) => `${name.slice(9)}=${value}`).join(', '),
});

/** Every filter of GET /api/calls, kept in the address bar (so a filtered list can be shared and reloaded). */
export function CallFilters({ params, onChange }: { params: URLSearchParams; onChange: (next: URLSearchParams) => void }) {
  const [values, setValues] = useState<Values>(() => valuesOf(params));
  const [more, setMore] = useState(() => [...NUMBER_FILTERS, 'end_reason', 'billing_status', 'phone_number', 'campaign_id', 'has_recording', 'analysis.success', 'analysis.sentiment'].some((n) => params.get(n))
    || [...params.keys()].some((n) => n.startsWith('metadata.')));
  const agents = useAgentOptions();
  const set = (name: string) => (value: string | number | null) => setValues((v) => ({ ...v, [name]: value === null ? '' : String(value) }));
  const apply = (event?: React.FormEvent) => {
    event?.preventDefault();
    const next = new URLSearchParams();
    for (const [name, value] of Object.entries(values)) if (value !== '' && name !== 'metadata') next.set(name, value);
    for (const pair of values.metadata!.split(',')) {
      const [key, ...rest] = pair.split('=');
      if (key?.trim() && rest.length) next.set(`metadata.${key.trim()}`, rest.join('=').trim());
    }
    onChange(next);
  };
  const clear = () => {
    setValues(valuesOf(new URLSearchParams()));
    onChange(new URLSearchParams());
  };
  const select = (name: string, label: string, data: Array<{ value: string; label: string }>) => (
    <Select label={label} data={data} value={values[name] || null} onChange={set(name)} clearable placeholder="Any" />
  );
  return (
    <Paper withBorder p="sm" component="form" onSubmit={apply} aria-label="Filters">
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 5 }}>
        <TextInput label="Search transcripts" placeholder='refund -cancel, "exact phrase"' value={values.q} onChange={(e) => set('q')(e.currentTarget.value)} />
        {select('agent_id', 'Agent', (agents.data ?? []).map((a) => ({ value: a.agent_id, label: a.agent_name })))}
        {select('status', 'Status', options(STATUSES))}
        <TextInput label="From" type="date" value={values.from} onChange={(e) => set('from')(e.currentTarget.value)} />
        <TextInput label="To" type="date" value={values.to} onChange={(e) => set('to')(e.currentTarget.value)} />
      </SimpleGrid>
      <Collapse expanded={more}>
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 5 }} mt="sm">
          {select('call_type', 'Direction', options(CALL_TYPES))}
          {select('end_reason', 'End reason', options(END_REASONS))}
          {select('billing_status', 'Billing', options(BILLING_STATUSES))}
          {select('has_recording', 'Recording', [{ value: 'true', label: 'with recording' }, { value: 'false', label: 'without recording' }])}
          {select('analysis.success', 'Outcome', [{ value: 'true', label: 'success' }, { value: 'false', label: 'not a success' }])}
          {select('analysis.sentiment', 'Sentiment', options(SENTIMENTS))}
          <TextInput label="Phone number" placeholder="+14155550100" value={values.phone_number} onChange={(e) => set('phone_number')(e.currentTarget.value)} />
          <NumberInput label="Min duration (s)" min={0} value={values.min_duration} onChange={set('min_duration')} />
          <NumberInput label="Max duration (s)" min={0} value={values.max_duration} onChange={set('max_duration')} />
          <NumberInput label="Min cost (credits)" min={0} decimalScale={4} value={values.min_cost} onChange={set('min_cost')} />
          <NumberInput label="Max cost (credits)" min={0} decimalScale={4} value={values.max_cost} onChange={set('max_cost')} />
          <TextInput label="Campaign id" value={values.campaign_id} onChange={(e) => set('campaign_id')(e.currentTarget.value)} />
          <TextInput label="Metadata" placeholder="crm_id=lead-4711, tier=gold" value={values.metadata} onChange={(e) => set('metadata')(e.currentTarget.value)} />
        </SimpleGrid>
      </Collapse>
      <Group mt="sm" gap="xs">
        <Button type="submit" size="xs">Apply filters</Button>
        <Button variant="default" size="xs" onClick={clear}>Clear</Button>
        <Button variant="subtle" size="xs" onClick={() => setMore((m) => !m)} aria-expanded={more}>{more ? 'Fewer filters' : 'More filters'}</Button>
      </Group>
    </Paper>
  );
}
