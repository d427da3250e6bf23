import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLlm } from '../src/providers/index.ts';
import { ProviderError, type ChatMessage, type LlmChunk, type LlmProvider, type ToolFunction } from '../src/providers/types.ts';
import { AnthropicStandin } from './standins/anthropic.ts';
import { GoogleStandin } from './standins/google.ts';
import type { HttpStandin } from './standins/http-standin.ts';
import type { LlmScript, LlmTurn } from './standins/llm-script.ts';
import { OpenAiStandin } from './standins/openai.ts';

const KEY = 'sk-test-key';
const weather: ToolFunction = {
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'], additionalProperties: false },
};
const ANSWER = 'Sure, I can help with that. The office opens at nine. Is there anything else?';
const ARGS = { city: 'Lisbon', days: 3, note: 'rain "or" shine' };

async function collect(llm: LlmProvider, messages: ChatMessage[], signal = new AbortController().signal): Promise<{ chunks: LlmChunk[]; arrivals: number[] }> {
  const chunks: LlmChunk[] = [];
  const arrivals: number[] = [];
  for await (const chunk of llm.stream({ model: 'test-model', messages, tools: [weather], temperature: 0.3, maxTokens: 200, signal })) {
    chunks.push(chunk);
    arrivals.push(performance.now());
  }
  return { chunks, arrivals };
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

interface Case {
  provider: 'openai' | 'groq' | 'anthropic' | 'google';
  make: (script: LlmTurn[]) => HttpStandin & { script: LlmScript; usage: Array<[number, number]> };
  baseSuffix?: string;
}

const cases: Case[] = [
  { provider: 'openai', make: (script) => new OpenAiStandin({ key: KEY, script, gapMs: 15 }) },
  { provider: 'groq', make: (script) => new OpenAiStandin({ key: KEY, script, gapMs: 15 }), baseSuffix: '/openai' },
  { provider: 'anthropic', make: (script) => new AnthropicStandin({ key: KEY, script, gapMs: 15 }) },
  { provider: 'google', make: (script) => new GoogleStandin({ key: KEY, script, gapMs: 15 }) },
];

for (const { provider, make, baseSuffix = '' } of cases) {
  describe(`LLM ${provider} against its stand-in`, () => {
    const standin = make([]);
    let llm: LlmProvider;
    before(async () => {
      await standin.start();
      llm = createLlm({ provider, model: 'test-model', credentials: { api_key: KEY, base_url: standin.url + baseSuffix } });
    });
    after(() => standin.close());

    it('streams text in several pieces that arrive before the end, then the vendor-reported usage', async () => {
      standin.script.push({ text: ANSWER });
      const { chunks, arrivals } = await collect(llm, [
        { role: 'system', content: 'You are a receptionist.' },
        { role: 'user', content: 'When do you open?' },
      ]);
      const texts = chunks.filter((chunk) => chunk.type === 'text');
      assert.ok(texts.length >= 3, `${texts.length} text pieces`);
      assert.equal(texts.map((chunk) => chunk.text).join(''), ANSWER);
      assert.ok(arrivals.at(-1)! - arrivals[0]! >= 25, 'pieces arrive over time, not all at the end');
      const usage = chunks.filter((chunk) => chunk.type === 'usage');
      assert.deepEqual(usage.at(-1), { type: 'usage', inputTokens: standin.usage.at(-1)![0], outputTokens: standin.usage.at(-1)![1] });
    });

    it('returns a tool call whose arguments streamed in pieces, and sends the result back as the vendor requires', async () => {
      standin.script.push({ toolCall: { name: 'get_weather', arguments: ARGS } }, { text: 'It will rain in Lisbon.' });
      const history: ChatMessage[] = [
        { role: 'system', content: 'You are a receptionist.' },
        { role: 'assistant', content: 'Hello, how can I help?' },
        { role: 'user', content: 'Weather in Lisbon?' },
      ];
      const first = await collect(llm, history);
      const calls = first.chunks.filter((chunk) => chunk.type === 'tool_call');
      assert.equal(calls.length, 1);
      const call = calls[0]!.call;
      assert.equal(call.name, 'get_weather');
      assert.deepEqual(call.arguments, ARGS);
      assert.ok(call.id !== '');
      history.push({ role: 'assistant', content: '', toolCalls: [call] }, { role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify({ forecast: 'rain' }) });
      // The stand-in refuses (400) a request that does not carry the call and its result in the vendor's shape.
      const second = await collect(llm, history);
      assert.equal(second.chunks.filter((chunk) => chunk.type === 'text').map((chunk) => chunk.text).join(''), 'It will rain in Lisbon.');
    });

    it('sends the vendor its own request shape', () => {
      const request = standin.requests.at(-1)!;
      if (provider === 'openai' || provider === 'groq') {
        assert.equal(request.path, provider === 'groq' ? '/openai/v1/chat/completions' : '/v1/chat/completions');
        assert.equal(request.headers.authorization, `Bearer ${KEY}`);
        assert.deepEqual(request.json.stream_options, { include_usage: true });
        assert.deepEqual(request.json.tools[0], { type: 'function', function: weather });
        assert.equal(request.json.messages[0].role, 'system');
      } else if (provider === 'anthropic') {
        assert.equal(request.path, '/v1/messages');
        assert.equal(request.headers['anthropic-version'], '2023-06-01');
        assert.equal(request.json.system, 'You are a receptionist.');
        assert.deepEqual(request.json.tools[0], { name: weather.name, description: weather.description, input_schema: weather.parameters });
        assert.equal(request.json.max_tokens, 200);
      } else {
        assert.equal(request.path, '/v1beta/models/test-model:streamGenerateContent');
        assert.equal(request.query.get('alt'), 'sse');
        assert.equal(request.headers['x-goog-api-key'], KEY);
        assert.deepEqual(request.json.systemInstruction, { parts: [{ text: 'You are a receptionist.' }] });
        assert.deepEqual(request.json.generationConfig, { temperature: 0.3, maxOutputTokens: 200 });
        assert.equal(request.json.tools[0].functionDeclarations[0].name, 'get_weather');
      }
    });

    it('a wrong key is `unauthorized`', async () => {
      const wrong = createLlm({ provider, model: 'test-model', credentials: { api_key: 'wrong', base_url: standin.url + baseSuffix } });
      const error = await rejection(collect(wrong, [{ role: 'user', content: 'Hi' }]));
      assert.equal(error.code, 'unauthorized');
      assert.equal(error.provider, provider);
    });

    it('HTTP 500 is `unavailable`, 429 `rate_limited`', async () => {
      standin.failNext({ status: 500 });
      assert.equal((await rejection(collect(llm, [{ role: 'user', content: 'Hi' }]))).code, 'unavailable');
      standin.failNext({ status: 429 });
      assert.equal((await rejection(collect(llm, [{ role: 'user', content: 'Hi' }]))).code, 'rate_limited');
    });

    it('a connection dropped before the answer or mid-stream is a ProviderError, not a silent end', async () => {
      standin.failNext('drop');
      assert.equal((await rejection(collect(llm, [{ role: 'user', content: 'Hi' }]))).code, 'unavailable');
      standin.script.push({ text: ANSWER });
      standin.failNext('drop_mid_stream');
      const error = await rejection(collect(llm, [{ role: 'user', content: 'Hi' }]));
      assert.ok(['unavailable', 'protocol'].includes(error.code), error.code);
    });

    it('an unreachable server is `unavailable`', async () => {
      const nowhere = createLlm({ provider, model: 'test-model', credentials: { api_key: KEY, base_url: 'http://127.0.0.1:1' } });
      assert.equal((await rejection(collect(nowhere, [{ role: 'user', content: 'Hi' }]))).code, 'unavailable');
    });

    it('abort stops the stream quietly and closes the request', async () => {
      standin.script.push({ text: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen' });
      const controller = new AbortController();
      const texts: string[] = [];
      for await (const chunk of llm.stream({ model: 'test-model', messages: [{ role: 'user', content: 'Count' }], tools: [], temperature: 0, signal: controller.signal })) {
        if (chunk.type === 'text') texts.push(chunk.text);
        if (texts.length === 2) controller.abort();
      }
      assert.equal(texts.length, 2, 'nothing arrives after the abort');
    });
  });
}
