import { useState } from 'react';
import { Button, Group, NumberInput, Select, Stack, TextInput, Textarea } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';
import { HeadersEditor, ParametersEditor } from './ToolFields.tsx';

type Body = Schemas['CreateToolBody'];

export function ToolForm({ tool, onSaved }: { tool?: Schemas['Tool']; onSaved: () => void }) {
  const [body, setBody] = useState<Body>(() => ({
    tool_name: tool?.tool_name ?? '', tool_description: tool?.tool_description ?? '', webhook_url: tool?.webhook_url ?? '',
    http_method: (tool?.http_method as Body['http_method']) ?? 'POST', timeout_seconds: tool?.timeout_seconds ?? 10,
  }));
  const [parameters, setParameters] = useState<NonNullable<Body['parameters']>>(() => (tool?.parameters as Body['parameters']) ?? []);
  const [headers, setHeaders] = useState<Array<[string, string]>>(() => Object.entries(tool?.headers ?? {}));
  const set = (key: keyof Body) => (value: unknown) => setBody((b) => ({ ...b, [key]: value }));
  const save = useMutation({
    mutationFn: () => {
      // Both replace the tool's whole list on the server: the form always holds all of them. A header row without a name is left out.
      const full = { ...body, parameters, headers: Object.fromEntries(headers.filter(([name]) => name.trim() !== '')) };
      return tool
        ? unwrap(api.PATCH('/api/tools/{tool_id}', { params: { path: { tool_id: tool.tool_id } }, body: full }))
        : unwrap(api.POST('/api/tools', { body: full }));
    },
    onSuccess: onSaved,
  });
  return (
    <form onSubmit={(e) => { e.preventDefault(); save.mutate(); }}>
      <Stack>
        <TextInput label="Name" description="letters, digits and _ (the model calls it by this name)" required value={body.tool_name} onChange={(e) => set('tool_name')(e.currentTarget.value)} error={fieldError(save.error, 'tool_name')} />
        <Textarea label="Description" required value={body.tool_description} onChange={(e) => set('tool_description')(e.currentTarget.value)} error={fieldError(save.error, 'tool_description')} />
        <Group grow>
          <Select label="Method" data={['GET', 'POST', 'PUT', 'PATCH', 'DELETE']} value={body.http_method ?? 'POST'} allowDeselect={false} onChange={set('http_method')} />
          <NumberInput label="Timeout (s)" min={1} max={60} value={body.timeout_seconds} onChange={(v) => set('timeout_seconds')(Number(v))} error={fieldError(save.error, 'timeout_seconds')} />
        </Group>
        <TextInput label="Webhook URL" required value={body.webhook_url} onChange={(e) => set('webhook_url')(e.currentTarget.value)} error={fieldError(save.error, 'webhook_url')} />
        <ParametersEditor value={parameters} onChange={setParameters} error={fieldError(save.error, 'parameters')} />
        <HeadersEditor value={headers} onChange={setHeaders} error={fieldError(save.error, 'headers')} />
        <ErrorAlert error={save.error} title="The tool was not saved" />
        <Group justify="flex-end"><Button type="submit" loading={save.isPending}>{tool ? 'Save changes' : 'Create tool'}</Button></Group>
      </Stack>
    </form>
  );
}
