import { OpenAiStandin } from '../../runtime/test/standins/openai.ts';
import { DeepgramStandin } from '../../runtime/test/standins/stt.ts';
import { ElevenLabsStandin } from '../../runtime/test/standins/tts.ts';
import type { LlmTurn } from '../../runtime/test/standins/llm-script.ts';

/** The API key every provider stand-in accepts. */
export const STANDIN_KEY = 'sk-standin-key';

/** An OpenAI-compatible LLM, Deepgram and ElevenLabs, each a stand-in speaking its wire protocol on 127.0.0.1. */
export interface VoiceProviders { llm: OpenAiStandin; stt: DeepgramStandin; tts: ElevenLabsStandin }

/** The three stand-ins with short fixed delays, the LLM answering `script` turn by turn. */
export async function startVoiceProviders(script: LlmTurn[]): Promise<VoiceProviders> {
  return {
    llm: await new OpenAiStandin({ key: STANDIN_KEY, script, firstTokenMs: 30, gapMs: 5 }).start(),
    stt: await new DeepgramStandin({ key: STANDIN_KEY, sttFinalMs: 50 }).start(),
    tts: await new ElevenLabsStandin({ key: STANDIN_KEY, firstByteMs: 30, chunkMs: 100 }).start(),
  };
}

export async function closeVoiceProviders(p: VoiceProviders): Promise<void> {
  await p.llm.close();
  await p.stt.close();
  await p.tts.close();
}
