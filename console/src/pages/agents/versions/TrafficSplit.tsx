import { useState } from 'react';
import { Alert, Button, Group, List, NumberInput, Paper, Radio, Select, Stack, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../../api/client.ts';
import { useCredentials } from '../../../auth/useCredentials.ts';
import { ErrorAlert } from '../../../components/ErrorAlert.tsx';
import { trafficProblems, type AgentVersion, type Traffic } from './versions.ts';

type Row = { version: number | null; weight: number | string };

/**
 * The agent's `traffic` (extensions.md §12): null sends every new call to the latest version; a split
 * sends each new call to a version by weight (sticky per caller). Saved alone with PATCH, it makes no
 * new version. Checked here as the API checks it, so a refusal is rare and still shown.
 */
export function TrafficSplit({ agent, versions, manage }: { agent: Schemas['Agent']; versions: AgentVersion[]; manage: boolean }) {
  const { orgId } = useCredentials();
  const client = useQueryClient();
  const [split, setSplit] = useState(agent.traffic !== null);
  const [rows, setRows] = useState<Row[]>(() => agent.traffic?.map((t) => ({ ...t })) ?? []);
  // A first split proposes the latest version and the one before it, as they are when it is asked for.
  const choose = (value: string) => {
    setSplit(value === 'split');
    if (value === 'split' && rows.length === 0) setRows([{ version: agent.version, weight: 90 }, { version: versions.find((v) => v.version !== agent.version)?.version ?? null, weight: 10 }]);
  };
  const known = new Set(versions.map((v) => v.version));
  const problems = split ? trafficProblems(rows, known) : [];
  const save = useMutation({
    mutationFn: async () => {
      const traffic: Traffic | null = split ? rows.map((r) => ({ version: r.version!, weight: Number(r.weight) })) : null;
      return (await unwrap(api.PATCH('/api/agents/{agent_id}', { params: { path: { agent_id: agent.agent_id } }, body: { traffic } }))).data;
    },
    onSuccess: () => {
      notifications.show({ message: 'Traffic split saved', color: 'green' });
      void client.invalidateQueries({ queryKey: [orgId, 'agent', agent.agent_id] });
    },
  });
  const setRow = (i: number, change: Partial<Row>) => setRows((all) => all.map((r, k) => (k === i ? { ...r, ...change } : r)));
  const options = versions.map((v) => ({ value: String(v.version), label: `Version ${v.version}${v.version === agent.version ? ' (latest)' : ''}` }));
  return (
    <Paper withBorder p="md" component="form" aria-label="Traffic split" data-testid="traffic"
      onSubmit={(e: React.FormEvent) => { e.preventDefault(); if (problems.length === 0) save.mutate(); }}>
      <Title order={2} size="h4" mb="xs">Traffic split</Title>
      <Text size="sm" c="dimmed" mb="sm">Try a version on part of the new calls; the same caller keeps getting the same version while the split stands.</Text>
      <Stack>
        <Radio.Group label="New calls go to" value={split ? 'split' : 'latest'} onChange={choose}>
          <Group mt={4}>
            <Radio value="latest" label="The latest version" disabled={!manage} />
            <Radio value="split" label="Versions by weight" disabled={!manage} />
          </Group>
        </Radio.Group>
        {split ? rows.map((row, i) => (
          <Group key={i} align="flex-end" data-testid="traffic-row">
            <Select label={`Version, row ${i + 1}`} data={options} value={row.version === null ? null : String(row.version)} disabled={!manage}
              onChange={(v) => setRow(i, { version: v === null ? null : Number(v) })} w={200} />
            <NumberInput label={`Weight (%), row ${i + 1}`} min={1} max={100} allowDecimal={false} value={row.weight} disabled={!manage}
              onChange={(v) => setRow(i, { weight: v })} w={160} />
            {manage ? <Button variant="subtle" color="red" onClick={() => setRows((all) => all.filter((_, k) => k !== i))} aria-label={`Remove row ${i + 1}`}>Remove</Button> : null}
          </Group>
        )) : null}
        {split && manage ? <Group><Button variant="default" size="xs" onClick={() => setRows((all) => [...all, { version: null, weight: 0 }])}>Add a version</Button></Group> : null}
        {problems.length ? (
          <Alert color="orange" title="The split cannot be saved yet" role="status" data-testid="traffic-problems">
            <List size="sm">{problems.map((p) => <List.Item key={p}>{p}</List.Item>)}</List>
          </Alert>
        ) : null}
        <ErrorAlert error={save.error} title="The traffic split was not saved" />
        {manage ? <Group><Button type="submit" disabled={problems.length > 0} loading={save.isPending}>Save traffic split</Button></Group> : null}
      </Stack>
    </Paper>
  );
}
