import { useState } from 'react';
import { Button, Fieldset, Group, MultiSelect, NumberInput, Select, SimpleGrid, Stack, Switch, TextInput, Textarea } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';

// The documented provider lists (the API refuses others); models are free-form.
const STT = ['deepgram', 'assemblyai', 'whisper'];
const TTS = ['elevenlabs', 'cartesia', 'openai', 'azure'];
const LLM = ['openai', 'anthropic', 'groq', 'google'];

type Body = Schemas['CreateAgentBody'];
const DEFAULTS: Body = {
  agent_name: '', language: 'EN', stt_provider: 'deepgram', stt_model: null, tts_provider: 'elevenlabs', tts_model: null, voice_id: null,
  llm_provider: 'openai', llm_model: 'gpt-4o-mini', system_prompt: '', first_message: null, temperature: 0.7, max_call_duration_seconds: 1800,
  recording_enabled: false, tool_ids: [], documentation_ids: [],
};

export function AgentForm({ agent, readOnly, onSaved }: { agent?: Schemas['Agent']; readOnly: boolean; onSaved: (agentId: string) => void }) {
  const { orgId } = useCredentials();
  const [values, setValues] = useState<Body>(() => (agent ? Object.fromEntries(Object.keys(DEFAULTS).map((k) => [k, agent[k as keyof Schemas['Agent']]])) as Body : DEFAULTS));
  const set = <K extends keyof Body>(key: K) => (value: Body[K]) => setValues((v) => ({ ...v, [key]: value }));
  const text = (key: 'agent_name' | 'language' | 'llm_model') => ({ value: values[key] ?? '', onChange: (e: React.ChangeEvent<HTMLInputElement>) => set(key)(e.currentTarget.value), error: fieldError(save.error, key) });
  const optional = (key: 'stt_model' | 'tts_model' | 'voice_id' | 'first_message') => ({ value: values[key] ?? '', onChange: (e: React.ChangeEvent<HTMLInputElement>) => set(key)(e.currentTarget.value || null), error: fieldError(save.error, key) });
  const tools = useQuery({ queryKey: [orgId, 'tools'], queryFn: async () => (await unwrap(api.GET('/api/tools', { params: { query: { page_size: 100 } } }))).data });
  const docs = useQuery({ queryKey: [orgId, 'documents', 'options'], queryFn: async () => (await unwrap(api.GET('/api/knowledge-base', { params: { query: { page_size: 100 } as never } }))).data });
  const save = useMutation({
    mutationFn: async () => (agent
      ? (await unwrap(api.PATCH('/api/agents/{agent_id}', { params: { path: { agent_id: agent.agent_id } }, body: values }))).data
      : (await unwrap(api.POST('/api/agents', { body: values }))).data),
    onSuccess: (saved) => { notifications.show({ message: `Saved “${saved.agent_name}”`, color: 'green' }); onSaved(saved.agent_id); },
  });

  return (
    <form onSubmit={(e) => { e.preventDefault(); save.mutate(); }}>
      <Fieldset disabled={readOnly} variant="unstyled">
        <Stack>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label="Name" required {...text('agent_name')} />
            <TextInput label="Language" description="EN, EN-US, DE…" {...text('language')} />
            <Select label="Speech to text" data={STT} value={values.stt_provider} allowDeselect={false} onChange={(v) => v && set('stt_provider')(v as Body['stt_provider'])} error={fieldError(save.error, 'stt_provider')} />
            <TextInput label="Speech-to-text model" {...optional('stt_model')} />
            <Select label="Language model" data={LLM} value={values.llm_provider} allowDeselect={false} onChange={(v) => v && set('llm_provider')(v as Body['llm_provider'])} error={fieldError(save.error, 'llm_provider')} />
            <TextInput label="Model" {...text('llm_model')} />
            <Select label="Text to speech" data={TTS} value={values.tts_provider} allowDeselect={false} onChange={(v) => v && set('tts_provider')(v as Body['tts_provider'])} error={fieldError(save.error, 'tts_provider')} />
            <TextInput label="Text-to-speech model" {...optional('tts_model')} />
            <TextInput label="Voice id" {...optional('voice_id')} />
            <NumberInput label="Temperature" min={0} max={2} step={0.1} decimalScale={2} value={values.temperature} onChange={(v) => set('temperature')(Number(v))} error={fieldError(save.error, 'temperature')} />
            <NumberInput label="Longest call (seconds)" min={10} max={14400} value={values.max_call_duration_seconds} onChange={(v) => set('max_call_duration_seconds')(Number(v))} error={fieldError(save.error, 'max_call_duration_seconds')} />
            <Switch label="Record calls" checked={values.recording_enabled ?? false} onChange={(e) => set('recording_enabled')(e.currentTarget.checked)} mt="xl" />
          </SimpleGrid>
          <Textarea label="System prompt" autosize minRows={4} maxRows={16} value={values.system_prompt ?? ''} onChange={(e) => set('system_prompt')(e.currentTarget.value)} error={fieldError(save.error, 'system_prompt')} />
          <TextInput label="First message" {...optional('first_message')} />
          <MultiSelect label="Tools" searchable data={(tools.data ?? []).map((t) => ({ value: t.tool_id, label: t.tool_name }))} value={values.tool_ids ?? []} onChange={set('tool_ids')} error={fieldError(save.error, 'tool_ids')} />
          <MultiSelect label="Knowledge-base documents" searchable data={(docs.data ?? []).map((d) => ({ value: d.documentation_id, label: d.name }))} value={values.documentation_ids ?? []} onChange={set('documentation_ids')} error={fieldError(save.error, 'documentation_ids')} />
          <ErrorAlert error={save.error} title="The agent was not saved" />
          {readOnly ? null : <Group><Button type="submit" loading={save.isPending}>{agent ? 'Save changes' : 'Create agent'}</Button></Group>}
        </Stack>
      </Fieldset>
    </form>
  );
}
