/**
 * The conversation engine with in-memory providers (fixed delays) and a phone line that plays
 * synthesized speech in real time: greeting, a turn found by the VAD, latency, costs, tools,
 * knowledge search and the recording.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_PRICES } from '../src/engine/prices.ts';
import { agentConfig, FakeProviders, sleep, until } from './helpers/fakes.ts';
import { agentDone, startCall, watchStalls } from './helpers/call.ts';
import { speechFrames } from './helpers/speech.ts';
import { CARRIER_FORMAT } from '../src/providers/types.ts';

const round4 = (value: number) => Math.round(value * 10_000) / 10_000;

test('greets first, then answers a spoken question sentence by sentence, with latency and costs', async () => {
  const question = await speechFrames('I would like to book an appointment for tomorrow morning.', CARRIER_FORMAT);
  const providers = new FakeProviders({
    stt: ['I would like to book an appointment for tomorrow morning.'],
    llm: [{ text: ['Of course', '. Dr. Smith has ', 'a slot at 10.30', ' tomorrow. Does that work?'], firstTokenMs: 250 }],
  });
  const stalls = watchStalls();
  const { platform, line, done } = await startCall(agentConfig(), providers);

  await agentDone(line, 1);
  assert.deepEqual(providers.ttsTexts, ['Hello Ada, this is Acme.'], 'the greeting, variables substituted, is the first thing spoken');
  assert.equal(providers.llmRequests.length, 0, 'the greeting needs no LLM');

  await line.say(question);
  const speechEnd = line.speechEndedAt!;
  await agentDone(line, 2);
  line.hangUp();
  const outcome = await done;
  const final = platform.final!;

  assert.equal(platform.reports[0]!.status, 'in_progress', 'in_progress is reported at the start');
  assert.equal(outcome.endReason, 'user_hangup');
  assert.equal(final.status, 'completed');
  assert.deepEqual(providers.ttsTexts.slice(1), ['Of course.', 'Dr. Smith has a slot at 10.30 tomorrow.', 'Does that work?']);

  const request = providers.llmRequests[0]!;
  assert.deepEqual(request.messages[0], { role: 'system', content: 'You are Sam of Acme, talking to Ada.' });
  assert.deepEqual(request.messages.slice(1), [
    { role: 'assistant', content: 'Hello Ada, this is Acme.' },
    { role: 'user', content: 'I would like to book an appointment for tomorrow morning.' },
  ]);
  assert.deepEqual(request.tools, ['end_call'], 'no transfer number and no documents: only end_call is built in');

  // The VAD ends the turn after the speech, not at some timeout: well before another utterance's length.
  const flushAfterSpeech = providers.flushes[0]! - speechEnd;
  assert.ok(flushAfterSpeech >= 0 && flushAfterSpeech < 2000, `the VAD ended the turn ${flushAfterSpeech} ms after the speech`);

  const turns = final.transcript!;
  assert.deepEqual(turns.map((t) => t.role), ['agent', 'user', 'agent']);
  assert.equal(turns[2]!.text, 'Of course. Dr. Smith has a slot at 10.30 tomorrow. Does that work?');
  assert.equal(turns[2]!.interrupted, undefined);
  assert.ok(turns[1]!.end_seconds > turns[1]!.start_seconds && turns[2]!.start_seconds >= turns[1]!.end_seconds);
  // Each stage against the fakes' own clock (when each was asked and answered), not against fixed
  // bounds: a loaded machine stretches both alike. The lower bounds are the fakes' fixed delays
  // (less a millisecond of timer rounding), so a stage that was not waited for cannot pass. The two
  // clocks may part by the longest stall of the process (watchStalls) on top of 25 ms.
  const latency = turns[2]!.latency!;
  const tolerance = 25 + stalls.longestMs();
  stalls.stop();
  const near = (actual: number, expected: number, what: string) =>
    assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} ms, the fakes saw ${Math.round(expected)} ms (±${tolerance.toFixed(0)} ms)`);
  assert.ok(latency.stt_ms >= 149 && latency.llm_first_token_ms >= 249 && latency.tts_first_byte_ms >= 119, JSON.stringify(latency));
  near(latency.stt_ms, providers.sttFinals[0]! - providers.flushes[0]!, 'stt_ms');
  near(latency.llm_first_token_ms, providers.llmFirstTexts[0]! - providers.llmRequests[0]!.at, 'llm_first_token_ms');
  near(latency.tts_first_byte_ms, providers.ttsFirstBytes[1]! - providers.ttsRequests[1]!, 'tts_first_byte_ms');
  assert.ok(latency.total_ms >= latency.stt_ms + latency.llm_first_token_ms + latency.tts_first_byte_ms - 5, `total ${latency.total_ms}`);
  // Independently: the first agent frame after the question went out total_ms after the turn's end was decided.
  const firstAnswerFrame = line.agentFrames.find((f) => f.at > providers.flushes[0]!)!;
  near(latency.total_ms, firstAnswerFrame.at - providers.flushes[0]!, 'total_ms');
  assert.equal(final.latency_p50_ms, latency.total_ms);
  assert.equal(final.latency_p95_ms, latency.total_ms);

  const characters = providers.ttsTexts.join('').length;
  const breakdown = final.cost_breakdown!;
  assert.equal(breakdown.llm, round4(1000 / 1000 * DEFAULT_PRICES.llm_per_1k_input + 100 / 1000 * DEFAULT_PRICES.llm_per_1k_output));
  assert.equal(breakdown.tts, round4(characters / 1000 * DEFAULT_PRICES.tts_per_1k_chars));
  assert.equal(breakdown.stt, round4(providers.sttSeconds / 60 * DEFAULT_PRICES.stt_per_minute));
  assert.equal(breakdown.telephony, round4(final.duration_seconds! / 60 * DEFAULT_PRICES.telephony_per_minute));
  assert.equal(final.total_cost, round4(breakdown.stt + breakdown.llm + breakdown.tts + breakdown.telephony));
  assert.ok(providers.sttSeconds > 3, 'every caller frame went to the STT');
});

test('a webhook tool runs through the platform and its result goes back to the LLM; the knowledge base is searched', async () => {
  const first = await speechFrames('Is there a free slot on Tuesday?', CARRIER_FORMAT);
  const second = await speechFrames('What are your opening hours?', CARRIER_FORMAT);
  const config = agentConfig({ documentation_ids: ['doc_0123456789abcdef'], first_message: null }, {
    tools: [{ name: 'check_availability', description: 'Free slots on a day', parameters: { type: 'object', properties: { day: { type: 'string' } } } }],
  });
  const providers = new FakeProviders({
    stt: ['Is there a free slot on Tuesday?', 'What are your opening hours?'],
    llm: [
      { toolCalls: [{ name: 'check_availability', arguments: { day: 'tuesday' } }] },
      { text: ['Tuesday at ten is free.'] },
      { toolCalls: [{ name: 'search_knowledge_base', arguments: { query: 'opening hours' } }] },
      { text: ['We are open from nine to five.'] },
    ],
  });
  const { platform, line, done } = await startCall(config, providers);
  platform.hits = [{ documentation_id: 'doc_0123456789abcdef', name: 'hours.txt', text: 'Open 9-17 on weekdays.', page: null, score: 0.9 }];
  await sleep(300);
  assert.equal(providers.ttsTexts.length, 0, 'without a first message the agent waits for the caller');

  await line.say(first);
  await agentDone(line, 1);
  await line.say(second);
  await agentDone(line, 2);
  line.hangUp();
  await done;

  assert.deepEqual(platform.toolCalls, [{ name: 'check_availability', args: { day: 'tuesday' } }]);
  assert.deepEqual(platform.searches, ['opening hours']);
  const second_request = providers.llmRequests[1]!;
  assert.deepEqual(second_request.tools, ['check_availability', 'end_call', 'search_knowledge_base']);
  assert.deepEqual(second_request.messages.at(-2), {
    role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 'check_availability', arguments: { day: 'tuesday' } }],
  });
  assert.deepEqual(second_request.messages.at(-1), {
    role: 'tool', toolCallId: 'call_0', name: 'check_availability', content: JSON.stringify({ status: 200, body: { slots: ['Tuesday 10:00'] } }),
  });
  const knowledge = providers.llmRequests[3]!.messages.at(-1)!;
  assert.ok(knowledge.role === 'tool' && knowledge.content.includes('Open 9-17 on weekdays.'));

  const turns = platform.final!.transcript!;
  assert.deepEqual(turns.map((t) => t.role), ['user', 'tool', 'agent', 'user', 'tool', 'agent']);
  assert.deepEqual(turns[1]!.tool, { name: 'check_availability', arguments: { day: 'tuesday' }, result: { slots: ['Tuesday 10:00'] }, status: 200, duration_ms: 12 });
  assert.equal(turns[4]!.tool!.name, 'search_knowledge_base');
  assert.deepEqual(turns[4]!.tool!.result, [{ text: 'Open 9-17 on weekdays.', documentation_id: 'doc_0123456789abcdef', page: null, score: 0.9 }]);
  assert.equal(turns[2]!.text, 'Tuesday at ten is free.');
  // Both LLM requests (before and after the tool) are inside the turn: at least the fakes' four fixed
  // delays, less a millisecond each of timer rounding.
  const toolTurn = turns[2]!.latency!.total_ms;
  assert.ok(toolTurn >= 150 + 250 + 250 + 120 - 4, `the tool round is inside the turn latency (${toolTurn} ms)`);
});

test('with recording_enabled, a stereo WAV as long as the call: the caller left, the agent right, time-aligned', async () => {
  const question = await speechFrames('Can you hear me?', CARRIER_FORMAT);
  const providers = new FakeProviders({ stt: ['Can you hear me?'], llm: [{ text: ['Yes, loud and clear.'] }] });
  const { platform, line, done } = await startCall(agentConfig({ recording_enabled: true }), providers);
  await agentDone(line, 1);
  await line.say(question);
  await agentDone(line, 2);
  line.hangUp();
  const { report } = await done;
  await until(() => platform.recording !== null, 2000, 'the recording');
  const wav = platform.recording!;
  assert.equal(wav.toString('ascii', 0, 4), 'RIFF');
  assert.equal(wav.readUInt16LE(22), 2, 'stereo');
  assert.equal(wav.readUInt32LE(24), 8000);
  assert.equal(wav.readUInt16LE(34), 16);
  const frames = wav.readUInt32LE(40) / 4;
  assert.ok(Math.abs(frames / 8000 - report.duration_seconds!) < 0.01, `as long as the call: ${frames / 8000} s recorded, ${report.duration_seconds} s reported`);
  const energy = (channel: 0 | 1, fromS: number, toS: number) => {
    let sum = 0;
    const from = Math.floor(fromS * 8000), to = Math.min(frames, Math.floor(toS * 8000));
    for (let i = from; i < to; i++) sum += Math.abs(wav.readInt16LE(44 + i * 4 + channel * 2));
    return sum / Math.max(1, to - from);
  };
  const [greeting, user, answer] = report.transcript!;
  assert.ok(energy(1, greeting!.start_seconds, greeting!.end_seconds) > 300, 'the greeting is on the right');
  assert.ok(energy(0, greeting!.start_seconds, greeting!.end_seconds) < 20, 'the caller was silent meanwhile');
  assert.ok(energy(0, user!.start_seconds, user!.end_seconds) > 300, 'the question is on the left');
  assert.ok(energy(1, user!.start_seconds, user!.end_seconds) < 20);
  assert.ok(energy(1, answer!.start_seconds, answer!.end_seconds) > 300, 'the answer is on the right');
});
