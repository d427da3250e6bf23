import { useRef, useState } from 'react';
import { Anchor, Badge, Grid, Group, Loader, Paper, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { formatDateTime, humanize } from '../../format.ts';
import { CallAnalysis } from './CallAnalysis.tsx';
import { CallDetails } from './CallDetails.tsx';
import { RecordingPlayer } from './RecordingPlayer.tsx';
import { Transcript } from './Transcript.tsx';

/** One call: the transcript as a conversation following the recording, what it cost, and what it carried. */
export function CallPage() {
  const { callSid = '' } = useParams();
  const { orgId } = useCredentials();
  const audio = useRef<HTMLAudioElement>(null);
  const [position, setPosition] = useState(0);
  const call = useQuery({
    queryKey: [orgId, 'call', callSid],
    queryFn: async () => (await unwrap(api.GET('/api/calls/{call_sid}', { params: { path: { call_sid: callSid } } }))).data,
  });

  const seek = (seconds: number) => {
    const element = audio.current;
    if (!element) return;
    element.currentTime = seconds;
    void element.play().catch(() => undefined);
  };

  if (call.isPending) return <Loader aria-label="Loading the call" />;
  if (call.error) return <Stack><BackLink /><ErrorAlert error={call.error} title="The call could not be loaded" /></Stack>;
  const c = call.data;
  return (
    <Stack>
      <BackLink />
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1}>{c.call_type === 'preview' ? 'Preview call in the browser' : `Call with ${c.call_type === 'inbound' ? (c.from_number ?? 'unknown caller') : c.to_number}`}</Title>
          <Text c="dimmed" size="sm">{formatDateTime(c.start_time ?? c.created_at)} · {c.agent_name ?? c.agent_id} · <code>{c.call_sid}</code></Text>
        </div>
        <Badge size="lg" variant="dot">{humanize(c.status)}</Badge>
      </Group>
      <Grid>
        <Grid.Col span={{ base: 12, md: 8 }}>
          <Stack>
            <CallAnalysis call={c} />
            {c.has_recording ? (
              <RecordingPlayer callSid={c.call_sid} audioRef={audio} onTime={setPosition} />
            ) : (
              <Text c="dimmed" size="sm">{c.recording_deleted_at ? `The recording was deleted on ${formatDateTime(c.recording_deleted_at)} (retention).` : 'No recording.'}</Text>
            )}
            <Paper withBorder p="md">
              <Title order={2} size="h4" mb="sm">Transcript</Title>
              <Transcript turns={c.transcript} position={c.has_recording ? position : null} onSeek={c.has_recording ? seek : undefined}
                deletedAt={c.transcript_deleted_at} />
            </Paper>
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <CallDetails call={c} />
        </Grid.Col>
      </Grid>
    </Stack>
  );
}

function BackLink() {
  return <Anchor component={Link} to="/calls" size="sm">← All calls</Anchor>;
}
