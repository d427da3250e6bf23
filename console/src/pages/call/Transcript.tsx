import { useEffect, useRef } from 'react';
import { Box, Group, Stack, Text, UnstyledButton, VisuallyHidden } from '@mantine/core';
import type { Schemas } from '../../api/client.ts';
import { formatDateTime, formatDuration } from '../../format.ts';
import classes from './Transcript.module.css';
import { TurnExtras } from './TurnExtras.tsx';

type Turn = Schemas['TranscriptTurn'];

/** The turn being played: the last one that started at or before the position. */
export function activeTurn(turns: Turn[], position: number | null): number {
  if (position === null) return -1;
  let active = -1;
  turns.forEach((turn, i) => { if (turn.start_seconds <= position + 0.05) active = i; });
  return active;
}

const SPEAKER: Record<string, string> = { agent: 'Agent', user: 'Caller', system: 'System', tool: 'Tool' };

/** The transcript as a conversation; with a recording, the turn being played is highlighted and a click plays from a turn. */
export function Transcript({ turns, position, onSeek, deletedAt }: { turns: Turn[]; position: number | null; onSeek?: (seconds: number) => void; deletedAt: string | null }) {
  const active = activeTurn(turns, position);
  const list = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (active < 0) return;
    list.current?.querySelector(`[data-turn="${active}"]`)?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [active]);

  if (turns.length === 0) {
    return <Text c="dimmed" size="sm">{deletedAt ? `The transcript was deleted on ${formatDateTime(deletedAt)} (retention).` : 'No transcript.'}</Text>;
  }
  return (
    <Stack gap="xs" ref={list} className={classes.list}>
      {turns.map((turn, i) => {
        const content = (
          <>
            <Group gap="xs" justify="space-between">
              <Text size="xs" fw={700}>{SPEAKER[turn.role] ?? turn.role}</Text>
              {/* The bubbles are light in both themes: the time in a gray readable on them. */}
              <Text size="xs" c="gray.7">{formatDuration(turn.start_seconds)}</Text>
            </Group>
            <Text size="sm" className={classes.text}>{turn.text}</Text>
            <TurnExtras turn={turn} />
          </>
        );
        const props = { 'data-turn': i, 'data-role': turn.role, 'data-active': i === active || undefined, className: classes.turn, 'aria-current': i === active ? ('true' as const) : undefined };
        return onSeek ? (
          <UnstyledButton key={i} {...props} onClick={() => onSeek(turn.start_seconds)}>
            <VisuallyHidden>Play from {formatDuration(turn.start_seconds)}: </VisuallyHidden>
            {content}
          </UnstyledButton>
        ) : (
          <Box key={i} {...props}>{content}</Box>
        );
      })}
    </Stack>
  );
}
