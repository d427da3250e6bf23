import { useState } from 'react';
import { Badge, Button, Group, Modal, Paper, Stack, Switch, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ConfirmDelete } from '../../components/ConfirmDelete.tsx';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { Deliveries } from './Deliveries.tsx';
import { WebhookForm } from './WebhookForm.tsx';

/** Webhook endpoints (extensions §1): read by managers, changed by admins; each with its delivery log and Retry. */
export function WebhooksPage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  const key = [orgId, 'webhooks'];
  const [adding, setAdding] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Schemas['Webhook'] | null>(null);
  const hooks = useQuery({ queryKey: key, queryFn: async () => (await unwrap(api.GET('/api/webhooks'))).data });
  const refresh = () => void client.invalidateQueries({ queryKey: key });
  const toggle = useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) => unwrap(api.PATCH('/api/webhooks/{webhook_id}', { params: { path: { webhook_id: id } }, body: { enabled } })),
    onSettled: refresh,
  });
  const test = useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/api/webhooks/{webhook_id}/test', { params: { path: { webhook_id: id } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: [orgId, 'deliveries'] }),
  });
  const admin = atLeast(role, 'admin');
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Webhooks</Title>
        {admin ? <Button onClick={() => setAdding(true)}>Add endpoint</Button> : null}
      </Group>
      <ErrorAlert error={hooks.error ?? toggle.error ?? test.error} />
      {hooks.isPending ? <TableSkeleton label="Loading webhook endpoints" rows={3} /> : null}
      {hooks.data?.length === 0 ? (
        <EmptyState title="No webhook endpoints yet" action={admin ? <Button onClick={() => setAdding(true)}>Add your first endpoint</Button> : undefined}>
          Your systems hear about calls, agents and numbers as they happen, signed so they can check it is Switchboard.
          Events are kept in the event log either way.{admin ? '' : ' An admin of the organization can add an endpoint.'}
        </EmptyState>
      ) : null}
      {(hooks.data ?? []).map((h) => (
        <Paper key={h.webhook_id} withBorder p="md" data-testid="webhook">
          <Group justify="space-between" wrap="nowrap">
            <div>
              <Text fw={600}><code>{h.url}</code></Text>
              <Text size="sm" c="dimmed">{h.description || 'No description'} · {h.event_types.length ? h.event_types.join(', ') : 'every event'}</Text>
            </div>
            <Group gap="xs" wrap="nowrap">
              {h.enabled ? <Badge variant="dot" color="green">enabled</Badge> : <Badge variant="dot" color="red">disabled{h.disabled_reason ? ` (${h.disabled_reason})` : ''}</Badge>}
              {admin ? <Switch aria-label="Enabled" checked={h.enabled} onChange={(e) => toggle.mutate({ id: h.webhook_id, enabled: e.currentTarget.checked })} /> : null}
              {admin ? <Button size="xs" variant="default" loading={test.isPending && test.variables === h.webhook_id} onClick={() => { setOpen(h.webhook_id); test.mutate(h.webhook_id); }}>Send test</Button> : null}
              <Button size="xs" variant="default" onClick={() => setOpen(open === h.webhook_id ? null : h.webhook_id)} aria-expanded={open === h.webhook_id}>Deliveries</Button>
              {admin ? <Button size="xs" variant="default" onClick={() => setDeleting(h)}>Delete</Button> : null}
            </Group>
          </Group>
          {open === h.webhook_id ? <Deliveries webhookId={h.webhook_id} canRetry={admin} /> : null}
        </Paper>
      ))}
      <Modal opened={adding} onClose={() => setAdding(false)} title="New webhook endpoint" size="lg">
        <WebhookForm onCreated={refresh} />
      </Modal>
      <ConfirmDelete what={deleting?.url} opened={deleting !== null} onClose={() => setDeleting(null)} onDeleted={refresh}
        onDelete={() => unwrap(api.DELETE('/api/webhooks/{webhook_id}', { params: { path: { webhook_id: deleting!.webhook_id } } }))} />
    </Stack>
  );
}
