import { ActionIcon, Button, Checkbox, Fieldset, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import type { Schemas } from '../../api/client.ts';

type Parameter = NonNullable<Schemas['CreateToolBody']['parameters']>[number];
const TYPES: Parameter['type'][] = ['string', 'number', 'integer', 'boolean', 'object', 'array'];

/**
 * The arguments the model passes when it calls the tool (the API replaces the whole list on save).
 * `error` is the API's message for any `parameters` field, shown under the list.
 */
export function ParametersEditor({ value, onChange, error }: { value: Parameter[]; onChange: (next: Parameter[]) => void; error?: string }) {
  const update = (i: number, patch: Partial<Parameter>) => onChange(value.map((p, j) => (j === i ? { ...p, ...patch } : p)));
  return (
    <Fieldset legend="Parameters the model fills in">
      <Stack gap="xs">
        {value.map((p, i) => (
          <Group key={i} align="flex-end" wrap="nowrap" data-testid="tool-parameter">
            <TextInput label={`Parameter ${i + 1} name`} value={p.name} onChange={(e) => update(i, { name: e.currentTarget.value })} />
            <Select label={`Parameter ${i + 1} type`} data={TYPES} value={p.type} allowDeselect={false} onChange={(t) => update(i, { type: t as Parameter['type'] })} w={110} />
            <TextInput label={`Parameter ${i + 1} description`} value={p.description ?? ''} onChange={(e) => update(i, { description: e.currentTarget.value || undefined })} style={{ flex: 1 }} />
            <Checkbox label="Required" checked={p.required ?? false} onChange={(e) => update(i, { required: e.currentTarget.checked })} mb={8} />
            <ActionIcon variant="default" aria-label={`Remove parameter ${i + 1}`} onClick={() => onChange(value.filter((_, j) => j !== i))} mb={4}>×</ActionIcon>
          </Group>
        ))}
        {error ? <Text c="red" size="sm" role="alert">{error}</Text> : null}
        <Group><Button variant="default" size="xs" onClick={() => onChange([...value, { name: '', type: 'string' }])}>Add parameter</Button></Group>
      </Stack>
    </Fieldset>
  );
}

/** Headers sent with every call of the webhook, as name/value rows (an object on the wire). */
export function HeadersEditor({ value, onChange, error }: { value: Array<[string, string]>; onChange: (next: Array<[string, string]>) => void; error?: string }) {
  const update = (i: number, pair: [string, string]) => onChange(value.map((p, j) => (j === i ? pair : p)));
  return (
    <Fieldset legend="Headers sent with every call">
      <Stack gap="xs">
        {value.map(([name, content], i) => (
          <Group key={i} align="flex-end" wrap="nowrap" data-testid="tool-header">
            <TextInput label={`Header ${i + 1} name`} value={name} onChange={(e) => update(i, [e.currentTarget.value, content])} />
            <TextInput label={`Header ${i + 1} value`} value={content} onChange={(e) => update(i, [name, e.currentTarget.value])} style={{ flex: 1 }} />
            <ActionIcon variant="default" aria-label={`Remove header ${i + 1}`} onClick={() => onChange(value.filter((_, j) => j !== i))} mb={4}>×</ActionIcon>
          </Group>
        ))}
        {error ? <Text c="red" size="sm" role="alert">{error}</Text> : null}
        <Group><Button variant="default" size="xs" onClick={() => onChange([...value, ['', '']])}>Add header</Button></Group>
      </Stack>
    </Fieldset>
  );
}
