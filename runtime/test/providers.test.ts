import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createProviders } from '../src/providers/index.ts';
import { ProviderError } from '../src/providers/types.ts';
import { validateProvider } from '../src/providers/validate.ts';
import { AnthropicStandin } from './standins/anthropic.ts';
import { GoogleStandin } from './standins/google.ts';
import type { HttpStandin } from './standins/http-standin.ts';
import { OpenAiStandin } from './standins/openai.ts';
import { AssemblyAiStandin, DeepgramStandin } from './standins/stt.ts';
import { AzureStandin, CartesiaStandin, ElevenLabsStandin } from './standins/tts.ts';

const KEY = 'validate-key';

describe('createProviders', () => {
  it('builds the three adapters of an agent', () => {
    const providers = createProviders(
      {
        stt: { provider: 'deepgram', model: null, credentials: { api_key: 'k' } },
        tts: { provider: 'elevenlabs', model: null, voice_id: 'v', credentials: { api_key: 'k' } },
        llm: { provider: 'openai', model: 'gpt-4o-mini', credentials: { api_key: 'k' } },
      },
      'EN',
    );
    assert.equal(typeof providers.stt.open, 'function');
    assert.equal(typeof providers.tts.synthesize, 'function');
    assert.equal(typeof providers.llm.stream, 'function');
  });

  it('an unknown provider or a missing key is ProviderError not_configured naming the provider', () => {
    const good = { provider: 'openai', model: null, credentials: { api_key: 'k' } };
    for (const [slot, bad] of [
      ['stt', { provider: 'nuance', model: null, credentials: { api_key: 'k' } }],
      ['tts', { provider: 'polly', model: null, credentials: { api_key: 'k' } }],
      ['llm', { provider: 'mistral', model: null, credentials: { api_key: 'k' } }],
      ['llm', { provider: 'anthropic', model: null, credentials: { api_key: '' } }],
    ] as const) {
      const settings = { stt: { ...good, provider: 'whisper' }, tts: good, llm: good, [slot]: bad };
      assert.throws(
        () => createProviders(settings, 'EN'),
        (error: unknown) => error instanceof ProviderError && error.code === 'not_configured' && error.provider === bad.provider,
      );
    }
  });
});

describe('validateProvider', () => {
  const standins: Array<[string, HttpStandin, string]> = [
    ['deepgram', new DeepgramStandin({ key: KEY }), '/v1/projects'],
    ['assemblyai', new AssemblyAiStandin({ key: KEY }), '/v2/transcript'],
    ['openai', new OpenAiStandin({ key: KEY }), '/v1/models'],
    ['groq', new OpenAiStandin({ key: KEY }), '/v1/models'],
    ['elevenlabs', new ElevenLabsStandin({ key: KEY }), '/v1/user'],
    ['cartesia', new CartesiaStandin({ key: KEY }), '/voices'],
    ['azure', new AzureStandin({ key: KEY }), '/cognitiveservices/voices/list'],
    ['anthropic', new AnthropicStandin({ key: KEY }), '/v1/models'],
    ['google', new GoogleStandin({ key: KEY }), '/v1beta/models'],
  ];
  before(() => Promise.all(standins.map(([, standin]) => standin.start())));
  after(() => Promise.all(standins.map(([, standin]) => standin.close())));

  for (const [provider, standin, path] of standins) {
    it(`${provider}: an authenticated GET of ${path} accepts the right key and refuses a wrong one`, async () => {
      const good = await validateProvider(provider, { api_key: KEY, base_url: standin.url });
      assert.equal(good.ok, true, good.detail);
      assert.equal(standin.requests.at(-1)!.path, path);
      const bad = await validateProvider(provider, { api_key: 'wrong', base_url: standin.url });
      assert.equal(bad.ok, false);
      assert.match(bad.detail, /HTTP (401|400)/);
    });
  }

  it('an unreachable address, an unknown provider and a missing region say so without throwing', async () => {
    assert.match((await validateProvider('openai', { api_key: KEY, base_url: 'http://127.0.0.1:1' })).detail, /unreachable/);
    assert.deepEqual(await validateProvider('nuance', { api_key: KEY }), { ok: false, detail: 'no adapter for provider "nuance"' });
    assert.equal((await validateProvider('azure', { api_key: KEY })).ok, false);
  });
});
