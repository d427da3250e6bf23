import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../../api/client.ts';
import { useCredentials } from '../../../auth/useCredentials.ts';
import { ErrorAlert } from '../../../components/ErrorAlert.tsx';
import type { AgentVersion } from './versions.ts';

/**
 * Asks before restoring: a restore makes a new version equal to the old one, sets the agent to it and
 * clears the traffic split (docs/api.md), so the restored configuration takes every new call at once.
 */
export function RestoreDialog({ agent, version, onClose }: { agent: Schemas['Agent']; version: AgentVersion | null; onClose: () => void }) {
  const { orgId } = useCredentials();
  const client = useQueryClient();
  const restore = useMutation({
    mutationFn: async (number: number) => (await unwrap(api.POST('/api/agents/{agent_id}/versions/{version}/restore', {
      params: { path: { agent_id: agent.agent_id, version: String(number) } },
    }))).data,
    onSuccess: (restored) => {
      notifications.show({ message: `Version ${version?.version} restored as version ${restored.version}`, color: 'green' });
      void client.invalidateQueries({ queryKey: [orgId, 'agent', agent.agent_id] });
      void client.invalidateQueries({ queryKey: [orgId, 'agents'] });
      close();
    },
  });
  const close = () => { restore.reset(); onClose(); };
  return (
    <Modal opened={version !== null} onClose={close} title={`Restore version ${version?.version ?? ''}?`}>
      <Stack>
        <Text size="sm">
          The agent gets the configuration of version {version?.version} as a new version {agent.version + 1}; the versions in between stay in the history.
          {agent.traffic ? ' The traffic split is cleared: the restored version takes every new call.' : ''}
        </Text>
        <ErrorAlert error={restore.error} title="It was not restored" />
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>Cancel</Button>
          <Button loading={restore.isPending} onClick={() => version && restore.mutate(version.version)}>Restore version {version?.version}</Button>
        </Group>
      </Stack>
    </Modal>
  );
}
