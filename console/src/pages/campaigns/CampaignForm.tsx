import { useState } from 'react';
import { Button, Chip, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { uploadWithProgress } from '../../api/upload.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { useAgentOptions } from '../../hooks/useAgentOptions.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';
import { browserTimeZone, timeZones } from '../analytics/time.ts';

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** A campaign (agent, outbound number, calling window), then its contacts from a CSV (phone_number, and variables as columns). */
export function CampaignForm({ onCreated }: { onCreated: () => void }) {
  const { orgId } = useCredentials();
  const [name, setName] = useState('');
  const [agentId, setAgentId] = useState<string | null>(null);
  const [numberId, setNumberId] = useState<string | null>(null);
  const [timezone, setTimezone] = useState(browserTimeZone());
  const [days, setDays] = useState(['mon', 'tue', 'wed', 'thu', 'fri']);
  const [start, setStart] = useState('09:00');
  const [end, setEnd] = useState('17:00');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState(0);
  const agents = useAgentOptions();
  const numbers = useQuery({ queryKey: [orgId, 'phone-numbers'], queryFn: async () => (await unwrap(api.GET('/api/phone-numbers', { params: { query: { page_size: 100 } } }))).data });
  const create = useMutation({
    mutationFn: async () => {
      const campaign = (await unwrap(api.POST('/api/campaigns', { body: {
        name, agent_id: agentId ?? '', from_phone_number_id: numberId ?? '', schedule: { timezone, windows: [{ days: days as never, start, end }] },
      } }))).data;
      let upload: Schemas['ContactsUploadResult'] | undefined;
      if (file) {
        const form = new FormData();
        form.append('file', file);
        upload = (await uploadWithProgress<{ data: Schemas['ContactsUploadResult'] }>(`/api/campaigns/${campaign.campaign_id}/contacts`, form, setProgress)).data;
      }
      return { campaign, upload };
    },
    onSuccess: onCreated,
  });
  if (create.data) {
    const u = create.data.upload;
    return (
      <Stack>
        <Text role="status">Created “{create.data.campaign.name}” as a draft{u ? ` with ${u.accepted} contacts (${u.rejected_count} rows refused)` : ''}. Start it from the list.</Text>
        {u?.rejected.slice(0, 10).map((r) => <Text key={r.row} size="sm">Row {r.row}: {r.reason.replaceAll('_', ' ')}</Text>)}
      </Stack>
    );
  }
  return (
    <form onSubmit={(e) => { e.preventDefault(); create.mutate(); }}>
      <Stack>
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(create.error, 'name')} />
        <Group grow>
          <Select label="Agent" required data={(agents.data ?? []).map((a) => ({ value: a.agent_id, label: a.agent_name }))} value={agentId} onChange={setAgentId} error={fieldError(create.error, 'agent_id')} />
          <Select label="Calling from" required data={(numbers.data ?? []).filter((n) => n.supports_outbound).map((n) => ({ value: n.phone_number_id, label: n.phone_number }))}
            value={numberId} onChange={setNumberId} error={fieldError(create.error, 'from_phone_number_id')} />
        </Group>
        <Select label="Time zone" data={timeZones()} value={timezone} searchable allowDeselect={false} onChange={(v) => v && setTimezone(v)} />
        <Chip.Group multiple value={days} onChange={setDays}>
          <Group gap="xs" role="group" aria-label="Days">{DAYS.map((d) => <Chip key={d} value={d} size="xs">{d}</Chip>)}</Group>
        </Chip.Group>
        <Group grow>
          <TextInput label="From" type="time" value={start} onChange={(e) => setStart(e.currentTarget.value)} />
          <TextInput label="Until" type="time" value={end} onChange={(e) => setEnd(e.currentTarget.value)} />
        </Group>
        <TextInput label="Contacts (CSV: phone_number, then variables)" type="file" accept=".csv,text/csv" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        {create.isPending && file ? <Text size="sm">Uploading contacts: {Math.round(progress * 100)}%</Text> : null}
        <ErrorAlert error={create.error} title="The campaign was not created" />
        <Group justify="flex-end"><Button type="submit" loading={create.isPending}>Create campaign</Button></Group>
      </Stack>
    </form>
  );
}
