/**
 * The scripted conversation an LLM stand-in plays: each request takes the next turn (text streamed
 * in pieces, or a tool call whose arguments stream in fragments). After a tool call, the next
 * request must carry that call's result, or it is refused with 400 as the vendor would.
 */
export type LlmTurn = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> }; text?: string };

export interface LlmStandinOptions {
  key: string;
  script?: LlmTurn[];
  /** Delay before the first streamed event. */
  firstTokenMs?: number;
  /** Delay between streamed events. */
  gapMs?: number;
}

/** What a request must satisfy, as read from it in the vendor's shape. */
export interface RequestView {
  toolNames: string[];
  /** Ids (Google: names) of tool calls the request answers with results. */
  toolResultIds: string[];
  /** Ids (Google: names) of tool calls the request shows the assistant made. */
  assistantCallIds: string[];
}

export class LlmScript {
  readonly turns: LlmTurn[];
  /** The last tool call served, which the next request must answer: id (or Google: name). */
  private awaitingResult: string | null = null;
  private counter = 0;

  constructor(turns: LlmTurn[]) {
    this.turns = [...turns];
  }

  push(...turns: LlmTurn[]): void {
    this.turns.push(...turns);
  }

  /** Checks the request against the conversation so far; a string is the reason to refuse it. */
  check(view: RequestView, next: LlmTurn): string | null {
    if (this.awaitingResult) {
      if (!view.assistantCallIds.includes(this.awaitingResult)) return `the assistant's call ${this.awaitingResult} is missing from the conversation`;
      if (!view.toolResultIds.includes(this.awaitingResult)) return `no tool result for ${this.awaitingResult}`;
    }
    if ('toolCall' in next && !view.toolNames.includes(next.toolCall.name)) return `tool ${next.toolCall.name} not offered (tools: ${view.toolNames.join(', ') || 'none'})`;
    return null;
  }

  /** The next turn (a short closing line when the script is exhausted) and, for tool calls, the id given to it. */
  take(useNameAsId = false): { turn: LlmTurn; callId: string | null } {
    const turn = this.turns.shift() ?? { text: 'Thank you for calling. Goodbye.' };
    if ('toolCall' in turn) {
      const callId = useNameAsId ? turn.toolCall.name : `call_${++this.counter}`;
      this.awaitingResult = callId;
      return { turn, callId };
    }
    this.awaitingResult = null;
    return { turn, callId: null };
  }

  peek(): LlmTurn {
    return this.turns[0] ?? { text: 'Thank you for calling. Goodbye.' };
  }
}

/** A token count the stand-in reports: about four characters a token (what matters is that the adapter passes it on). */
export function countTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
