import { useEffect, useReducer, useRef, useState } from 'react';
import { Anchor, Badge, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../../../api/client.ts';
import { useCredentials } from '../../../auth/useCredentials.ts';
import { ErrorAlert } from '../../../components/ErrorAlert.tsx';
import type { PreviewEvent, TurnLatency } from './events.ts';
import { PreviewCall } from './previewCall.ts';
import { initialTalk, talkReducer, type TalkLine } from './talkState.ts';

const ms = (value: number) => `${Math.round(value)} ms`;

function LatencyLine({ latency }: { latency: TurnLatency }) {
  return (
    <Text size="xs" c="dimmed" data-testid="talk-latency">
      Latency {ms(latency.total_ms)} (speech to text {ms(latency.stt_ms)} · model first token {ms(latency.llm_first_token_ms)} · speech first byte {ms(latency.tts_first_byte_ms)})
    </Text>
  );
}

function Line({ line }: { line: TalkLine }) {
  return (
    <div data-testid="talk-line" data-role={line.role} data-final={line.final}>
      <Text size="xs" fw={700}>{line.role === 'agent' ? 'Agent' : 'You'}</Text>
      <Text size="sm" fs={line.final ? undefined : 'italic'}>{line.text}</Text>
      {line.latency ? <LatencyLine latency={line.latency} /> : null}
    </div>
  );
}

/**
 * "Talk to agent" (extensions.md §11): a preview call from the browser, with the microphone, the live
 * transcript (the caller's words as they are recognised, then final), each answer's latency, whether
 * the agent is speaking, an End button, and afterwards a link to the call's page.
 */
export function TalkPanel({ agentId }: { agentId: string }) {
  const { orgId } = useCredentials();
  const client = useQueryClient();
  const [state, dispatch] = useReducer(talkReducer, initialTalk);
  const [error, setError] = useState<unknown>(null);
  const [playback, setPlayback] = useState({ playedMs: 0, receivedFrames: 0 });
  const call = useRef<PreviewCall | null>(null);
  useEffect(() => () => call.current?.stop(), []);

  const start = async () => {
    setError(null);
    dispatch({ type: 'connecting' });
    try {
      const preview = new PreviewCall({
        event: (event: PreviewEvent) => dispatch({ type: 'event', event }),
        closed: ({ refused, reason }) => {
          if (refused) setError(new Error(`The voice runtime refused the call${reason ? `: ${reason}` : ''}`));
          dispatch({ type: 'closed' });
          void client.invalidateQueries({ queryKey: [orgId, 'calls'] });
        },
        playback: ({ playedMs, receivedFrames }) => setPlayback({ playedMs, receivedFrames }),
      });
      call.current = preview;
      // The microphone first: the call (paid, and counted against the concurrency limit) only once it is allowed.
      await preview.prepare();
      const session = (await unwrap(api.POST('/api/agents/{agent_id}/preview-sessions', { params: { path: { agent_id: agentId } } }))).data;
      dispatch({ type: 'session', callSid: session.call_sid });
      await preview.connect(session.websocket_url);
      dispatch({ type: 'live' });
    } catch (err) {
      call.current?.stop();
      setError(err instanceof DOMException && err.name === 'NotAllowedError' ? new Error('The browser did not allow the microphone') : err);
      dispatch({ type: 'closed' });
    }
  };

  const live = state.status === 'connecting' || state.status === 'live';
  return (
    <Card withBorder data-testid="talk-panel" data-status={state.status} data-agent-audio-frames={playback.receivedFrames} data-played-ms={Math.round(playback.playedMs)}>
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={2} size="h4">Talk to agent</Title>
          {live ? (
            <Badge color={state.agentSpeaking ? 'green' : 'gray'} variant={state.agentSpeaking ? 'filled' : 'light'} data-testid="agent-speaking" aria-live="polite">
              {state.agentSpeaking ? 'Agent speaking' : 'Listening'}
            </Badge>
          ) : null}
        </Group>
        <Text size="sm" c="dimmed">
          A preview call from your browser with your microphone. It runs on the agent&apos;s providers and is charged like a call, without telephony.
        </Text>
        <ErrorAlert error={error} title="The preview call could not go on" />
        <Stack gap="xs" aria-live="polite" data-testid="talk-transcript">
          {state.lines.map((line) => <Line key={line.id} line={line} />)}
        </Stack>
        <Group>
          {live ? (
            <Button color="red" onClick={() => call.current?.end()} disabled={state.status !== 'live'}>End</Button>
          ) : (
            <Button onClick={() => void start()}>{state.status === 'idle' ? 'Talk to agent' : 'Talk again'}</Button>
          )}
          {state.status === 'ended' && state.callSid ? (
            <Anchor component={Link} to={`/calls/${state.callSid}`} data-testid="talk-call-link">
              The call{state.endReason ? ` (ended: ${state.endReason.replaceAll('_', ' ')})` : ''}
            </Anchor>
          ) : null}
        </Group>
      </Stack>
    </Card>
  );
}
