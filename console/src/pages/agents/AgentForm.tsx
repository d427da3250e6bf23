import { useEffect, useState } from 'react';
import { Autocomplete, Button, Fieldset, Group, MultiSelect, NumberInput, Select, SimpleGrid, Stack, Switch, TextInput, Textarea, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';
import { useUnsavedChangesGuard } from '../../hooks/useUnsavedChangesGuard.ts';
import { ConversationFields, IntegrationPickers } from './RuntimeFields.tsx';
import { SampleVariables } from './SampleVariables.tsx';
import { MODEL_SUGGESTIONS, VOICE_SUGGESTIONS } from './voiceProviders.ts';

// The documented provider lists (the API refuses others); models and voices are typed, with suggestions.
const STT = ['deepgram', 'assemblyai', 'whisper'];
const TTS = ['elevenlabs', 'cartesia', 'openai', 'azure'];
const LLM = ['openai', 'anthropic', 'groq', 'google'];

type Body = Schemas['CreateAgentBody'];
const DEFAULTS: Body = {
  agent_name: '', language: 'EN', stt_provider: 'deepgram', stt_model: null, tts_provider: 'elevenlabs', tts_model: null, voice_id: null,
  llm_provider: 'openai', llm_model: 'gpt-4o-mini', system_prompt: '', first_message: null, temperature: 0.7, max_call_duration_seconds: 1800,
  recording_enabled: false, tool_ids: [], documentation_ids: [],
  stt_integration_id: null, tts_integration_id: null, llm_integration_id: null, interruptible: true, end_call_enabled: true, transfer_number: null, silence_timeout_seconds: 30,
};

export function AgentForm({ agent, readOnly, onSaved }: { agent?: Schemas['Agent']; readOnly: boolean; onSaved: (agentId: string) => void }) {
  const { orgId } = useCredentials();
  const initial = () => (agent ? Object.fromEntries(Object.keys(DEFAULTS).map((k) => [k, agent[k as keyof Schemas['Agent']] ?? DEFAULTS[k as keyof Body]])) as Body : DEFAULTS);
  const [values, setValues] = useState<Body>(initial);
  const [baseline, setBaseline] = useState<Body>(initial);
  const [savedId, setSavedId] = useState<string | null>(null);
  const dirty = JSON.stringify(values) !== JSON.stringify(baseline);
  useUnsavedChangesGuard(!readOnly && dirty);
  // The agent as the API has it now (after a save, or a restore on the Versions tab): an untouched form
  // shows it; one being edited keeps what was typed since, and measures its changes against it.
  useEffect(() => {
    const current = initial();
    setBaseline(current);
    if (!dirty) setValues(current);
  }, [agent?.updated_at]); // eslint-disable-line react-hooks/exhaustive-deps
  const set = <K extends keyof Body>(key: K) => (value: Body[K]) => setValues((v) => ({ ...v, [key]: value }));
  const error = (key: string) => fieldError(save.error, key);
  const text = (key: 'agent_name' | 'language') => ({ value: values[key] ?? '', onChange: (e: React.ChangeEvent<HTMLInputElement>) => set(key)(e.currentTarget.value), error: error(key) });
  const optional = (key: 'first_message') => ({ value: values[key] ?? '', onChange: (e: React.ChangeEvent<HTMLInputElement>) => set(key)(e.currentTarget.value || null), error: error(key) });
  const typed = (key: 'stt_model' | 'tts_model' | 'voice_id' | 'llm_model', suggestions: string[] | undefined, required = false) => ({
    data: suggestions ?? [], value: values[key] ?? '', error: error(key),
    onChange: (value: string) => set(key)((value || (required ? '' : null)) as never),
  });
  const tools = useQuery({ queryKey: [orgId, 'tools'], queryFn: async () => (await unwrap(api.GET('/api/tools', { params: { query: { page_size: 100 } } }))).data });
  const docs = useQuery({ queryKey: [orgId, 'documents', 'options'], queryFn: async () => (await unwrap(api.GET('/api/knowledge-base', { params: { query: { page_size: 100 } as never } }))).data });
  const integrations = useQuery({ queryKey: [orgId, 'integrations'], queryFn: async () => (await unwrap(api.GET('/api/integrations', { params: { query: { page_size: 100 } } }))).data });
  const save = useMutation({
    mutationFn: async (sent: Body) => (agent
      ? (await unwrap(api.PATCH('/api/agents/{agent_id}', { params: { path: { agent_id: agent.agent_id } }, body: sent }))).data
      : (await unwrap(api.POST('/api/agents', { body: sent }))).data),
    // The baseline becomes what was sent (not what the form holds now: what was typed since is still
    // unsaved), and moves first, so the navigation to a new agent's page is not taken for leaving unsaved changes.
    onSuccess: (saved, sent) => { notifications.show({ message: `Saved “${saved.agent_name}”`, color: 'green' }); setBaseline(sent); setSavedId(saved.agent_id); },
  });
  useEffect(() => { if (savedId) onSaved(savedId); }, [savedId]); // eslint-disable-line react-hooks/exhaustive-deps

  return (
    <form onSubmit={(e) => { e.preventDefault(); setSavedId(null); save.mutate(values); }}>
      <Fieldset disabled={readOnly} variant="unstyled">
        <Stack>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label="Name" required {...text('agent_name')} />
            <TextInput label="Language" description="EN, EN-US, DE…" {...text('language')} />
            <Select label="Speech to text" data={STT} value={values.stt_provider} allowDeselect={false} onChange={(v) => v && set('stt_provider')(v as Body['stt_provider'])} error={error('stt_provider')} />
            <Autocomplete label="Speech-to-text model" {...typed('stt_model', MODEL_SUGGESTIONS[`stt:${values.stt_provider}`])} />
            <Select label="Language model" data={LLM} value={values.llm_provider} allowDeselect={false} onChange={(v) => v && set('llm_provider')(v as Body['llm_provider'])} error={error('llm_provider')} />
            <Autocomplete label="Model" {...typed('llm_model', MODEL_SUGGESTIONS[`llm:${values.llm_provider}`], true)} />
            <Select label="Text to speech" data={TTS} value={values.tts_provider} allowDeselect={false} onChange={(v) => v && set('tts_provider')(v as Body['tts_provider'])} error={error('tts_provider')} />
            <Autocomplete label="Text-to-speech model" {...typed('tts_model', MODEL_SUGGESTIONS[`tts:${values.tts_provider}`])} />
            <Autocomplete label="Voice id" {...typed('voice_id', VOICE_SUGGESTIONS[values.tts_provider ?? ''])} />
            <NumberInput label="Temperature" min={0} max={2} step={0.1} decimalScale={2} value={values.temperature} onChange={(v) => set('temperature')(Number(v))} error={error('temperature')} />
            <NumberInput label="Longest call (seconds)" min={10} max={14400} value={values.max_call_duration_seconds} onChange={(v) => set('max_call_duration_seconds')(Number(v))} error={error('max_call_duration_seconds')} />
            <Switch label="Record calls" checked={values.recording_enabled ?? false} onChange={(e) => set('recording_enabled')(e.currentTarget.checked)} mt="xl" />
          </SimpleGrid>
          <IntegrationPickers values={values} integrations={integrations.data ?? []} onChange={(key, id) => set(key)(id)} error={error} />
          <Title order={2} size="h5">Conversation</Title>
          <ConversationFields values={values} set={set} error={error} />
          <Textarea label="System prompt" autosize minRows={4} maxRows={16} value={values.system_prompt ?? ''} onChange={(e) => set('system_prompt')(e.currentTarget.value)} error={error('system_prompt')} />
          <TextInput label="First message" {...optional('first_message')} />
          <SampleVariables agentId={agent?.agent_id ?? 'new'} prompt={values.system_prompt} firstMessage={values.first_message} />
          <MultiSelect label="Tools" searchable data={(tools.data ?? []).map((t) => ({ value: t.tool_id, label: t.tool_name }))} value={values.tool_ids ?? []} onChange={set('tool_ids')} error={error('tool_ids')} />
          <MultiSelect label="Knowledge-base documents" searchable data={(docs.data ?? []).map((d) => ({ value: d.documentation_id, label: d.name }))} value={values.documentation_ids ?? []} onChange={set('documentation_ids')} error={error('documentation_ids')} />
          <ErrorAlert error={save.error} title="The agent was not saved" />
          {readOnly ? null : <Group><Button type="submit" loading={save.isPending}>{agent ? 'Save changes' : 'Create agent'}</Button></Group>}
        </Stack>
      </Fieldset>
    </form>
  );
}
