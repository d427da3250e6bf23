/**
 * The providers' stand-ins of bench/console-talk.ts in a process of their own (forked by it), so that
 * their fixed delays are not kept waiting by the bench process, which drives Chromium and receives its
 * events: Deepgram (its final 150 ms after its endpoint), an OpenAI-compatible LLM (first token 250 ms)
 * and ElevenLabs (first byte 120 ms). Driven over IPC:
 *  - `{type: 'script', questions, answers}`: what the next preview call says and is answered
 *    (`scripted`);
 *  - `{type: 'endpointing'}`: the endpointing the runtime asked the STT for on its last session;
 *  - `{type: 'lateness'}`: how much later than their fixed delays the LLM's and the TTS's first chunks
 *    left, by this process's clock (ms).
 */
import { synthesizeSpeech } from '../runtime/src/audio/synthesize.ts';
import { OpenAiStandin } from '../runtime/test/standins/openai.ts';
import { DeepgramStandin } from '../runtime/test/standins/stt.ts';
import { ElevenLabsStandin } from '../runtime/test/standins/tts.ts';

const delays = JSON.parse(process.env.TALK_DELAYS!) as { stt_final_ms: number; llm_first_token_ms: number; tts_first_byte_ms: number };
const key = process.env.TALK_KEY!;
// The TTS stand-in synthesizes a text before its 120 ms: synthesized here first (its cache), eSpeak's
// time is not counted as the platform's. The runtime asks ElevenLabs for pcm_16000 on a browser leg.
for (const text of JSON.parse(process.env.TALK_TEXTS!) as string[]) await synthesizeSpeech(text, 16000);
const stt = await new DeepgramStandin({ key, sttFinalMs: delays.stt_final_ms }).start();
const llm = await new OpenAiStandin({ key, firstTokenMs: delays.llm_first_token_ms, gapMs: 0 }).start();
const tts = await new ElevenLabsStandin({ key, firstByteMs: delays.tts_first_byte_ms, chunkMs: 100 }).start();

process.on('message', (message: { type: string; questions?: string[]; answers?: string[] }) => {
  if (message.type === 'script') {
    while (stt.phrases.next()) { /* what a failed run left */ }
    llm.script.turns.length = 0;
    stt.phrases.say(...message.questions!);
    llm.script.push(...message.answers!.map((text) => ({ text })));
    process.send!({ type: 'scripted' });
  } else if (message.type === 'endpointing') {
    process.send!({ type: 'endpointing', value: Number(stt.sessions.at(-1)!.query.get('endpointing')) });
  } else if (message.type === 'lateness') {
    process.send!({ type: 'lateness', llm: llm.firstChunkLateMs, tts: tts.firstChunkLateMs });
  }
});
// A bench that is gone (killed, crashed) takes its stand-ins with it.
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'ready', stt: stt.url, llm: llm.url, tts: tts.url });
