/**
 * Speech for tests, stand-ins and the benchmark: eSpeak NG compiled to WASM, so real speech (not a
 * tone) is available offline. Not exported from the package index: it loads 24 MB of voice data.
 */
import { resample } from './resampler.ts';
import { samplesToPcm16 } from './pcm.ts';

interface EspeakWorker {
  set_voice(name: string): void;
  set_rate(wordsPerMinute: number): void;
  get_samplerate(): number;
  synthesize(text: string, callback: (samples: Int16Array | null, events: unknown[]) => boolean): void;
}
interface EspeakModule {
  eSpeakNGWorker: new () => EspeakWorker;
}

let worker: Promise<EspeakWorker> | null = null;
const cache = new Map<string, Promise<Buffer>>();

function espeak(): Promise<EspeakWorker> {
  worker ??= (async () => {
    const { default: createModule } = await import('@echogarden/espeak-ng-emscripten');
    const module = (await (createModule as unknown as () => Promise<EspeakModule>)()) as EspeakModule;
    const instance = new module.eSpeakNGWorker();
    instance.set_voice('en-us');
    return instance;
  })();
  return worker;
}

/** `text` spoken by eSpeak NG (US English), as 16-bit LE mono PCM at `sampleRate`; cached in memory. */
export function synthesizeSpeech(text: string, sampleRate: number): Promise<Buffer> {
  const key = `${sampleRate}:${text}`;
  let result = cache.get(key);
  if (!result) {
    result = (async () => {
      const engine = await espeak();
      const chunks: Int16Array[] = [];
      engine.synthesize(text, (samples) => {
        if (samples && samples.length > 0) chunks.push(samples.slice());
        return false; // false: keep going
      });
      const native = new Int16Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
      let offset = 0;
      for (const chunk of chunks) {
        native.set(chunk, offset);
        offset += chunk.length;
      }
      const rate = engine.get_samplerate();
      return samplesToPcm16(rate === sampleRate ? native : resample(native, rate, sampleRate));
    })();
    cache.set(key, result);
  }
  return result;
}
