import { Type } from 'typebox';
import { E164, Nullable, pageQuery, PathId, Timestamp } from '../../core/schemas.ts';
import { AnalysisSettings } from './analysis-settings.ts';

/** Providers the voice runtime can drive; models are free-form (providers add models weekly). */
export const STT_PROVIDERS = ['deepgram', 'assemblyai', 'whisper'] as const;
export const TTS_PROVIDERS = ['elevenlabs', 'cartesia', 'openai', 'azure'] as const;
export const LLM_PROVIDERS = ['openai', 'anthropic', 'groq', 'google'] as const;

const Language = Type.String({ pattern: '^[A-Za-z]{2}(-[A-Za-z]{2})?$', description: 'Language code, stored uppercase (EN, EN-US)' });
/** Ids in a body are checked for their shape: a malformed one is the caller's mistake (400 naming it), not a missing record. */
const IdList = (pattern: string, description: string) => Type.Array(Type.String({ pattern }), { maxItems: 100, uniqueItems: true, description });

const editable = {
  agent_name: Type.String({ minLength: 1, maxLength: 100 }),
  language: Language,
  stt_provider: Type.Enum([...STT_PROVIDERS]),
  stt_model: Nullable(Type.String({ minLength: 1, maxLength: 100 })),
  tts_provider: Type.Enum([...TTS_PROVIDERS]),
  tts_model: Nullable(Type.String({ minLength: 1, maxLength: 100 })),
  voice_id: Nullable(Type.String({ minLength: 1, maxLength: 200 })),
  llm_provider: Type.Enum([...LLM_PROVIDERS]),
  llm_model: Type.String({ minLength: 1, maxLength: 100 }),
  system_prompt: Type.String({ maxLength: 20000 }),
  first_message: Nullable(Type.String({ maxLength: 1000 })),
  temperature: Type.Number({ minimum: 0, maximum: 2 }),
  max_call_duration_seconds: Type.Integer({ minimum: 10, maximum: 14400 }),
  recording_enabled: Type.Boolean(),
  tool_ids: IdList('^tool_[a-f0-9]{12}$', 'Tools the agent may call (replaces the whole set)'),
  documentation_ids: IdList('^doc_[a-f0-9]{16}$', 'Knowledge-base documents the agent searches (replaces the whole set)'),
  stt_integration_id: Nullable(Type.String({ pattern: '^intg_[a-f0-9]{12}$', description: 'The stt (or, for whisper, openai) integration serving stt_provider; null: the newest active one' })),
  tts_integration_id: Nullable(Type.String({ pattern: '^intg_[a-f0-9]{12}$', description: 'The tts integration serving tts_provider; null: the newest active one' })),
  llm_integration_id: Nullable(Type.String({ pattern: '^intg_[a-f0-9]{12}$', description: 'The llm integration serving llm_provider; null: the newest active one' })),
  interruptible: Type.Boolean({ description: 'Caller speech stops the agent (barge-in)' }),
  end_call_enabled: Type.Boolean({ description: 'The agent is offered the end_call tool' }),
  transfer_number: Nullable({ ...E164, description: 'Where transfer_call sends the caller (E.164); null: no transfer' }),
  silence_timeout_seconds: Type.Integer({ minimum: 5, maximum: 600, description: 'Seconds without caller speech before the call ends silence_timeout (one reprompt at half the time)' }),
  /** Post-call analysis (extensions.md §13); null: none. */
  analysis: Nullable(AnalysisSettings),
};

/**
 * The fields a version keeps (extensions.md §12): every editable field, read from the schema above,
 * so a field added there is versioned, diffed and restored with no other change.
 */
export const VERSIONED_FIELDS = Object.keys(editable) as Array<keyof typeof editable>;
export type VersionedField = (typeof VERSIONED_FIELDS)[number];

export const TrafficSplit = Nullable(Type.Array(
  Type.Object({
    version: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    weight: Type.Integer({ minimum: 1, maximum: 100, description: 'Percent of the new calls' }),
  }, { additionalProperties: false }),
  {
    minItems: 1, maxItems: 10,
    description: 'null: the latest version takes every call; else the versions (each once, existing) that take the new calls, weights summing to 100. '
      + 'Sticky per caller number while the split stands. Routing, not configuration: setting it makes no version',
  },
));

