/**
 * The runtime's view of the API for one call (extensions.md §10): everything the conversation engine
 * reads or reports goes through this interface, acting with the call's token. The engine never knows
 * it talks HTTP; the tests hand it an in-memory platform.
 */
import type { ProviderSettings, ToolFunction } from '../providers/types.ts';

/** The agent as `GET /api/runtime/calls/{call_sid}` returns it: the fields the engine uses, plus the rest. */
export interface RuntimeAgent {
  agent_id: string;
  agent_version?: number;
  system_prompt: string | null;
  first_message: string | null;
  language?: string | null;
  temperature?: number | null;
  voice_id?: string | null;
  max_call_duration_seconds: number;
  recording_enabled?: boolean;
  interruptible?: boolean;
  end_call_enabled?: boolean;
  transfer_number?: string | null;
  silence_timeout_seconds?: number;
  documentation_ids?: string[];
  [field: string]: unknown;
}

export interface RuntimeCall {
  call_sid: string;
  agent_id: string;
  call_type?: string;
  recording_enabled?: boolean;
  [field: string]: unknown;
}

export interface RuntimeCallConfig {
  call: RuntimeCall;
  agent: RuntimeAgent;
  variables: Record<string, string>;
  providers: { stt: ProviderSettings; tts: ProviderSettings; llm: ProviderSettings };
  /** The agent's webhook tools as functions (the built-ins are added by the engine). */
  tools: ToolFunction[];
}

export const END_REASONS = ['user_hangup', 'tool_end_call', 'transferred', 'silence_timeout', 'max_duration', 'error'] as const;
export type EndReason = (typeof END_REASONS)[number];

export interface TurnLatency {
  stt_ms: number;
  llm_first_token_ms: number;
  tts_first_byte_ms: number;
  total_ms: number;
}

export interface ToolRecord {
  name: string;
  arguments: Record<string, unknown>;
  result: unknown;
  /** The webhook's HTTP status; null when it did not answer (the API's schema: an integer or null). */
  status: number | null;
  duration_ms: number;
}

export interface TranscriptTurn {
  role: 'agent' | 'user' | 'tool';
  text: string;
  start_seconds: number;
  end_seconds: number;
  interrupted?: boolean;
  tool?: ToolRecord;
  latency?: TurnLatency;
}

/** Credits per component (`CostBreakdown` of the API); `total_cost` is their sum. */
export interface CostBreakdown {
  stt: number;
  llm: number;
  tts: number;
  telephony: number;
  platform: number;
}

export interface CallError {
  provider: string;
  code: string;
  message: string;
}

/** A `PATCH /api/calls/{call_sid}` body: progress (status, transcript so far) or the final report. */
export interface CallReport {
  status?: 'in_progress' | 'completed' | 'failed';
  end_reason?: EndReason;
  duration_seconds?: number;
  transcript?: TranscriptTurn[];
  total_cost?: number;
  cost_breakdown?: CostBreakdown;
  latency_p50_ms?: number | null;
  latency_p95_ms?: number | null;
  error?: CallError;
}

/** `POST /api/runtime/calls/{call_sid}/tools/{tool_name}`: what the tool's webhook answered. */
export interface ToolCallResult {
  status: number;
  body: unknown;
  duration_ms: number;
}

/** One chunk of `POST /api/knowledge-base/search`. */
export interface KnowledgeHit {
  documentation_id: string;
  name?: string;
  text: string;
  page: number | null;
  score: number;
}

export interface CallPlatform {
  load(): Promise<RuntimeCallConfig>;
  report(patch: CallReport): Promise<void>;
  uploadRecording(wav: Buffer): Promise<void>;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolCallResult>;
  /** The agent's documents only (the call token limits the search to them); top 5. */
  searchKnowledge(query: string): Promise<KnowledgeHit[]>;
}

/** How a runtime process reaches the API for a call: the API's address, the call, and its token. */
export interface CallCredentials {
  apiBaseUrl: string;
  callSid: string;
  token: string;
  organizationId: string;
}
