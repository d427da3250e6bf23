import { NumberInput, Select, SimpleGrid, Switch, TextInput } from '@mantine/core';
import type { Schemas } from '../../api/client.ts';
import { candidates, CATEGORY_LABEL, type VoiceCategory } from './voiceProviders.ts';

type Body = Schemas['CreateAgentBody'];
type Integration = Schemas['IntegrationSummary'];
const NEWEST = 'newest';

/**
 * The integration that serves each provider setting: "newest active" (null, the API's default) or a
 * named integration among the organization's of the matching provider.
 */
export function IntegrationPickers({ values, integrations, onChange, error }: {
  values: Body; integrations: Integration[]; onChange: (key: `${VoiceCategory}_integration_id`, id: string | null) => void; error: (field: string) => string | undefined;
}) {
  const picker = (category: VoiceCategory, agentProvider: string) => {
    const key = `${category}_integration_id` as const;
    const list = candidates(integrations, category, agentProvider);
    const newest = list.find((i) => i.status === 'active');
    const data = [
      { value: NEWEST, label: newest ? `Newest active (${newest.name})` : 'Newest active (none yet)' },
      ...list.map((i) => ({ value: i.integration_id, label: `${i.name}${i.status === 'active' ? '' : ' (refused)'}` })),
    ];
    return (
      <Select key={key} label={`${category.toUpperCase()} integration`} description={`Credentials for ${CATEGORY_LABEL[category]}`} data={data}
        value={values[key] ?? NEWEST} allowDeselect={false} onChange={(v) => onChange(key, !v || v === NEWEST ? null : v)} error={error(key)} />
    );
  };
  return (
    <SimpleGrid cols={{ base: 1, sm: 3 }}>
      {picker('stt', values.stt_provider ?? 'deepgram')}
      {picker('llm', values.llm_provider ?? 'openai')}
      {picker('tts', values.tts_provider ?? 'elevenlabs')}
    </SimpleGrid>
  );
}

/** How the runtime conducts the call (extensions.md §10): barge-in, hanging up, transfer and the silence rule. */
export function ConversationFields({ values, set, error }: {
  values: Body; set: <K extends keyof Body>(key: K) => (value: Body[K]) => void; error: (field: string) => string | undefined;
}) {
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }}>
      <Switch label="Caller can interrupt the agent" checked={values.interruptible ?? true} onChange={(e) => set('interruptible')(e.currentTarget.checked)} />
      <Switch label="Agent may end the call" checked={values.end_call_enabled ?? true} onChange={(e) => set('end_call_enabled')(e.currentTarget.checked)} />
      <TextInput label="Transfer number" description="E.164, like +14155550100; empty: no transfers" value={values.transfer_number ?? ''}
        onChange={(e) => set('transfer_number')(e.currentTarget.value || null)} error={error('transfer_number')} />
      <NumberInput label="Silence timeout (seconds)" description="5 to 600; one reprompt at half the time" min={5} max={600} value={values.silence_timeout_seconds ?? 30}
        onChange={(v) => set('silence_timeout_seconds')(Number(v))} error={error('silence_timeout_seconds')} />
    </SimpleGrid>
  );
}
