import { useState } from 'react';
import { Badge, Button, Group, Modal, Paper, Progress, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { CampaignForm } from './CampaignForm.tsx';

type Action = 'start' | 'pause' | 'resume' | 'cancel';
const ACTIONS: Record<string, Action[]> = { draft: ['start', 'cancel'], running: ['pause', 'cancel'], paused: ['resume', 'cancel'] };

/** Outbound campaigns: created from a CSV of contacts, started, paused, resumed or cancelled, with live progress. */
export function CampaignsPage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  const key = [orgId, 'campaigns'];
  const [creating, setCreating] = useState(false);
  const campaigns = useQuery({
    queryKey: key,
    queryFn: async () => (await unwrap(api.GET('/api/campaigns', { params: { query: { page_size: 100 } } }))).data,
    refetchInterval: (query) => (query.state.data?.some((c) => c.status === 'running') ? 3000 : false),
  });
  const act = useMutation({
    mutationFn: ({ id, action }: { id: string; action: Action }) =>
      unwrap(api.POST(`/api/campaigns/{campaign_id}/${action}` as '/api/campaigns/{campaign_id}/start', { params: { path: { campaign_id: id } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: key }),
  });
  const manage = atLeast(role, 'agent_manager');
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Campaigns</Title>
        {manage ? <Button onClick={() => setCreating(true)}>New campaign</Button> : null}
      </Group>
      <ErrorAlert error={campaigns.error ?? act.error} title="The campaign action was refused" />
      {campaigns.isPending ? <TableSkeleton label="Loading campaigns" rows={3} /> : null}
      {campaigns.data?.length === 0 ? (
        <EmptyState title="No campaigns yet" action={manage ? <Button onClick={() => setCreating(true)}>Create your first campaign</Button> : undefined}>
          A campaign calls a list of contacts from a CSV with one of your agents, within the hours you choose and at the pace you set.
          {manage ? '' : ' An agent manager or admin of the organization can create one.'}
        </EmptyState>
      ) : null}
      {(campaigns.data ?? []).map((c) => (
        <Paper key={c.campaign_id} withBorder p="md" data-testid="campaign">
          <Group justify="space-between" wrap="nowrap">
            <div>
              <Text fw={600}>{c.name}</Text>
              <Text size="xs" c="dimmed">{c.schedule.timezone} · at most {c.max_concurrency} at once, {c.calls_per_minute} per minute</Text>
            </div>
            <Group gap="xs">
              <Badge variant="dot">{c.status}</Badge>
              {manage ? (ACTIONS[c.status] ?? []).map((action) => (
                <Button key={action} size="xs" variant="default" loading={act.isPending && act.variables?.id === c.campaign_id && act.variables.action === action}
                  onClick={() => act.mutate({ id: c.campaign_id, action })}>{action[0]!.toUpperCase() + action.slice(1)}</Button>
              )) : null}
            </Group>
          </Group>
          <CampaignProgress progress={c.progress} />
        </Paper>
      ))}
      <Modal opened={creating} onClose={() => setCreating(false)} title="New campaign" size="lg">
        <CampaignForm onCreated={() => void client.invalidateQueries({ queryKey: key })} />
      </Modal>
    </Stack>
  );
}

function CampaignProgress({ progress: p }: { progress: Schemas['CampaignProgress'] }) {
  const done = p.completed + p.failed + p.skipped;
  return (
    <Stack gap={4} mt="sm">
      <Progress value={p.total ? (done / p.total) * 100 : 0} aria-label="Contacts done" />
      <Text size="xs" data-testid="campaign-progress">
        {p.total} contacts: {p.pending} pending, {p.in_progress} in progress, {p.retrying} retrying, {p.completed} completed, {p.failed} failed, {p.skipped} skipped
      </Text>
    </Stack>
  );
}
