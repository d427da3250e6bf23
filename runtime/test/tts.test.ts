import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { convertStream, decodeToSamples } from '../src/audio/convert.ts';
import { rms } from '../src/audio/pcm.ts';
import { createTts } from '../src/providers/index.ts';
import { escapeXml } from '../src/providers/tts/azure.ts';
import { CARRIER_FORMAT, PREVIEW_FORMAT, ProviderError, type AudioFormat, type TtsProvider, type TtsResult } from '../src/providers/types.ts';
import type { HttpStandin } from './standins/http-standin.ts';
import { OpenAiStandin } from './standins/openai.ts';
import { AzureStandin, CartesiaStandin, ElevenLabsStandin } from './standins/tts.ts';

const KEY = 'tts-test-key';
const TEXT = 'Thanks for calling. How can I help you today?';

async function drain(result: TtsResult): Promise<{ audio: Buffer; chunks: number; firstChunkAt: number; endAt: number }> {
  const parts: Buffer[] = [];
  let firstChunkAt = 0;
  for await (const chunk of result.audio) {
    if (parts.length === 0) firstChunkAt = performance.now();
    parts.push(chunk);
  }
  return { audio: Buffer.concat(parts), chunks: parts.length, firstChunkAt, endAt: performance.now() };
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
}

const seconds = (audio: Buffer, format: AudioFormat) => audio.length / (format.sampleRate * (format.encoding === 'mulaw' ? 1 : 2));

interface Case {
  provider: 'elevenlabs' | 'cartesia' | 'openai' | 'azure';
  make: () => HttpStandin & { served?: Array<{ text: string; format: AudioFormat }> };
  /** What the vendor is asked for on the carrier leg. */
  carrier: AudioFormat;
  carrierRequest: (standin: HttpStandin) => void;
}

const cases: Case[] = [
  {
    provider: 'elevenlabs',
    make: () => new ElevenLabsStandin({ key: KEY, firstByteMs: 30, chunkMs: 100 }),
    carrier: CARRIER_FORMAT,
    carrierRequest: (standin) => {
      const request = standin.requests.at(-1)!;
      assert.equal(request.path, '/v1/text-to-speech/voice-1/stream');
      assert.equal(request.query.get('output_format'), 'ulaw_8000');
      assert.equal(request.headers['xi-api-key'], KEY);
      assert.equal(request.json.text, TEXT);
      assert.equal(typeof request.json.model_id, 'string');
    },
  },
  {
    provider: 'cartesia',
    make: () => new CartesiaStandin({ key: KEY, firstByteMs: 30, chunkMs: 100 }),
    carrier: CARRIER_FORMAT,
    carrierRequest: (standin) => {
      const request = standin.requests.at(-1)!;
      assert.equal(request.path, '/tts/bytes');
      assert.equal(request.headers['cartesia-version'], '2024-06-10');
      assert.deepEqual(request.json.voice, { mode: 'id', id: 'voice-1' });
      assert.deepEqual(request.json.output_format, { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 });
      assert.equal(request.json.transcript, TEXT);
    },
  },
  {
    provider: 'openai',
    make: () => new OpenAiStandin({ key: KEY, firstByteMs: 30 }),
    carrier: { encoding: 'pcm16', sampleRate: 24000 }, // OpenAI only makes 24 kHz PCM: the engine converts
    carrierRequest: (standin) => {
      const request = standin.requests.at(-1)!;
      assert.equal(request.path, '/v1/audio/speech');
      assert.equal(request.headers.authorization, `Bearer ${KEY}`);
      assert.equal(request.json.response_format, 'pcm');
      assert.equal(request.json.voice, 'voice-1');
      assert.equal(request.json.input, TEXT);
    },
  },
  {
    provider: 'azure',
    make: () => new AzureStandin({ key: KEY, firstByteMs: 30, chunkMs: 100 }),
    carrier: CARRIER_FORMAT,
    carrierRequest: (standin) => {
      const request = standin.requests.at(-1)!;
      assert.equal(request.path, '/cognitiveservices/v1');
      assert.equal(request.headers['x-microsoft-outputformat'], 'raw-8khz-8bit-mono-mulaw');
      assert.equal(request.headers['content-type'], 'application/ssml+xml');
      assert.equal(request.headers['ocp-apim-subscription-key'], KEY);
      assert.ok(String(request.headers['user-agent']).length > 0);
    },
  },
];

