import { Code, Group, Text } from '@mantine/core';
import type { Schemas } from '../../api/client.ts';

type Turn = Schemas['TranscriptTurn'];
const ms = (value: number | null | undefined) => (value === null || value === undefined ? '—' : `${Math.round(value)} ms`);

/** What a turn adds to its text: a tool call's arguments, result, status and duration; an agent turn's latency and whether it was cut. */
export function TurnExtras({ turn }: { turn: Turn }) {
  return (
    <>
      {turn.tool ? (
        <div data-testid="tool-call">
          <Text size="xs" c="gray.8">
            <strong>{turn.tool.name}</strong> · status {turn.tool.status} · {ms(turn.tool.duration_ms)}
          </Text>
          <Text size="xs" c="gray.8">Arguments</Text>
          <Code block>{JSON.stringify(turn.tool.arguments, null, 2)}</Code>
          <Text size="xs" c="gray.8">Result</Text>
          <Code block>{JSON.stringify(turn.tool.result, null, 2)}</Code>
        </div>
      ) : null}
      {turn.latency || turn.interrupted ? (
        <Group gap="xs" data-testid="turn-latency">
          {turn.latency ? (
            <Text size="xs" c="gray.8">
              Latency {ms(turn.latency.total_ms)} (speech to text {ms(turn.latency.stt_ms)} · model first token {ms(turn.latency.llm_first_token_ms)} · speech first byte {ms(turn.latency.tts_first_byte_ms)})
            </Text>
          ) : null}
          {turn.interrupted ? <Text size="xs" fw={700} c="gray.8">Interrupted by the caller</Text> : null}
        </Group>
      ) : null}
    </>
  );
}
