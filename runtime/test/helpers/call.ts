/** Starts one engine call against the in-memory stand-ins. */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { convertAudio } from '../../src/audio/convert.ts';
import { CallSession, SILENCE_REPROMPT } from '../../src/engine/call-session.ts';
import { substituteVariables } from '../../src/engine/text.ts';
import { DEFAULT_PRICES } from '../../src/engine/prices.ts';
import { CARRIER_FORMAT, type AudioFormat } from '../../src/providers/types.ts';
import type { RuntimeCallConfig } from '../../src/platform/call-platform.ts';
import { FakePlatform, FakeProviders, PhoneLine, until } from './fakes.ts';

export async function startCall(config: RuntimeCallConfig, providers: FakeProviders, format: AudioFormat = CARRIER_FORMAT, options: { telephony?: boolean; heartbeatMs?: number } = {}) {
  const greeting = config.agent.first_message ? substituteVariables(config.agent.first_message, config.variables) : '';
  await providers.prepare([greeting, SILENCE_REPROMPT].filter(Boolean), format.sampleRate);
  const platform = new FakePlatform(config);
  const line = new PhoneLine(format);
  const session = new CallSession({
    platform, transport: line, providersFactory: () => providers, convert: convertAudio, prices: DEFAULT_PRICES, telephony: options.telephony ?? true,
    heartbeatMs: options.heartbeatMs,
  });
  const done = session.run();
  return { platform, line, session, done };
}

/** Waits for the agent to stop speaking for the `n`-th time (1-based). */
export function agentDone(line: PhoneLine, n: number, timeoutMs = 20_000) {
  return until(() => line.speaking.filter((s) => !s.speaking).length >= n, timeoutMs, `agent utterance ${n} to end`);
}

/**
 * The longest the process's event loop stood still since the watch began, in ms. A test that compares
 * the engine's clock with the fakes' allows for it: the engine and a fake read the time a few
 * microtasks apart, but in a whole run other files' work shares the process (an in-process database
 * query, a major GC), and a stall that lands between the two readings moves them apart by its length.
 */
export function watchStalls(): { longestMs(): number; stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  return { longestMs: () => histogram.max / 1e6, stop: () => histogram.disable() };
}