for (const { provider, make, carrier, carrierRequest } of cases) {
  describe(`TTS ${provider} against its stand-in`, () => {
    const standin = make();
    let tts: TtsProvider;
    before(async () => {
      await standin.start();
      tts = createTts({ provider, model: null, voice_id: 'voice-1', credentials: { api_key: KEY, base_url: standin.url, region: 'westeurope' } }, 'EN-US');
    });
    after(() => standin.close());

    it('on the carrier leg asks the vendor for μ-law 8 kHz where it can, and streams speech in chunks', async () => {
      const result = await tts.synthesize({ text: TEXT, voiceId: null, model: null, want: CARRIER_FORMAT, signal: new AbortController().signal });
      assert.deepEqual(result.format, carrier);
      const { audio, chunks, firstChunkAt, endAt } = await drain(result);
      carrierRequest(standin);
      assert.ok(chunks >= 5, `${chunks} chunks`);
      assert.ok(endAt - firstChunkAt > 10, 'audio arrives over time');
      const duration = seconds(audio, result.format);
      assert.ok(duration > 1.5 && duration < 5, `${duration} s of speech`);
      assert.ok(rms(decodeToSamples(audio, result.format.encoding)) > 500, 'speech, not silence');
      if (result.format.encoding === 'pcm16') assert.equal(audio.length % 2, 0);
    });

    it('on the preview leg gets 16 kHz PCM (OpenAI: 24 kHz PCM)', async () => {
      const result = await tts.synthesize({ text: TEXT, voiceId: null, model: null, want: PREVIEW_FORMAT, signal: new AbortController().signal });
      assert.deepEqual(result.format, provider === 'openai' ? { encoding: 'pcm16', sampleRate: 24000 } : PREVIEW_FORMAT);
      await drain(result);
    });

    it('a wrong key is `unauthorized`, HTTP 500 `unavailable`', async () => {
      const wrong = createTts({ provider, model: null, voice_id: 'voice-1', credentials: { api_key: 'wrong', base_url: standin.url, region: 'westeurope' } }, 'EN-US');
      assert.equal((await rejection(wrong.synthesize({ text: TEXT, voiceId: null, model: null, want: CARRIER_FORMAT, signal: new AbortController().signal }))).code, 'unauthorized');
      standin.failNext({ status: 500 });
      assert.equal((await rejection(tts.synthesize({ text: TEXT, voiceId: null, model: null, want: CARRIER_FORMAT, signal: new AbortController().signal }))).code, 'unavailable');
    });

    it('a connection dropped mid-audio fails the audio stream', async () => {
      standin.failNext('drop_mid_stream');
      const result = await tts.synthesize({ text: TEXT, voiceId: null, model: null, want: CARRIER_FORMAT, signal: new AbortController().signal });
      assert.equal((await rejection(drain(result))).code, 'unavailable');
    });

    it('abort ends the audio quietly', async () => {
      const controller = new AbortController();
      const result = await tts.synthesize({ text: TEXT, voiceId: null, model: null, want: CARRIER_FORMAT, signal: controller.signal });
      let chunks = 0;
      for await (const _ of result.audio) {
        chunks++;
        controller.abort();
      }
      assert.equal(chunks, 1);
    });
  });
}

describe('OpenAI TTS on the carrier leg', () => {
  const standin = new OpenAiStandin({ key: KEY });
  before(() => standin.start());
  after(() => standin.close());

  it('24 kHz PCM converted to 8 kHz μ-law by the resampling converter keeps the speech duration', async () => {
    const tts = createTts({ provider: 'openai', model: null, credentials: { api_key: KEY, base_url: standin.url } }, 'EN');
    const result = await tts.synthesize({ text: TEXT, voiceId: null, model: null, want: CARRIER_FORMAT, signal: new AbortController().signal });
    const parts: Buffer[] = [];
    let vendorBytes = 0;
    const counted = (async function* () {
      for await (const chunk of result.audio) {
        vendorBytes += chunk.length;
        yield chunk;
      }
    })();
    for await (const chunk of convertStream(counted, result.format, CARRIER_FORMAT)) parts.push(chunk);
    const carrier = Buffer.concat(parts);
    const vendorSeconds = vendorBytes / 2 / 24000;
    assert.ok(Math.abs(carrier.length / 8000 - vendorSeconds) < 0.005, `${carrier.length / 8000} s vs ${vendorSeconds} s`);
    assert.ok(rms(decodeToSamples(carrier, 'mulaw')) > 500);
  });
});

describe('Azure SSML', () => {
  it('escapes the text and the voice name', async () => {
    const standin = await new AzureStandin({ key: KEY }).start();
    try {
      const tts = createTts({ provider: 'azure', model: null, voice_id: 'en-GB-SoniaNeural', credentials: { api_key: KEY, base_url: standin.url } }, 'EN');
      const text = `Tom & Jerry's <best> "deal"`;
      await drain(await tts.synthesize({ text, voiceId: null, model: null, want: CARRIER_FORMAT, signal: new AbortController().signal }));
      assert.ok(standin.requests.at(-1)!.body.toString().includes(escapeXml(text)));
      assert.ok(standin.requests.at(-1)!.body.toString().includes('&amp; Jerry&apos;s &lt;best&gt; &quot;deal&quot;'));
      assert.deepEqual(standin.served.at(-1)!.text, text);
      assert.deepEqual(standin.voices, ['en-GB-SoniaNeural']);
    } finally {
      await standin.close();
    }
  });
});
