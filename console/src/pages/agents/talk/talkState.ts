import type { PreviewEvent, TurnLatency } from './events.ts';

/** A line of the live transcript; the caller's interim words are replaced until the final text. */
export interface TalkLine { id: number; role: 'agent' | 'user'; text: string; final: boolean; latency?: TurnLatency }

export interface TalkState {
  status: 'idle' | 'connecting' | 'live' | 'ended';
  callSid: string | null;
  lines: TalkLine[];
  agentSpeaking: boolean;
  endReason: string | null;
  nextId: number;
}

export const initialTalk: TalkState = { status: 'idle', callSid: null, lines: [], agentSpeaking: false, endReason: null, nextId: 1 };

export type TalkAction =
  | { type: 'connecting' }
  | { type: 'session'; callSid: string }
  | { type: 'live' }
  | { type: 'closed' }
  | { type: 'event'; event: PreviewEvent };

function onEvent(state: TalkState, event: PreviewEvent): TalkState {
  switch (event.type) {
    case 'transcript': {
      const last = state.lines.at(-1);
      const line = { id: state.nextId, role: event.role, text: event.text, final: event.final };
      const interimUser = last && last.role === 'user' && !last.final;
      // Interim user text grows in place; its final text replaces it.
      if (interimUser && event.role === 'user') {
        return { ...state, lines: [...state.lines.slice(0, -1), { ...last, text: event.text, final: event.final }] };
      }
      // The agent's line comes when its utterance ends: cut short by the caller (barge-in), it ends after
      // the caller began, and goes before the caller's words still being recognised.
      if (interimUser) return { ...state, lines: [...state.lines.slice(0, -1), line, last], nextId: state.nextId + 1 };
      return { ...state, lines: [...state.lines, line], nextId: state.nextId + 1 };
    }
    case 'turn': {
      // The runtime sends an answer's latency right after the answer's final text.
      const index = state.lines.findLastIndex((line) => line.role === 'agent');
      if (index < 0) return state;
      const lines = state.lines.slice();
      lines[index] = { ...lines[index]!, latency: event.latency };
      return { ...state, lines };
    }
    case 'agent_speaking':
      return { ...state, agentSpeaking: event.speaking };
    case 'ended':
      return { ...state, endReason: event.end_reason, agentSpeaking: false };
  }
}

export function talkReducer(state: TalkState, action: TalkAction): TalkState {
  switch (action.type) {
    case 'connecting': return { ...initialTalk, status: 'connecting', nextId: state.nextId };
    case 'session': return { ...state, callSid: action.callSid };
    case 'live': return state.status === 'connecting' ? { ...state, status: 'live' } : state;
    case 'closed': return { ...state, status: 'ended', agentSpeaking: false };
    case 'event': return onEvent(state, action.event);
  }
}
