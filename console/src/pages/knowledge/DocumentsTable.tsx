import { Badge, Button, Group, Table, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { formatDateTime } from '../../format.ts';

const STATUS_COLOR: Record<string, string> = { completed: 'green', failed: 'red', processing: 'blue', pending: 'gray' };

export function DocumentsTable({ documents, manage, onDelete, onChanged }: {
  documents: Array<Schemas['DocumentSummary']>; manage: boolean; onDelete: (d: Schemas['DocumentSummary']) => void; onChanged: () => void;
}) {
  return (
    <Table.ScrollContainer minWidth={700}>
      <Table striped aria-label="Documents" data-testid="documents">
        <Table.Thead>
          <Table.Tr><Table.Th>Name</Table.Th><Table.Th>Status</Table.Th><Table.Th ta="right">Pages</Table.Th><Table.Th ta="right">Words</Table.Th><Table.Th ta="right">Chunks</Table.Th><Table.Th>Added</Table.Th><Table.Th /></Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {documents.map((d) => (
            <Table.Tr key={d.documentation_id} data-status={d.processing_status}>
              <Table.Td>{d.name}{d.type === 'text' ? <Text span size="xs" c="dimmed"> (text)</Text> : null}</Table.Td>
              <Table.Td>
                <Badge variant="dot" color={STATUS_COLOR[d.processing_status]}>{d.processing_status}</Badge>
                {d.processing_status === 'failed' ? <FailureReason documentId={d.documentation_id} /> : null}
              </Table.Td>
              <Table.Td ta="right">{d.page_count ?? '—'}</Table.Td>
              <Table.Td ta="right">{d.word_count?.toLocaleString() ?? '—'}</Table.Td>
              <Table.Td ta="right">{d.vector_count}</Table.Td>
              <Table.Td>{formatDateTime(d.created_at)}</Table.Td>
              <Table.Td>
                {manage ? (
                  <Group gap="xs" wrap="nowrap">
                    {d.processing_status === 'failed' || d.processing_status === 'completed' ? <Reprocess documentId={d.documentation_id} onDone={onChanged} /> : null}
                    <Button size="xs" variant="default" onClick={() => onDelete(d)}>Delete</Button>
                  </Group>
                ) : null}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

function FailureReason({ documentId }: { documentId: string }) {
  const { orgId } = useCredentials();
  const doc = useQuery({
    queryKey: [orgId, 'document', documentId],
    queryFn: async () => (await unwrap(api.GET('/api/knowledge-base/{documentation_id}', { params: { path: { documentation_id: documentId } } }))).data,
  });
  return doc.data?.processing_error ? <Text size="xs" c="red.9">{doc.data.processing_error}</Text> : null;
}

function Reprocess({ documentId, onDone }: { documentId: string; onDone: () => void }) {
  const run = useMutation({
    mutationFn: () => unwrap(api.POST('/api/knowledge-base/{documentation_id}/reprocess', { params: { path: { documentation_id: documentId } } })),
    onSuccess: onDone,
  });
  return (
    <>
      <Button size="xs" variant="default" loading={run.isPending} onClick={() => run.mutate()}>Reprocess</Button>
      <ErrorAlert error={run.error} />
    </>
  );
}
