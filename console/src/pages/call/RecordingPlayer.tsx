import { useState, type RefObject } from 'react';
import { Button, Group, Loader, Paper, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';

/**
 * The recording, played from its signed link (the browser seeks with HTTP Range requests, no
 * credentials in the URL beyond the signature), and a download of the whole file.
 */
export function RecordingPlayer({ callSid, audioRef, onTime }: { callSid: string; audioRef: RefObject<HTMLAudioElement | null>; onTime: (seconds: number) => void }) {
  const { orgId } = useCredentials();
  const link = useQuery({
    queryKey: [orgId, 'recording-link', callSid],
    queryFn: async () => (await unwrap(api.GET('/api/calls/{call_sid}/recording/stream', { params: { path: { call_sid: callSid } } }))).data,
    // The link is signed for an hour: a fresh one well before it ends.
    staleTime: 30 * 60_000,
    refetchInterval: 45 * 60_000,
  });
  const [download, setDownload] = useState<{ busy?: boolean; error?: unknown }>({});

  const save = async () => {
    setDownload({ busy: true });
    try {
      const blob = await unwrap(api.GET('/api/calls/{call_sid}/recording/download', { params: { path: { call_sid: callSid } }, parseAs: 'blob' })) as Blob;
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = link.data?.filename ?? `${callSid}.wav`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setDownload({});
    } catch (error) {
      setDownload({ error });
    }
  };

  return (
    <Paper withBorder p="md">
      <Group justify="space-between" mb="xs">
        <Text fw={600}>Recording</Text>
        <Button size="xs" variant="default" onClick={() => void save()} loading={download.busy}>Download</Button>
      </Group>
      {link.isPending ? <Loader size="sm" aria-label="Loading the recording" /> : null}
      <ErrorAlert error={link.error ?? download.error} title="The recording is not available" />
      {link.data ? (
        <audio ref={audioRef} controls preload="metadata" src={link.data.url} style={{ width: '100%' }} aria-label="Call recording"
          onTimeUpdate={(e) => onTime(e.currentTarget.currentTime)} onSeeked={(e) => onTime(e.currentTarget.currentTime)} />
      ) : null}
    </Paper>
  );
}
