import { useState } from 'react';
import { Button, Checkbox, Group, PasswordInput, SegmentedControl, Select, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';

type Body = Schemas['ImportPhoneNumberBody'];

/** Import by provider: carrier_a needs one of the organization's integrations; SIP the trunk's details. */
export function ImportNumberForm({ onDone }: { onDone: () => void }) {
  const { orgId } = useCredentials();
  const [body, setBody] = useState<Body>({ phone_number: '', provider: 'sip', supports_inbound: true, supports_outbound: false });
  const set = (key: keyof Body) => (value: unknown) => setBody((b) => ({ ...b, [key]: value === '' ? undefined : value }));
  const input = (key: 'phone_number' | 'sip_trunk_name' | 'sip_username' | 'sip_server_address' | 'inbound_room_name') =>
    ({ value: (body[key] as string | undefined) ?? '', onChange: (e: React.ChangeEvent<HTMLInputElement>) => set(key)(e.currentTarget.value), error: fieldError(save.error, key) });
  const integrations = useQuery({ queryKey: [orgId, 'integrations'], queryFn: async () => (await unwrap(api.GET('/api/integrations', { params: { query: { page_size: 100 } } }))).data });
  const save = useMutation({ mutationFn: () => unwrap(api.POST('/api/phone-numbers', { body })), onSuccess: onDone });
  return (
    <form onSubmit={(e) => { e.preventDefault(); save.mutate(); }}>
      <Stack>
        <SegmentedControl aria-label="Provider" value={body.provider} onChange={(v) => set('provider')(v)} data={[{ value: 'sip', label: 'SIP trunk' }, { value: 'carrier_a', label: 'carrier_a' }]} />
        <TextInput label="Number (E.164)" placeholder="+14155550100" required {...input('phone_number')} />
        <Group>
          <Checkbox label="Inbound" checked={body.supports_inbound ?? false} onChange={(e) => set('supports_inbound')(e.currentTarget.checked)} />
          <Checkbox label="Outbound" checked={body.supports_outbound ?? false} onChange={(e) => set('supports_outbound')(e.currentTarget.checked)} />
        </Group>
        {body.provider === 'carrier_a' ? (
          <Select label="Integration" required data={(integrations.data ?? []).map((i) => ({ value: i.integration_id, label: `${i.name} (${i.status})` }))}
            value={body.integration_id ?? null} onChange={set('integration_id')} error={fieldError(save.error, 'integration_id')} />
        ) : (
          <SimpleGrid cols={2}>
            <TextInput label="Trunk name" {...input('sip_trunk_name')} />
            <TextInput label="Inbound room prefix" {...input('inbound_room_name')} />
            <TextInput label="Username" {...input('sip_username')} />
            <PasswordInput label="Password" value={body.sip_password ?? ''} onChange={(e) => set('sip_password')(e.currentTarget.value)} error={fieldError(save.error, 'sip_password')} />
            <TextInput label="Server address (outbound)" {...input('sip_server_address')} />
          </SimpleGrid>
        )}
        <ErrorAlert error={save.error} title="The number was not imported" />
        <Group justify="flex-end"><Button type="submit" loading={save.isPending}>Import</Button></Group>
      </Stack>
    </form>
  );
}
