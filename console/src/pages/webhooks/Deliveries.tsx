import { Badge, Button, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { formatDateTime } from '../../format.ts';

const COLOR: Record<string, string> = { succeeded: 'green', failed: 'red', retrying: 'orange', pending: 'gray' };

/** An endpoint's delivery log, newest first, refreshed while deliveries are still under way; Retry sends one again now. */
export function Deliveries({ webhookId, canRetry }: { webhookId: string; canRetry: boolean }) {
  const { orgId } = useCredentials();
  const client = useQueryClient();
  const key = [orgId, 'deliveries', webhookId];
  const log = useQuery({
    queryKey: key,
    queryFn: async () => (await unwrap(api.GET('/api/webhooks/{webhook_id}/deliveries', { params: { path: { webhook_id: webhookId }, query: { limit: 50 } } }))).data,
    refetchInterval: (query) => (query.state.data?.some((d) => d.status === 'pending' || d.status === 'retrying') ? 2000 : false),
  });
  const retry = useMutation({
    mutationFn: (deliveryId: string) => unwrap(api.POST('/api/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', { params: { path: { webhook_id: webhookId, delivery_id: deliveryId } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: key }),
  });
  if (log.data?.length === 0) return <Text size="sm" c="dimmed" mt="sm">No delivery yet.</Text>;
  return (
    <>
      <ErrorAlert error={log.error ?? retry.error} />
      <Table mt="sm" aria-label="Deliveries" data-testid="deliveries">
        <Table.Thead><Table.Tr><Table.Th>Event</Table.Th><Table.Th>Status</Table.Th><Table.Th>Last attempt</Table.Th><Table.Th>Next attempt</Table.Th><Table.Th /></Table.Tr></Table.Thead>
        <Table.Tbody>
          {(log.data ?? []).map((d) => {
            const last = d.attempts.at(-1);
            return (
              <Table.Tr key={d.delivery_id}>
                <Table.Td>{d.event_type}<Text size="xs" c="dimmed">{formatDateTime(d.created_at)}</Text></Table.Td>
                <Table.Td><Badge variant="dot" color={COLOR[d.status]}>{d.status}</Badge></Table.Td>
                <Table.Td>
                  {last ? `#${last.attempt}: ${last.status_code ?? last.error ?? '—'} in ${last.duration_ms} ms` : '—'}
                  {last?.response_body ? <Text size="xs" c="dimmed" lineClamp={2}>{last.response_body}</Text> : null}
                </Table.Td>
                <Table.Td>{formatDateTime(d.next_attempt_at)}</Table.Td>
                <Table.Td>{canRetry ? <Button size="xs" variant="default" loading={retry.isPending && retry.variables === d.delivery_id} onClick={() => retry.mutate(d.delivery_id)}>Retry</Button> : null}</Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </>
  );
}
