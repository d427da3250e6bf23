import { useState } from 'react';
import { Alert, Anchor, Button, Checkbox, Group, Loader, Popover, SegmentedControl, Stack, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import type { CallQuery } from './filters.ts';

type Format = 'csv' | 'jsonl';
type CreateBody = Schemas['CreateCallExportBody'];

/**
 * Exports the calls the page's filters select (POST /api/calls/exports), then polls the export
 * until the worker has written the file: its status while it runs, the download link once completed.
 */
export function ExportButton({ filters }: { filters: Partial<CallQuery> }) {
  const { orgId } = useCredentials();
  const [opened, setOpened] = useState(false);
  const [format, setFormat] = useState<Format>('csv');
  const [transcripts, setTranscripts] = useState(false);
  const [exportId, setExportId] = useState<string | null>(null);

  const create = useMutation({
    mutationFn: async () => {
      const body = { ...filters, format, include_transcript: transcripts } as unknown as CreateBody;
      return (await unwrap(api.POST('/api/calls/exports', { body }))).data;
    },
    onSuccess: (created) => setExportId(created.export_id),
  });
  const view = useQuery({
    queryKey: [orgId, 'call-export', exportId],
    enabled: exportId !== null,
    queryFn: async () => (await unwrap(api.GET('/api/calls/exports/{export_id}', { params: { path: { export_id: exportId! } } }))).data,
    refetchInterval: (query) => (['completed', 'failed'].includes(query.state.data?.status ?? '') ? false : 1_000),
  });
  const current: Schemas['CallExport'] | undefined = view.data ?? create.data;

  return (
    <Popover opened={opened} onChange={setOpened} position="bottom-end" width={320} withArrow trapFocus>
      <Popover.Target>
        <Button variant="default" size="xs" onClick={() => setOpened((o) => !o)} aria-expanded={opened}>Export</Button>
      </Popover.Target>
      <Popover.Dropdown aria-label="Export the calls">
        <Stack gap="xs">
          <Text size="sm">The calls matching the current filters, as a file.</Text>
          <SegmentedControl aria-label="Format" value={format} onChange={(v) => setFormat(v as Format)}
            data={[{ value: 'csv', label: 'CSV' }, { value: 'jsonl', label: 'JSONL' }]} />
          <Checkbox label="Include transcripts" checked={transcripts} onChange={(e) => setTranscripts(e.currentTarget.checked)} />
          <Button size="xs" onClick={() => { setExportId(null); create.mutate(); }} loading={create.isPending}>Start export</Button>
          <ErrorAlert error={create.error ?? view.error} title="The export could not be started" />
          {current ? <ExportStatus view={current} /> : null}
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}

function ExportStatus({ view }: { view: Schemas['CallExport'] }) {
  if (view.status === 'failed') {
    return <Alert color="red" title="The export failed" data-testid="export-status">{view.error ?? 'No reason was given.'}</Alert>;
  }
  if (view.status !== 'completed') {
    return (
      <Group gap="xs" data-testid="export-status" aria-live="polite">
        <Loader size="xs" aria-label="Exporting" />
        <Text size="sm">{view.status === 'pending' ? 'Waiting for a worker…' : 'Writing the file…'}{view.row_count ? ` ${view.row_count.toLocaleString()} calls` : ''}</Text>
      </Group>
    );
  }
  return (
    <Stack gap={4} data-testid="export-status" aria-live="polite">
      <Text size="sm">Completed: <span data-testid="export-rows">{view.row_count ?? 0}</span> calls, {formatBytes(view.bytes ?? 0)}.</Text>
      {view.download_url ? <Anchor href={view.download_url} download size="sm">Download {view.format.toUpperCase()}</Anchor> : null}
      <Text size="xs" c="dimmed">The link works for an hour; the export is kept 7 days.</Text>
    </Stack>
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
