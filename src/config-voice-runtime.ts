import { readFileSync } from 'node:fs';
import { ConfigError, integer, url, type Env } from './config-readers.ts';

/**
 * Provider prices in credits, what the voice runtime prices a call's `cost_breakdown` with
 * (extensions.md §10). The defaults are listed in docs/runtime.md ("Prices"); PRICES_FILE replaces any of them.
 */
export interface Prices {
  stt_per_minute: number;
  llm_per_1k_input_tokens: number;
  llm_per_1k_output_tokens: number;
  tts_per_1k_characters: number;
  telephony_per_minute: number;
}

export const DEFAULT_PRICES: Readonly<Prices> = Object.freeze({
  stt_per_minute: 0.5,
  llm_per_1k_input_tokens: 0.05,
  llm_per_1k_output_tokens: 0.2,
  tts_per_1k_characters: 5,
  telephony_per_minute: 1.5,
});

/** The built-in runtime (`in-process`, the default) or none in this process (`off`: `switchboard runtime` processes serve it). */
export type RuntimeMode = 'in-process' | 'off';

export interface VoiceRuntimeConfig {
  mode: RuntimeMode;
  /** The built-in runtime's carrier stream, `{PUBLIC_BASE_URL as ws/wss}/api/runtime/carrier_a/stream`. */
  builtInStreamUrl: string;
  /**
   * The runtime's preview WebSocket handed to browsers (extensions.md §11): on RUNTIME_STREAM_URL's host
   * when runtimes are served elsewhere, else on PUBLIC_BASE_URL (as ws/wss), `/api/runtime/preview`.
   */
  previewUrl: string;
  /** Where a `switchboard runtime` process reaches the API (RUNTIME_API_URL, default PUBLIC_BASE_URL). */
  apiUrl: string;
  /** How long a stopping runtime lets its calls go on (RUNTIME_DRAIN_SECONDS). */
  drainSeconds: number;
  prices: Prices;
}

/** RUNTIME, RUNTIME_API_URL, RUNTIME_DRAIN_SECONDS and PRICES_FILE. */
export function voiceRuntime(env: Env, publicBaseUrl: string): VoiceRuntimeConfig {
  const mode = env.RUNTIME || 'in-process';
  if (mode !== 'in-process' && mode !== 'off') throw new ConfigError(`RUNTIME must be in-process or off, got "${mode}"`);
  return {
    mode,
    builtInStreamUrl: `${publicBaseUrl.replace(/^http/, 'ws')}/api/runtime/carrier_a/stream`,
    previewUrl: `${runtimeOrigin(env.RUNTIME_STREAM_URL) ?? publicBaseUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}/api/runtime/preview`,
    apiUrl: (url(env, 'RUNTIME_API_URL') ?? publicBaseUrl).replace(/\/+$/, ''),
    drainSeconds: integer(env, 'RUNTIME_DRAIN_SECONDS', 600, 0, 86_400),
    prices: env.PRICES_FILE ? readPrices(env.PRICES_FILE) : { ...DEFAULT_PRICES },
  };
}

/** The origin (ws:// or wss://) of RUNTIME_STREAM_URL, where the runtimes serve their streams; its path is the carrier's. */
function runtimeOrigin(streamUrl: string | undefined): string | undefined {
  if (!streamUrl) return undefined;
  try {
    const origin = new URL(streamUrl);
    return `${origin.protocol}//${origin.host}`;
  } catch {
    return undefined; // refused with its reason by the RUNTIME_STREAM_URL check
  }
}

/** A JSON object of some of the prices' names with non-negative numbers; unknown names are refused (a typo must not price at the default silently). */
function readPrices(file: string): Prices {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`PRICES_FILE ${file} is not a readable JSON file: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(`PRICES_FILE ${file} must hold a JSON object`);
  const prices: Prices = { ...DEFAULT_PRICES };
  for (const [name, value] of Object.entries(parsed)) {
    if (!(name in DEFAULT_PRICES)) throw new ConfigError(`PRICES_FILE: unknown price "${name}" (known: ${Object.keys(DEFAULT_PRICES).join(', ')})`);
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new ConfigError(`PRICES_FILE: ${name} must be a number of credits ≥ 0`);
    prices[name as keyof Prices] = value;
  }
  return prices;
}
