import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ApiError } from '../api/client.ts';
import { ErrorAlert } from './ErrorAlert.tsx';

/**
 * Asks before deleting; a refusal stays in the dialog with the API's detail, and a 409 with the
 * `explain409` text saying what to do first.
 */
export function ConfirmDelete({ what, opened, onClose, onDelete, onDeleted, explain409, action = 'Delete' }: {
  what: ReactNode; opened: boolean; onClose: () => void; onDelete: () => Promise<unknown>; onDeleted: () => void; explain409?: ReactNode; action?: string;
}) {
  const remove = useMutation({ mutationFn: onDelete, onSuccess: () => { onDeleted(); onClose(); } });
  const close = () => { remove.reset(); onClose(); };
  return (
    <Modal opened={opened} onClose={close} title={`${action} ${typeof what === 'string' ? `“${what}”` : ''}?`}>
      <Stack>
        <Text>This cannot be undone.</Text>
        <ErrorAlert error={remove.error} title={`It was not ${action.toLowerCase()}d`} />
        {remove.error instanceof ApiError && remove.error.status === 409 && explain409 ? <Text size="sm">{explain409}</Text> : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>Cancel</Button>
          <Button color="red" loading={remove.isPending} onClick={() => remove.mutate()}>{action}</Button>
        </Group>
      </Stack>
    </Modal>
  );
}