export const CreateAgentBody = Type.Object(
  {
    agent_name: editable.agent_name,
    language: Type.Optional({ ...editable.language, default: 'EN' }),
    stt_provider: Type.Optional({ ...editable.stt_provider, default: 'deepgram' }),
    stt_model: Type.Optional(editable.stt_model),
    tts_provider: Type.Optional({ ...editable.tts_provider, default: 'elevenlabs' }),
    tts_model: Type.Optional(editable.tts_model),
    voice_id: Type.Optional(editable.voice_id),
    llm_provider: Type.Optional({ ...editable.llm_provider, default: 'openai' }),
    llm_model: Type.Optional({ ...editable.llm_model, default: 'gpt-4o-mini' }),
    system_prompt: Type.Optional({ ...editable.system_prompt, default: '' }),
    first_message: Type.Optional(editable.first_message),
    temperature: Type.Optional({ ...editable.temperature, default: 0.7 }),
    max_call_duration_seconds: Type.Optional({ ...editable.max_call_duration_seconds, default: 1800 }),
    recording_enabled: Type.Optional({ ...editable.recording_enabled, default: false }),
    tool_ids: Type.Optional(editable.tool_ids),
    documentation_ids: Type.Optional(editable.documentation_ids),
    stt_integration_id: Type.Optional(editable.stt_integration_id),
    tts_integration_id: Type.Optional(editable.tts_integration_id),
    llm_integration_id: Type.Optional(editable.llm_integration_id),
    interruptible: Type.Optional({ ...editable.interruptible, default: true }),
    end_call_enabled: Type.Optional({ ...editable.end_call_enabled, default: true }),
    transfer_number: Type.Optional(editable.transfer_number),
    silence_timeout_seconds: Type.Optional({ ...editable.silence_timeout_seconds, default: 30 }),
    analysis: Type.Optional(editable.analysis),
  },
  { title: 'CreateAgentBody', additionalProperties: false },
);

export const UpdateAgentBody = Type.Object(
  {
    ...(Object.fromEntries(Object.entries(editable).map(([k, v]) => [k, Type.Optional(v)])) as {
      [K in keyof typeof editable]: ReturnType<typeof Type.Optional<(typeof editable)[K]>>;
    }),
    traffic: Type.Optional(TrafficSplit),
  },
  { title: 'UpdateAgentBody', additionalProperties: false, minProperties: 1 },
);

export const AgentSummary = Type.Object({
  agent_id: Type.String({ pattern: '^agent_[a-f0-9]{12}$' }),
  agent_name: Type.String(),
  language: Type.String(),
  stt_provider: Type.String(),
  tts_provider: Type.String(),
  llm_provider: Type.String(),
  llm_model: Type.String(),
  recording_enabled: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'AgentSummary' });

export const Agent = Type.Object({
  ...AgentSummary.properties,
  client_id: Type.String(),
  stt_model: Nullable(Type.String()),
  tts_model: Nullable(Type.String()),
  voice_id: Nullable(Type.String()),
  system_prompt: Type.String(),
  first_message: Nullable(Type.String()),
  temperature: Type.Number(),
  max_call_duration_seconds: Type.Integer(),
  tool_ids: Type.Array(Type.String()),
  documentation_ids: Type.Array(Type.String()),
  phone_number_ids: Type.Array(Type.String()),
  stt_integration_id: Nullable(Type.String()),
  tts_integration_id: Nullable(Type.String()),
  llm_integration_id: Nullable(Type.String()),
  interruptible: Type.Boolean(),
  end_call_enabled: Type.Boolean(),
  transfer_number: Nullable(Type.String()),
  silence_timeout_seconds: Type.Integer(),
  analysis: Nullable(AnalysisSettings),
  version: Type.Integer({ description: 'The latest version (or, in a call\'s configuration, the version the call runs)' }),
  traffic: TrafficSplit,
}, { title: 'Agent' });

/** A version's configuration: the versioned fields as they were (a field added since is absent). */
const VersionConfig = Type.Object(
  Object.fromEntries(VERSIONED_FIELDS.map((field) => [field, Type.Optional(Agent.properties[field])])) as {
    [K in VersionedField]: ReturnType<typeof Type.Optional<(typeof Agent.properties)[K]>>;
  },
  { title: 'AgentVersionConfig' },
);

export const AgentVersion = Type.Object({
  agent_id: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  config: VersionConfig,
  created_at: Timestamp,
  created_by: Nullable(Type.String({ description: 'The user who made the change (an API key acts for its creator)' })),
}, { title: 'AgentVersion' });

export const AgentVersionDiff = Type.Object({
  changes: Type.Array(Type.Object({ field: Type.String(), from: Type.Unknown(), to: Type.Unknown() }), {
    description: 'The fields whose value differs: from = the value in `against`, to = the value in this version',
  }),
}, { title: 'AgentVersionDiff' });

export const ListAgentsQuery = Type.Object(pageQuery(50));
export const AgentIdParams = Type.Object({ agent_id: PathId('agent_ + 12 hex') });
export const AgentVersionParams = Type.Object({ agent_id: PathId('agent_ + 12 hex'), version: PathId('The version number: 1, 2, …') });
export const AgentVersionDiffQuery = Type.Object({ against: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'The version compared with' }) });
