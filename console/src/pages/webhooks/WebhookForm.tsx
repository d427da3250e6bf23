import { useState } from 'react';
import { Alert, Button, CopyButton, Group, MultiSelect, Stack, Text, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';

const EVENT_TYPES = [
  'call.created', 'call.updated', 'call.ended', 'recording.ready', 'document.completed', 'document.failed', 'credits.purchased', 'credits.low',
  'agent.created', 'agent.updated', 'agent.deleted', 'phone_number.imported', 'phone_number.deleted', 'api_key.created', 'api_key.revoked',
  'invitation.accepted', 'member.removed', 'campaign.completed',
];

/** A new endpoint; its signing secret is shown once. */
export function WebhookForm({ onCreated }: { onCreated: () => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<string[]>([]);
  const create = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/api/webhooks', { body: { url, description, event_types: types as never } }))).data,
    onSuccess: onCreated,
  });
  if (create.data) {
    return (
      <Stack>
        <Alert color="yellow" title="Copy the signing secret now">It is shown only this once (Standard Webhooks signatures).</Alert>
        <Text ff="monospace" data-testid="webhook-secret" style={{ wordBreak: 'break-all' }}>{create.data.secret}</Text>
        <CopyButton value={create.data.secret}>{({ copied, copy }) => <Button onClick={copy}>{copied ? 'Copied' : 'Copy secret'}</Button>}</CopyButton>
      </Stack>
    );
  }
  return (
    <form onSubmit={(e) => { e.preventDefault(); create.mutate(); }}>
      <Stack>
        <TextInput label="URL" required placeholder="https://crm.example.com/switchboard" value={url} onChange={(e) => setUrl(e.currentTarget.value)} error={fieldError(create.error, 'url')} />
        <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <MultiSelect label="Events" placeholder="Every event" data={EVENT_TYPES} value={types} onChange={setTypes} searchable clearable />
        <ErrorAlert error={create.error} title="The endpoint was not added" />
        <Group justify="flex-end"><Button type="submit" loading={create.isPending}>Add endpoint</Button></Group>
      </Stack>
    </form>
  );
}
