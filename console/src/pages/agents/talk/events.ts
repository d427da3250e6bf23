/** The preview WebSocket's JSON events from the runtime (extensions.md §11); types only, no browser API. */

export interface TurnLatency { stt_ms: number; llm_first_token_ms: number; tts_first_byte_ms: number; total_ms: number }

export type PreviewEvent =
  | { type: 'transcript'; role: 'agent' | 'user'; text: string; final: boolean }
  | { type: 'agent_speaking'; speaking: boolean }
  | { type: 'turn'; latency: TurnLatency }
  | { type: 'ended'; end_reason: string };
