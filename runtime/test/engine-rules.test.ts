/**
 * The conversation rules of extensions.md §10 with in-memory providers and real synthesized speech:
 * barge-in (clear within 300 ms of the speech's start, the turn cut to what played), end_call,
 * transfer_call, the silence reprompt and timeout, the maximum duration and failing providers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_PRICES } from '../src/engine/prices.ts';
import { ProviderError, CARRIER_FORMAT } from '../src/providers/types.ts';
import { agentConfig, FakeProviders, sleep } from './helpers/fakes.ts';
import { agentDone, startCall, watchStalls } from './helpers/call.ts';
import { speechFrames } from './helpers/speech.ts';

const LONG_ANSWER = [
  'We have many options for you.', ' The first is a morning appointment with our senior doctor.',
  ' The second is an afternoon slot with the nurse.', ' The third is a video call in the evening.',
  ' The fourth is a home visit on the weekend.', ' Tell me which one you prefer.',
];

test('barge-in: the caller talks over a long answer; clear within 300 ms of the speech start, the turn keeps what played', async () => {
  const question = await speechFrames('What options do I have?', CARRIER_FORMAT);
  const interruption = await speechFrames('Wait, the morning one please.', CARRIER_FORMAT);
  const providers = new FakeProviders({
    stt: ['What options do I have?', 'Wait, the morning one please.'],
    llm: [{ text: LONG_ANSWER, chunkMs: 800 }, { text: ['Great, the morning it is.'] }], // a sentence every 0.8 s: still streaming at the barge-in
  });
  const { platform, line, done } = await startCall(agentConfig(), providers);
  await agentDone(line, 1);
  await line.say(question);
  const afterQuestion = line.agentFrames.length;
  await new Promise<void>((resolve) => { const t = setInterval(() => { if (line.agentFrames.length > afterQuestion) { clearInterval(t); resolve(); } }, 5); });
  await sleep(2500); // the first sentence (about two seconds) has played
  const speaking = line.say(interruption);
  await new Promise<void>((resolve) => { const t = setInterval(() => { if (line.clears.length) { clearInterval(t); resolve(); } }, 5); });
  const clearDelay = line.clears[0]! - line.speechStartedAt!;
  // At least the 200 ms of speech that count as a barge-in, and during the speech, not at its end (the
  // 300 ms budget of §10 is a figure for bench/runtime.ts: a loaded test machine would only make it flaky).
  const sentAtClear = line.agentFrames.length;
  await speaking;
  assert.ok(clearDelay >= 180 && clearDelay < line.speechEndedAt! - line.speechStartedAt!, `clear ${clearDelay} ms after the caller started speaking`);
  await agentDone(line, 3);
  line.hangUp();
  await done;

  const turns = platform.final!.transcript!;
  assert.deepEqual(turns.map((t) => t.role), ['agent', 'user', 'agent', 'user', 'agent']);
  const cut = turns[2]!;
  const full = LONG_ANSWER.join('').trim();
  assert.equal(cut.interrupted, true);
  assert.ok(cut.text.startsWith('We have many options for you.'), `the played sentence is kept: ${cut.text}`);
  assert.ok(full.startsWith(cut.text) && cut.text.length < full.length / 2, `only what played: ${cut.text}`);
  assert.ok(!providers.ttsTexts.includes('Tell me which one you prefer.'), 'generation stopped: the last sentence was never synthesized');
  // After the clear, no more audio of the cut answer: the next frames are the new answer's.
  const newAnswerFrames = line.agentFrames.slice(sentAtClear);
  assert.ok(newAnswerFrames.length === 0 || newAnswerFrames[0]!.at > line.clears[0]! + 150 + 250, 'nothing of the cut answer after the clear');
  const next = providers.llmRequests[1]!.messages;
  assert.deepEqual(next.at(-2), { role: 'assistant', content: cut.text }, 'the LLM learns what the caller actually heard');
  assert.equal(turns[4]!.interrupted, undefined);
});

test('TTS look-ahead is bounded: a barge-in leaves at most one unplayed sentence synthesized, and only synthesized characters are billed', async () => {
  const question = await speechFrames('What options do I have?', CARRIER_FORMAT);
  const interruption = await speechFrames('Wait, the morning one please.', CARRIER_FORMAT);
  const providers = new FakeProviders({
    stt: ['What options do I have?', 'Wait, the morning one please.'],
    llm: [{ text: LONG_ANSWER, chunkMs: 20 }, { text: ['Great, the morning it is.'] }], // all six sentences arrive within 0.4 s
  });
  const { platform, line, done } = await startCall(agentConfig(), providers);
  await agentDone(line, 1);
  await line.say(question);
  const afterQuestion = line.agentFrames.length;
  await new Promise<void>((resolve) => { const t = setInterval(() => { if (line.agentFrames.length > afterQuestion) { clearInterval(t); resolve(); } }, 5); });
  await sleep(2500); // into the second sentence (the first lasts about two seconds)
  await line.say(interruption);
  await agentDone(line, 3);
  line.hangUp();
  await done;

  const sentences = LONG_ANSWER.map((s) => s.trim());
  const cut = platform.final!.transcript![2]!;
  assert.equal(cut.interrupted, true);
  // Sentences the caller heard at least the start of: the cut text is a prefix of the answer.
  let heard = 0;
  for (let i = 0, at = 0; i < sentences.length; at += sentences[i]!.length + 1, i++) if (cut.text.length > at) heard++;
  const synthesized = providers.ttsTexts.filter((text) => sentences.includes(text));
  assert.deepEqual(synthesized, sentences.slice(0, synthesized.length), 'synthesized in order');
  assert.ok(heard >= 1 && synthesized.length <= heard + 1, `${synthesized.length} sentences synthesized, ${heard} heard: at most one ahead`);
  assert.ok(synthesized.length < sentences.length, 'the sentences after the barge-in were never synthesized');
  // Billed: the characters the TTS was asked for (greeting, the synthesized sentences, the next answer), nothing else.
  const characters = providers.ttsTexts.reduce((sum, text) => sum + text.length, 0);
  const unsynthesized = sentences.slice(synthesized.length).reduce((sum, text) => sum + text.length, 0);
  assert.ok(unsynthesized > 0);
  assert.equal(platform.final!.cost_breakdown!.tts, Math.round((characters * DEFAULT_PRICES.tts_per_1k_chars) / 1000 * 10_000) / 10_000);
});

test('end_call: the agent finishes its sentence, then the call ends tool_end_call', async () => {
  const bye = await speechFrames('That is all, thank you, goodbye.', CARRIER_FORMAT);
  const providers = new FakeProviders({
    stt: ['That is all, thank you, goodbye.'],
    llm: [{ text: ['Thank you for calling, goodbye.'], toolCalls: [{ name: 'end_call', arguments: { reason: 'done' } }] }],
  });
  const { platform, line, done } = await startCall(agentConfig(), providers);
  await agentDone(line, 1);
  await line.say(bye);
  const outcome = await done;
  assert.equal(outcome.endReason, 'tool_end_call');
  const final = platform.final!;
  assert.equal(final.status, 'completed');
  const last = final.transcript!.at(-1)!;
  assert.equal(last.role, 'agent');
  assert.equal(last.text, 'Thank you for calling, goodbye.');
  assert.equal(last.interrupted, undefined);
  assert.equal(final.transcript!.at(-2)!.tool!.name, 'end_call');
  const lastFrame = line.agentFrames.at(-1)!.at;
  assert.ok(line.closed, 'the stream is closed after the report');
  assert.ok(final.duration_seconds! * 1000 >= lastFrame - line.agentFrames[0]!.at, 'the goodbye played before the end');
});

test('transfer_call is offered with a transfer number and ends the call transferred', async () => {
  const ask = await speechFrames('Can I talk to a person please?', CARRIER_FORMAT);
  const providers = new FakeProviders({
    stt: ['Can I talk to a person please?'],
    llm: [{ text: ['Let me put you through.'], toolCalls: [{ name: 'transfer_call', arguments: {} }] }],
  });
  const { platform, line, done } = await startCall(agentConfig({ transfer_number: '+15550100', end_call_enabled: false }), providers);
  await agentDone(line, 1);
  await line.say(ask);
  assert.equal((await done).endReason, 'transferred');
  assert.deepEqual(providers.llmRequests[0]!.tools, ['transfer_call'], 'end_call is not offered when end_call_enabled is false');
  assert.equal(platform.final!.end_reason, 'transferred');
  assert.equal(platform.final!.transcript!.at(-1)!.text, 'Let me put you through.');
});

test('silence: one reprompt at half of silence_timeout_seconds, then the call ends silence_timeout', async () => {
  const providers = new FakeProviders({ stt: [], llm: [] });
  const { platform, line, done } = await startCall(agentConfig({ silence_timeout_seconds: 2 }), providers);
  await agentDone(line, 1);
  const greetingEnd = line.speaking.find((s) => !s.speaking)!.at;
  await agentDone(line, 2, 5000);
  const repromptStart = line.speaking.filter((s) => s.speaking)[1]!.at;
  const repromptEnd = line.speaking.filter((s) => !s.speaking)[1]!.at;
  const outcome = await done;
  const endedAt = performance.now();
  assert.equal(outcome.endReason, 'silence_timeout');
  assert.deepEqual(providers.ttsTexts, ['Hello Ada, this is Acme.', 'Are you still there?']);
  const reprompt = repromptStart - greetingEnd;
  // Half of the 2 s timeout, then the other half: each closer to 1 s than to the whole 2 s.
  assert.ok(reprompt >= 999 && reprompt < 1900, `reprompt ${reprompt} ms after the greeting`);
  const end = endedAt - repromptEnd;
  assert.ok(end >= 999 && end < 1900, `end ${end} ms after the reprompt`);
  assert.equal(platform.final!.status, 'completed');
  assert.equal(providers.llmRequests.length, 0);
});

test('max_call_duration_seconds ends the call max_duration', async () => {
  const providers = new FakeProviders({ stt: [], llm: [] });
  const stalls = watchStalls();
  const { platform, done } = await startCall(agentConfig({ max_call_duration_seconds: 2, first_message: null }), providers);
  const outcome = await done;
  assert.equal(outcome.endReason, 'max_duration');
  // The timer fires late by as much as the process stood still (a loaded machine), never early.
  const duration = platform.final!.duration_seconds!;
  const late = 0.2 + stalls.longestMs() / 1000;
  stalls.stop();
  assert.ok(duration >= 1.999 && duration < 2 + late, `duration ${duration} s (allowed up to ${(2 + late).toFixed(3)} s)`);
});

test('a provider that fails at open ends the call failed / error with the provider named', async () => {
  const providers = new FakeProviders({ stt: [], llm: [] });
  providers.sttOpenError = new ProviderError('deepgram', 'unauthorized', 'Deepgram refused the API key (401)');
  const { platform, line, done } = await startCall(agentConfig(), providers);
  assert.equal((await done).endReason, 'error');
  assert.equal(platform.final!.status, 'failed');
  assert.deepEqual(platform.final!.error, { provider: 'deepgram', code: 'unauthorized', message: 'Deepgram refused the API key (401)' });
  assert.ok(line.closed);
});

test('an LLM that fails mid-call ends the call error at once, never leaving the caller in silence', async () => {
  const question = await speechFrames('Hello, are you there?', CARRIER_FORMAT);
  const providers = new FakeProviders({
    stt: ['Hello, are you there?'],
    llm: [{ fail: new ProviderError('openai', 'rate_limited', 'OpenAI answered 429') }],
  });
  const { platform, line, done } = await startCall(agentConfig(), providers);
  await agentDone(line, 1);
  await line.say(question);
  const heardAt = performance.now();
  await done;
  // The silence reprompt would come at 15 s (half of the 30 s timeout): anything well under it is the turn.
  assert.ok(performance.now() - heardAt < 10_000, 'ended within the turn, not after a silence timeout');
  assert.equal(platform.final!.end_reason, 'error');
  assert.deepEqual(platform.final!.error, { provider: 'openai', code: 'rate_limited', message: 'OpenAI answered 429' });
  assert.deepEqual(platform.final!.transcript!.map((t) => t.role), ['agent', 'user']);
});

test('a preview (no carrier) reports while it lives, so the platform can end it if this process dies; a carrier call does not', async () => {
  for (const telephony of [false, true]) {
    const providers = new FakeProviders({ stt: [], llm: [] });
    const { platform, session, done } = await startCall(agentConfig({ first_message: null }), providers, CARRIER_FORMAT, { telephony, heartbeatMs: 200 });
    await sleep(1100);
    const progress = platform.reports.filter((r) => r.status === undefined).length;
    await session.end('user_hangup');
    await done;
    if (telephony) assert.equal(progress, 0, 'the carrier ends a carrier call');
    else assert.ok(progress >= 3, `progress reports of a silent preview in 1.1 s at 200 ms: ${progress}`);
  }
});
