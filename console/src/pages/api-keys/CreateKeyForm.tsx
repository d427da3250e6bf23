import { useState } from 'react';
import { Alert, Button, CopyButton, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';
import { atLeast, type Role } from '../../hooks/useMe.ts';

const ROLES: Role[] = ['user', 'agent_manager', 'admin'];

/** Creates a key (no role above the caller's is offered) and shows the full key, once, with a copy button. */
export function CreateKeyForm({ maxRole, onDone }: { maxRole: Role | undefined; onDone: () => void }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('user');
  const [expires, setExpires] = useState('');
  const create = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/api/api-keys', {
      body: { name, role, ...(expires ? { expires_at: new Date(`${expires}T23:59:59`).toISOString() } : {}) },
    }))).data,
    onSuccess: onDone,
  });

  if (create.data) {
    return (
      <Stack>
        <Alert color="yellow" title="Copy the key now">It is shown only this once; Switchboard keeps only its hash.</Alert>
        <Text ff="monospace" data-testid="new-key" style={{ wordBreak: 'break-all' }}>{create.data.key}</Text>
        <CopyButton value={create.data.key}>
          {({ copied, copy }) => <Button onClick={copy} color={copied ? 'green.9' : undefined}>{copied ? 'Copied' : 'Copy key'}</Button>}
        </CopyButton>
      </Stack>
    );
  }
  return (
    <form onSubmit={(e) => { e.preventDefault(); create.mutate(); }}>
      <Stack>
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(create.error, 'name')} />
        <Select label="Role" data={ROLES.filter((r) => atLeast(maxRole, r))} value={role} allowDeselect={false} onChange={(v) => v && setRole(v as Role)}
          error={fieldError(create.error, 'role')} />
        <TextInput label="Expires (optional)" type="date" value={expires} onChange={(e) => setExpires(e.currentTarget.value)} error={fieldError(create.error, 'expires_at')} />
        <ErrorAlert error={create.error} />
        <Group justify="flex-end"><Button type="submit" loading={create.isPending}>Create key</Button></Group>
      </Stack>
    </form>
  );
}
