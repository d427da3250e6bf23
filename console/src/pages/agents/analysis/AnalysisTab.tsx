import { useState } from 'react';
import { Alert, Button, Code, Fieldset, Group, List, Paper, Select, Stack, Switch, Text, Textarea, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../../api/client.ts';
import { useCredentials } from '../../../auth/useCredentials.ts';
import { ErrorAlert } from '../../../components/ErrorAlert.tsx';
import { fieldError } from '../../../components/apiErrors.ts';
import { useUnsavedChangesGuard } from '../../../hooks/useUnsavedChangesGuard.ts';
import { FieldBuilder } from './FieldBuilder.tsx';
import { canonicalJson, fieldProblems, fieldsOf, schemaOf, type DataField } from './schemaFields.ts';

type Settings = Schemas['AnalysisSettings'];
const AGENTS_LLM = 'agent';

/**
 * The agent's post-call analysis (extensions.md §13): on or off, how to summarize, what makes a call a
 * success, the structured data to extract (built field by field into a JSON Schema) and the language
 * model asked. Saved as the agent's `analysis`, so it is versioned like the rest.
 */
export function AnalysisTab({ agent, readOnly }: { agent: Schemas['Agent']; readOnly: boolean }) {
  const { orgId } = useCredentials();
  const client = useQueryClient();
  const saved: Settings = agent.analysis ?? { enabled: false };
  const [enabled, setEnabled] = useState(saved.enabled);
  const [summaryPrompt, setSummaryPrompt] = useState(saved.summary_prompt ?? '');
  const [criteria, setCriteria] = useState(saved.success_criteria ?? '');
  const [llm, setLlm] = useState(saved.llm_integration_id ?? AGENTS_LLM);
  // A schema the builder cannot show (made through the API) is kept and edited as JSON.
  const [fields, setFields] = useState<DataField[] | null>(() => fieldsOf(saved.structured_data_schema));
  const [rawSchema, setRawSchema] = useState(() => (fields === null ? JSON.stringify(saved.structured_data_schema, null, 2) : ''));
  const integrations = useQuery({ queryKey: [orgId, 'integrations'], queryFn: async () => (await unwrap(api.GET('/api/integrations', { params: { query: { page_size: 100 } } }))).data });

  let schema: Record<string, unknown> | null = null;
  const problems = fields ? fieldProblems(fields) : [];
  if (fields) schema = schemaOf(fields);
  else {
    try { schema = rawSchema.trim() ? JSON.parse(rawSchema) as Record<string, unknown> : null; } catch { problems.push('The schema is not valid JSON.'); }
  }
  const settings: Settings = {
    enabled, summary_prompt: summaryPrompt.trim() || null, success_criteria: criteria.trim() || null,
    structured_data_schema: schema, llm_integration_id: llm === AGENTS_LLM ? null : llm,
  };
  const baseline: Settings = { enabled: saved.enabled, summary_prompt: saved.summary_prompt ?? null, success_criteria: saved.success_criteria ?? null,
    structured_data_schema: saved.structured_data_schema ?? null, llm_integration_id: saved.llm_integration_id ?? null };
  useUnsavedChangesGuard(!readOnly && canonicalJson(settings) !== canonicalJson(baseline));

  const save = useMutation({
    mutationFn: async () => (await unwrap(api.PATCH('/api/agents/{agent_id}', { params: { path: { agent_id: agent.agent_id } }, body: { analysis: settings } }))).data,
    onSuccess: (updated) => {
      notifications.show({ message: `Analysis settings saved as version ${updated.version}`, color: 'green' });
      void client.invalidateQueries({ queryKey: [orgId, 'agent', agent.agent_id] });
    },
  });
  const llms = (integrations.data ?? []).filter((i) => i.category === 'llm');
  return (
    <form aria-label="Post-call analysis" onSubmit={(e) => { e.preventDefault(); if (problems.length === 0) save.mutate(); }}>
      <Fieldset disabled={readOnly} variant="unstyled">
        <Stack>
          <Text size="sm" c="dimmed">After each call with a transcript, a language model summarizes it, judges its success and extracts the data below; the call page shows the result.</Text>
          <Switch label="Analyze calls after they end" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          <Textarea label="Summary prompt" description="How to summarize the call; empty: a few sentences" autosize minRows={2} maxRows={8}
            value={summaryPrompt} onChange={(e) => setSummaryPrompt(e.currentTarget.value)} error={fieldError(save.error, 'analysis.summary_prompt')} />
          <Textarea label="Success criteria" description="What makes a call a success; empty: success is not judged" autosize minRows={2} maxRows={8}
            value={criteria} onChange={(e) => setCriteria(e.currentTarget.value)} error={fieldError(save.error, 'analysis.success_criteria')} />
          <Select label="Language model integration" data={[{ value: AGENTS_LLM, label: "The agent's own" }, ...llms.map((i) => ({ value: i.integration_id, label: i.name }))]}
            value={llm} allowDeselect={false} onChange={(v) => setLlm(v ?? AGENTS_LLM)} w={320} error={fieldError(save.error, 'analysis.llm_integration_id')} />
          <Paper withBorder p="md">
            <Title order={2} size="h5" mb="xs">Structured data</Title>
            {fields ? <FieldBuilder fields={fields} onChange={setFields} readOnly={readOnly} /> : (
              <Stack gap="xs">
                <Text size="sm">This schema has more than the field builder makes; edit it as JSON Schema (draft-07, an object).</Text>
                <Textarea label="Schema (JSON)" autosize minRows={6} maxRows={20} ff="monospace" value={rawSchema} onChange={(e) => setRawSchema(e.currentTarget.value)} />
                {readOnly ? null : <Group><Button variant="default" size="xs" onClick={() => { setFields([]); setRawSchema(''); }}>Start over with the field builder</Button></Group>}
              </Stack>
            )}
            {schema ? (
              <>
                <Title order={3} size="h6" mt="sm" mb={4}>JSON Schema saved</Title>
                <Code block data-testid="schema-preview">{JSON.stringify(schema, null, 2)}</Code>
              </>
            ) : null}
          </Paper>
          {problems.length ? (
            <Alert color="orange" role="status" title="Not ready to save"><List size="sm">{problems.map((p) => <List.Item key={p}>{p}</List.Item>)}</List></Alert>
          ) : null}
          <ErrorAlert error={save.error} title="The analysis settings were not saved" />
          {readOnly ? null : <Group><Button type="submit" disabled={problems.length > 0} loading={save.isPending}>Save analysis settings</Button></Group>}
        </Stack>
      </Fieldset>
    </form>
  );
}
