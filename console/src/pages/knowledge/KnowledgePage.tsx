import '@mantine/dropzone/styles.css';
import { useState } from 'react';
import { Button, Group, Stack, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ConfirmDelete } from '../../components/ConfirmDelete.tsx';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { DocumentsTable } from './DocumentsTable.tsx';
import { KnowledgeSearch } from './KnowledgeSearch.tsx';
import { TextDocumentForm, UploadZone } from './UploadZone.tsx';

/** Documents the agents search: upload with progress, status live until indexed, reprocess, delete, and a search showing the chunks found. */
export function KnowledgePage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const client = useQueryClient();
  const [deleting, setDeleting] = useState<Schemas['DocumentSummary'] | null>(null);
  const [addingText, setAddingText] = useState(false);
  const key = [orgId, 'documents'];
  const documents = useQuery({
    queryKey: key,
    queryFn: async () => (await unwrap(api.GET('/api/knowledge-base', { params: { query: { page_size: 100 } as never } }))).data,
    // Live while anything is still being indexed.
    refetchInterval: (query) => (query.state.data?.some((d) => d.processing_status === 'pending' || d.processing_status === 'processing') ? 1000 : false),
  });
  const refresh = () => void client.invalidateQueries({ queryKey: key });
  const manage = atLeast(role, 'agent_manager');
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Knowledge base</Title>
        {manage ? <Button variant="default" onClick={() => setAddingText((v) => !v)}>{addingText ? 'Close the text form' : 'Add a text'}</Button> : null}
      </Group>
      {manage ? <UploadZone onUploaded={refresh} /> : null}
      {manage && addingText ? <TextDocumentForm onCreated={() => { setAddingText(false); refresh(); }} /> : null}
      <ErrorAlert error={documents.error} />
      {documents.isPending ? <TableSkeleton label="Loading documents" /> : documents.data?.length === 0 ? (
        <EmptyState title="No documents yet">
          Agents answer from what you add here: upload PDF, Word or text files{manage ? ' above' : ''}, or add a text, then choose the documents on each agent.
          {manage ? '' : ' An agent manager or admin of the organization can add them.'}
        </EmptyState>
      ) : <DocumentsTable documents={documents.data ?? []} manage={manage} onDelete={setDeleting} onChanged={refresh} />}
      <KnowledgeSearch />
      <ConfirmDelete what={deleting?.name} opened={deleting !== null} onClose={() => setDeleting(null)} onDeleted={refresh}
        onDelete={() => unwrap(api.DELETE('/api/knowledge-base/{documentation_id}', { params: { path: { documentation_id: deleting!.documentation_id } } }))} />
    </Stack>
  );
}
