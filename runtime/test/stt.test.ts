import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeSamples } from '../src/audio/convert.ts';
import { MULAW_SILENCE } from '../src/audio/mulaw.ts';
import { pcm16ToSamples } from '../src/audio/pcm.ts';
import { synthesizeSpeech } from '../src/audio/synthesize.ts';
import { createStt } from '../src/providers/index.ts';
import type { StreamingSttTuning } from '../src/providers/stt/deepgram.ts';
import { CARRIER_FORMAT, PREVIEW_FORMAT, ProviderError, type AudioFormat, type SttOptions, type SttStream } from '../src/providers/types.ts';
import { sleep } from './standins/http-standin.ts';
import { OpenAiStandin } from './standins/openai.ts';
import { AssemblyAiStandin, DeepgramStandin } from './standins/stt.ts';

const KEY = 'stt-test-key';
const PHRASE = 'I would like to book a table for two.';

/** The caller saying something (eSpeak NG), then `silenceMs` of silence, as 20 ms frames in the leg's format. */
async function utterance(format: AudioFormat, silenceMs: number): Promise<Buffer[]> {
  const speech = encodeSamples(pcm16ToSamples(await synthesizeSpeech('I would like to book a table for two.', format.sampleRate)), format.encoding);
  const bytesPerMs = (format.sampleRate * (format.encoding === 'mulaw' ? 1 : 2)) / 1000;
  const audio = Buffer.concat([speech, Buffer.alloc(silenceMs * bytesPerMs, format.encoding === 'mulaw' ? MULAW_SILENCE : 0)]);
  const frames: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += 20 * bytesPerMs) frames.push(audio.subarray(offset, offset + 20 * bytesPerMs));
  return frames;
}

/** Sends frames a little faster than real time (the stand-ins keep audio time, not wall time). */
async function send(stream: SttStream, frames: Buffer[]): Promise<void> {
  for (let i = 0; i < frames.length; i++) {
    stream.write(frames[i]!);
    if (i % 10 === 9) await sleep(5);
  }
}

