import { ActionIcon, Button, Checkbox, Group, Paper, Select, Stack, TagsInput, Text, TextInput } from '@mantine/core';
import { FIELD_TYPES, newField, type DataField } from './schemaFields.ts';

/**
 * The structured data the analysis extracts, one row per field: name, type (string, number,
 * boolean, or enum with its values), a description for the model, and whether it is required.
 */
export function FieldBuilder({ fields, onChange, readOnly }: { fields: DataField[]; onChange: (fields: DataField[]) => void; readOnly: boolean }) {
  const set = (i: number, change: Partial<DataField>) => onChange(fields.map((f, k) => (k === i ? { ...f, ...change } : f)));
  return (
    <Stack gap="xs" data-testid="field-builder">
      {fields.length === 0 ? <Text size="sm" c="dimmed">No fields: the analysis extracts no structured data.</Text> : null}
      {fields.map((field, i) => {
        const which = field.name.trim() || `field ${i + 1}`;
        return (
          <Paper key={i} withBorder p="xs" data-testid="data-field">
            <Group align="flex-end" wrap="wrap" gap="sm">
              <TextInput label={`Name of field ${i + 1}`} value={field.name} onChange={(e) => set(i, { name: e.currentTarget.value })} w={180} disabled={readOnly} />
              <Select label={`Type of ${which}`} data={[...FIELD_TYPES]} value={field.type} allowDeselect={false} w={130} disabled={readOnly}
                onChange={(v) => v && set(i, { type: v as DataField['type'] })} />
              {field.type === 'enum' ? (
                <TagsInput label={`Values of ${which}`} description="Enter after each" value={field.values} onChange={(values) => set(i, { values })} w={240} disabled={readOnly} />
              ) : null}
              <TextInput label={`Description of ${which}`} value={field.description} onChange={(e) => set(i, { description: e.currentTarget.value })} style={{ flex: 1 }} miw={200} disabled={readOnly} />
              <Checkbox label="Required" aria-label={`${which} is required`} checked={field.required} onChange={(e) => set(i, { required: e.currentTarget.checked })} mb={8} disabled={readOnly} />
              {readOnly ? null : (
                <ActionIcon variant="subtle" color="red" size="lg" mb={2} aria-label={`Remove ${which}`} onClick={() => onChange(fields.filter((_, k) => k !== i))}>✕</ActionIcon>
              )}
            </Group>
          </Paper>
        );
      })}
      {readOnly ? null : <Group><Button variant="default" size="xs" onClick={() => onChange([...fields, newField()])}>Add a field</Button></Group>}
    </Stack>
  );
}
