import { Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * A list with nothing in it yet: what the list is for and the next action (a button for those
 * whose role allows it, otherwise who can do it), instead of a table header alone.
 */
export function EmptyState({ title, children, action }: { title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <Paper withBorder p="xl" data-testid="empty-state">
      <Stack align="flex-start" gap="xs">
        <Title order={2} size="h4">{title}</Title>
        <Text size="sm" c="dimmed" maw={560}>{children}</Text>
        {action ?? null}
      </Stack>
    </Paper>
  );
}