function listener() {
  const events: Array<{ text: string; final: boolean }> = [];
  const errors: ProviderError[] = [];
  let ends = 0;
  let onEnd: () => void = () => {};
  const ended = new Promise<void>((resolve) => (onEnd = resolve));
  const options = (input: AudioFormat): SttOptions => ({
    input,
    language: 'EN-US',
    onTranscript: (text, final) => events.push({ text, final }),
    onEndOfUtterance: () => {
      ends++;
      onEnd();
    },
    onError: (error) => errors.push(error),
  });
  return { events, errors, ended, options, ends: () => ends };
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

for (const provider of ['deepgram', 'assemblyai'] as const) {
  describe(`STT ${provider} against its stand-in`, () => {
    const standin = provider === 'deepgram' ? new DeepgramStandin({ key: KEY, sttFinalMs: 40 }) : new AssemblyAiStandin({ key: KEY, sttFinalMs: 40 });
    const stt = (tuning: StreamingSttTuning = {}) => createStt({ provider, model: null, credentials: { api_key: KEY, base_url: standin.url } }, tuning);
    before(() => standin.start());
    after(() => standin.close());

    it('takes the carrier leg μ-law 8 kHz as it is, sends interim results, then the final text at the vendor endpoint', async () => {
      standin.phrases.say(PHRASE);
      const heard = listener();
      const stream = await stt().open(heard.options(CARRIER_FORMAT));
      assert.deepEqual(stream.format, CARRIER_FORMAT);
      const frames = await utterance(CARRIER_FORMAT, 800);
      await send(stream, frames);
      await heard.ended;
      assert.equal(await stream.flush(), PHRASE);
      const interim = heard.events.filter((event) => !event.final);
      assert.ok(interim.length >= 2, `${interim.length} interim results`);
      assert.ok(heard.events.findIndex((event) => !event.final) < heard.events.findIndex((event) => event.final), 'interim before final');
      assert.equal(heard.events.filter((event) => event.final && event.text !== '').at(-1)!.text, PHRASE);
      const bytes = frames.reduce((sum, frame) => sum + frame.length, 0);
      const session = standin.sessions.at(-1)!;
      // The endpoint may be answered while the last frames are still on the socket: wait for them to arrive.
      for (let waited = 0; provider === 'deepgram' && session.audioBytes < bytes && waited < 2000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      assert.equal(session.audioBytes, provider === 'deepgram' ? bytes : session.audioBytes);
      assert.ok(Math.abs(stream.audioSeconds() - bytes / 8000) < 0.06, `${stream.audioSeconds()} s`);
      if (provider === 'deepgram') {
        for (const [name, value] of Object.entries({ encoding: 'mulaw', sample_rate: '8000', channels: '1', interim_results: 'true', language: 'en-US' })) assert.equal(session.query.get(name), value, name);
        assert.ok(Number(session.query.get('endpointing')) > 0);
      } else {
        for (const [name, value] of Object.entries({ encoding: 'pcm_mulaw', sample_rate: '8000', format_turns: 'true' })) assert.equal(session.query.get(name), value, name);
        // The vendor's 50-1000 ms rule held for every message (the stand-in closes with 3007 otherwise).
        assert.ok(session.messageBytes.every((size) => size >= 400 && size <= 8000), `message sizes ${session.messageBytes.slice(0, 5)}`);
      }
      await stream.close();
      assert.deepEqual(heard.errors, []);
      assert.ok(session.closed, provider === 'deepgram' ? 'CloseStream sent' : 'Terminate sent');
    });

    it('flush before the vendor endpoint asks it to finalize now and resolves with the text', async () => {
      standin.phrases.say('Tomorrow at eight.');
      const heard = listener();
      // A flush timeout far beyond any stall of a loaded machine, so that the reply and the timeout cannot be confused.
      const flushTimeoutMs = 10_000;
      const stream = await stt({ flushTimeoutMs }).open(heard.options(CARRIER_FORMAT));
      await send(stream, await utterance(CARRIER_FORMAT, 100));
      await sleep(50);
      const started = performance.now();
      assert.equal(await stream.flush(), 'Tomorrow at eight.');
      assert.ok(performance.now() - started < flushTimeoutMs / 2, 'answered by the finalize reply, not the flush timeout');
      assert.deepEqual(standin.sessions.at(-1)!.controls.at(-1), { type: provider === 'deepgram' ? 'Finalize' : 'ForceEndpoint' });
      assert.equal(heard.ends(), 0, 'no endpoint of its own before the flush');
      await stream.close();
    });

    it('takes the preview leg as 16 kHz PCM', async () => {
      standin.phrases.say(PHRASE);
      const heard = listener();
      const stream = await stt().open(heard.options(PREVIEW_FORMAT));
      assert.deepEqual(stream.format, PREVIEW_FORMAT);
      await send(stream, await utterance(PREVIEW_FORMAT, 800));
      await heard.ended;
      assert.equal(await stream.flush(), PHRASE);
      const query = standin.sessions.at(-1)!.query;
      assert.equal(query.get('encoding'), provider === 'deepgram' ? 'linear16' : 'pcm_s16le');
      assert.equal(query.get('sample_rate'), '16000');
      await stream.close();
    });

    it('a wrong key is `unauthorized`, a refused upgrade (503) `unavailable`', async () => {
      const wrong = createStt({ provider, model: null, credentials: { api_key: 'wrong', base_url: standin.url } });
      assert.equal((await rejection(wrong.open(listener().options(CARRIER_FORMAT)))).code, 'unauthorized');
      standin.refuseUpgrade(503);
      assert.equal((await rejection(stt().open(listener().options(CARRIER_FORMAT)))).code, 'unavailable');
      const nowhere = createStt({ provider, model: null, credentials: { api_key: KEY, base_url: 'http://127.0.0.1:1' } });
      assert.equal((await rejection(nowhere.open(listener().options(CARRIER_FORMAT)))).code, 'unavailable');
    });

    it('a socket dropped mid-call reports the error and fails a pending flush', async () => {
      standin.dropAfterAudio();
      const heard = listener();
      const stream = await stt().open(heard.options(CARRIER_FORMAT));
      const frames = await utterance(CARRIER_FORMAT, 0);
      const flushed = (async () => {
        await send(stream, frames.slice(0, 10));
        return stream.flush();
      })();
      const error = await rejection(flushed).catch(async () => {
        // The drop may land before the flush: then the flush itself rejects at once.
        return rejection(stream.flush());
      });
      assert.equal(error.code, 'unavailable');
      await sleep(20);
      assert.equal(heard.errors.length, 1);
      assert.equal(heard.errors[0]!.provider, provider);
    });
  });
}

describe('STT whisper against the OpenAI stand-in', () => {
  const standin = new OpenAiStandin({ key: KEY, sttFinalMs: 20 });
  before(() => standin.start());
  after(() => standin.close());

  it('sends the utterance since the last flush as a WAV (μ-law decoded to 16-bit PCM) and returns its text', async () => {
    standin.phrases.say(PHRASE, 'Second sentence.');
    const heard = listener();
    const stt = createStt({ provider: 'whisper', model: null, credentials: { api_key: KEY, base_url: `${standin.url}/v1` } });
    const stream = await stt.open(heard.options(CARRIER_FORMAT));
    const frames = await utterance(CARRIER_FORMAT, 200);
    await send(stream, frames);
    assert.equal(await stream.flush(), PHRASE);
    const sent = standin.transcribed.at(-1)!;
    assert.deepEqual({ sampleRate: sent.sampleRate, channels: sent.channels, model: sent.model, language: sent.language }, { sampleRate: 8000, channels: 1, model: 'whisper-1', language: 'en' });
    const bytes = frames.reduce((sum, frame) => sum + frame.length, 0);
    assert.ok(Math.abs(sent.seconds - bytes / 8000) < 0.001);
    assert.equal(standin.requests.at(-1)!.path, '/v1/audio/transcriptions');
    // Only what came after the first flush goes into the second request.
    await send(stream, frames.slice(0, 50));
    assert.equal(await stream.flush(), 'Second sentence.');
    assert.ok(Math.abs(standin.transcribed.at(-1)!.seconds - 1) < 0.001);
    assert.ok(Math.abs(stream.audioSeconds() - (bytes / 8000 + 1)) < 0.001);
    assert.equal(await stream.flush(), '', 'nothing said, nothing sent');
    assert.equal(standin.transcribed.length, 2);
    await stream.close();
  });

  it('a refused key fails the flush as `unauthorized`', async () => {
    const stt = createStt({ provider: 'whisper', model: null, credentials: { api_key: 'wrong', base_url: standin.url } });
    const stream = await stt.open(listener().options(CARRIER_FORMAT));
    await send(stream, await utterance(CARRIER_FORMAT, 0));
    assert.equal((await rejection(stream.flush())).code, 'unauthorized');
  });
});
