import type { Static } from 'typebox';
import { iso } from '../../core/schemas.ts';
import type { AgentRow, NewAgentRow } from './repository.ts';
import type { Agent, AgentSummary, CreateAgentBody } from './schemas.ts';

type AgentSummaryView = Static<typeof AgentSummary>;
type AgentView = Static<typeof Agent>;
type CreateInput = Static<typeof CreateAgentBody>;

export function toAgentSummary(row: AgentRow): AgentSummaryView {
  return {
    agent_id: row.id,
    agent_name: row.agentName,
    language: row.language,
    stt_provider: row.sttProvider,
    tts_provider: row.ttsProvider,
    llm_provider: row.llmProvider,
    llm_model: row.llmModel,
    recording_enabled: row.recordingEnabled,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The full agent from its row and the ids it links to. */
export function toAgent(row: AgentRow, links: { toolIds: string[]; documentIds: string[]; phoneNumberIds: string[] }): AgentView {
  return {
    ...toAgentSummary(row),
    client_id: row.clientId,
    stt_model: row.sttModel,
    tts_model: row.ttsModel,
    voice_id: row.voiceId,
    system_prompt: row.systemPrompt,
    first_message: row.firstMessage,
    temperature: row.temperature,
    max_call_duration_seconds: row.maxCallDurationSeconds,
    tool_ids: links.toolIds,
    documentation_ids: links.documentIds,
    phone_number_ids: links.phoneNumberIds,
    stt_integration_id: row.sttIntegrationId,
    tts_integration_id: row.ttsIntegrationId,
    llm_integration_id: row.llmIntegrationId,
    interruptible: row.interruptible,
    end_call_enabled: row.endCallEnabled,
    transfer_number: row.transferNumber,
    silence_timeout_seconds: row.silenceTimeoutSeconds,
    analysis: (row.analysis ?? null) as AgentView['analysis'],
    version: row.version,
    traffic: row.traffic ?? null,
  };
}

/** Maps the API's field names onto columns; only the fields given are present. */
export function columns(input: Partial<CreateInput>): Partial<NewAgentRow> {
  const out: Partial<NewAgentRow> = {};
  if (input.agent_name !== undefined) out.agentName = input.agent_name;
  if (input.language !== undefined) out.language = input.language.toUpperCase();
  if (input.stt_provider !== undefined) out.sttProvider = input.stt_provider;
  if (input.stt_model !== undefined) out.sttModel = input.stt_model;
  if (input.tts_provider !== undefined) out.ttsProvider = input.tts_provider;
  if (input.tts_model !== undefined) out.ttsModel = input.tts_model;
  if (input.voice_id !== undefined) out.voiceId = input.voice_id;
  if (input.llm_provider !== undefined) out.llmProvider = input.llm_provider;
  if (input.llm_model !== undefined) out.llmModel = input.llm_model;
  if (input.system_prompt !== undefined) out.systemPrompt = input.system_prompt;
  if (input.first_message !== undefined) out.firstMessage = input.first_message;
  if (input.temperature !== undefined) out.temperature = input.temperature;
  if (input.max_call_duration_seconds !== undefined) out.maxCallDurationSeconds = input.max_call_duration_seconds;
  if (input.recording_enabled !== undefined) out.recordingEnabled = input.recording_enabled;
  if (input.stt_integration_id !== undefined) out.sttIntegrationId = input.stt_integration_id;
  if (input.tts_integration_id !== undefined) out.ttsIntegrationId = input.tts_integration_id;
  if (input.llm_integration_id !== undefined) out.llmIntegrationId = input.llm_integration_id;
  if (input.interruptible !== undefined) out.interruptible = input.interruptible;
  if (input.end_call_enabled !== undefined) out.endCallEnabled = input.end_call_enabled;
  if (input.transfer_number !== undefined) out.transferNumber = input.transfer_number;
  if (input.silence_timeout_seconds !== undefined) out.silenceTimeoutSeconds = input.silence_timeout_seconds;
  if (input.analysis !== undefined) out.analysis = input.analysis;
  return out;
}
