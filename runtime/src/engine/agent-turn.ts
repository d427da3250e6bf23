/**
 * One agent turn: the caller's words (the STT's final text), the LLM's streamed answer spoken sentence
 * by sentence, tool calls run and fed back to the LLM, and the transcript turns with their latency.
 * The greeting and the silence reprompt are turns too, with fixed text and no LLM.
 */
import { performance } from 'node:perf_hooks';
import type { ChatMessage, Providers, SttStream, ToolCall, ToolFunction } from '../providers/types.ts';
import type { CallPlatform, EndReason, RuntimeCallConfig, TranscriptTurn, TurnLatency } from '../platform/call-platform.ts';
import type { CallerTurn } from './listener.ts';
import { Utterance } from './speaker.ts';
import { SentenceSplitter } from './text.ts';
import { runTool } from './tools.ts';
import type { CallTransport, ConverterFactory } from './types.ts';

/** LLM rounds in one turn (a tool result goes back for another round). */
const MAX_ROUNDS = 5;

export interface TurnContext {
  config: RuntimeCallConfig;
  providers: Providers;
  stt: SttStream;
  transport: CallTransport;
  platform: CallPlatform;
  convert: ConverterFactory;
  /** The conversation so far as the LLM sees it (shared across turns). */
  messages: ChatMessage[];
  tools: ToolFunction[];
  callMs(): number;
  addTurn(turn: TranscriptTurn): void;
  usage(inputTokens: number, outputTokens: number): void;
  record?: (frame: Buffer, atMs: number) => void;
}

let markCounter = 0;
const seconds = (ms: number) => Math.round(ms) / 1000;

export class AgentTurn {
  readonly #ctx: TurnContext;
  readonly #utterance: Utterance;
  finished = false;
  /** Sentences spoken in rounds that called tools: already in the LLM's messages. */
  #sentencesInMessages = 0;
  endsCall: EndReason | null = null;

  constructor(ctx: TurnContext) {
    this.#ctx = ctx;
    const { config, transport } = ctx;
    this.#utterance = new Utterance({
      transport, tts: ctx.providers.tts, convert: ctx.convert, callMs: ctx.callMs, record: ctx.record,
      voiceId: config.providers.tts.voice_id ?? config.agent.voice_id ?? null,
      model: config.providers.tts.model,
      markName: () => `utterance-${++markCounter}`,
    });
    this.#utterance.onFirstAudio = () => transport.agentSpeaking?.(true);
  }

  get ttsCharacters() { return this.#utterance.characters; }
  get interrupted() { return this.#utterance.interrupted; }

  /** The greeting or the reprompt: fixed text, spoken and remembered as the agent's. */
  async speakFixed(text: string): Promise<void> {
    try {
      const splitter = new SentenceSplitter();
      for (const sentence of [...splitter.push(text), ...splitter.end()]) this.#utterance.say(sentence);
      await this.#utterance.finish();
      this.#finishAgentTurn(null);
    } finally {
      this.finished = true;
    }
  }

  /** Answers the caller's turn (and any earlier ones not yet answered, whose words the same flush holds). */
  async answer(callerTurn: CallerTurn, earlier: CallerTurn[] = []): Promise<void> {
    try {
      const text = (await this.#ctx.stt.flush()).trim();
      const sttDoneAt = performance.now();
      if (!text || this.#utterance.signal.aborted) return;
      const startMs = earlier[0]?.startMs ?? callerTurn.startMs;
      this.#ctx.addTurn({ role: 'user', text, start_seconds: seconds(startMs), end_seconds: seconds(callerTurn.endMs) });
      this.#ctx.messages.push({ role: 'user', content: text });
      const llmFirstTokenMs = await this.#generate();
      await this.#utterance.finish();
      const timing = this.#utterance.timing;
      const latency: TurnLatency | null = timing.firstAudioAt === null ? null : {
        stt_ms: Math.round(sttDoneAt - callerTurn.decidedAt),
        llm_first_token_ms: Math.round(llmFirstTokenMs ?? 0),
        tts_first_byte_ms: Math.round((timing.ttsFirstByteAt ?? timing.firstAudioAt) - (timing.ttsRequestAt ?? timing.firstAudioAt)),
        total_ms: Math.round(timing.firstAudioAt - callerTurn.decidedAt),
      };
      this.#finishAgentTurn(latency);
    } finally {
      this.finished = true;
    }
  }

  /** Barge-in (or the call's end while the agent speaks): stops at what was heard, and says so. */
  interrupt() {
    if (this.#utterance.interrupted) return;
    this.#utterance.interrupt();
    this.#ctx.transport.agentSpeaking?.(false);
  }

  abort() {
    this.#utterance.abort();
  }

  /** Streams LLM rounds into speech until an answer needs no tool; returns ms to the first text token. */
  async #generate(): Promise<number | null> {
    const { providers, config, messages, tools } = this.#ctx;
    const signal = this.#utterance.signal;
    let firstTokenMs: number | null = null;
    for (let round = 0; round < MAX_ROUNDS && !signal.aborted; round++) {
      const roundStart = performance.now();
      const splitter = new SentenceSplitter();
      const calls: ToolCall[] = [];
      let text = '';
      try {
        const stream = providers.llm.stream({
          model: config.providers.llm.model ?? '', messages: [...messages], tools,
          temperature: config.agent.temperature ?? 0.7, signal,
        });
        for await (const chunk of stream) {
          if (signal.aborted) break;
          if (chunk.type === 'text') {
            firstTokenMs ??= performance.now() - roundStart;
            text += chunk.text;
            for (const sentence of splitter.push(chunk.text)) this.#utterance.say(sentence);
          } else if (chunk.type === 'tool_call') calls.push(chunk.call);
          else this.#ctx.usage(chunk.inputTokens, chunk.outputTokens);
        }
      } catch (error) {
        if (signal.aborted) break; // a barge-in stopped the stream; nothing failed
        throw error;
      }
      if (signal.aborted) break;
      for (const sentence of splitter.end()) this.#utterance.say(sentence);
      if (calls.length === 0) break;
      messages.push({ role: 'assistant', content: text, toolCalls: calls });
      this.#sentencesInMessages = this.#utterance.sentenceCount;
      for (const call of calls) await this.#runTool(call);
      if (this.endsCall) break;
    }
    return firstTokenMs;
  }

  async #runTool(call: ToolCall) {
    const startMs = this.#ctx.callMs();
    const outcome = await runTool(this.#ctx.platform, call.name, call.arguments);
    this.#ctx.addTurn({
      role: 'tool', text: call.name, start_seconds: seconds(startMs), end_seconds: seconds(this.#ctx.callMs()), tool: outcome.record,
    });
    this.#ctx.messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: outcome.content });
    this.endsCall ??= outcome.endsCall;
  }

  #finishAgentTurn(latency: TurnLatency | null) {
    const utterance = this.#utterance;
    if (!utterance.interrupted) this.#ctx.transport.agentSpeaking?.(false);
    const text = utterance.heardText();
    if (!utterance.hasAudio || !text) return;
    const unsaid = utterance.heardText(this.#sentencesInMessages);
    if (unsaid) this.#ctx.messages.push({ role: 'assistant', content: unsaid });
    this.#ctx.addTurn({
      role: 'agent', text,
      start_seconds: seconds(utterance.timing.firstAudioCallMs!),
      end_seconds: seconds(this.#ctx.callMs()),
      ...(utterance.interrupted ? { interrupted: true } : {}),
      ...(latency ? { latency } : {}),
    });
  }
}
