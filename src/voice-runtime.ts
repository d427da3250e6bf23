import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { RuntimeCalls, runtimeRoutes, type RuntimePrices } from '@switchboard/runtime';
import type { Prices } from './config-voice-runtime.ts';
import type { Services } from './services.ts';

/**
 * The built-in voice runtime in the API server (`RUNTIME=in-process`, extensions.md §10): its two
 * stream routes, mounted like any outside runtime would be served, and acting as the API's client
 * over HTTP with each call's token. Process wiring only; the runtime lives in `runtime/`.
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** The calls the in-process runtime serves (drained on SIGTERM before the server closes); null with RUNTIME=off. */
    runtimeCalls: RuntimeCalls | null;
  }
}

/** PRICES_FILE's names (docs/runtime.md, "Prices") as the runtime's engine names them. */
export function runtimePrices(prices: Prices): RuntimePrices {
  return {
    stt_per_minute: prices.stt_per_minute,
    llm_per_1k_input: prices.llm_per_1k_input_tokens,
    llm_per_1k_output: prices.llm_per_1k_output_tokens,
    tts_per_1k_chars: prices.tts_per_1k_characters,
    telephony_per_minute: prices.telephony_per_minute,
  };
}

/**
 * Where this server listens, as its own runtime reaches it: the listening socket's address (a
 * wildcard address means this machine's loopback). Not PUBLIC_BASE_URL: that may be a proxy the
 * server cannot reach from inside, and a test's port 0 is known only after listening.
 */
export function listeningBaseUrl(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo | string | null;
  if (!address || typeof address === 'string') throw new Error('the API server does not listen on a TCP port: the in-process runtime cannot reach it');
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Mounts the runtime's stream routes unless RUNTIME=off. They take no API credential: the call token travels in the stream. */
export async function registerVoiceRuntime(app: FastifyInstance, services: Services): Promise<void> {
  if (services.config.runtime.mode !== 'in-process') {
    app.decorate('runtimeCalls', null);
    return;
  }
  const calls = new RuntimeCalls();
  app.decorate('runtimeCalls', calls);
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'public' };
    });
    await scope.register(runtimeRoutes, {
      apiBaseUrl: () => listeningBaseUrl(app),
      prices: runtimePrices(services.config.runtime.prices),
      logger: services.log,
      registry: services.metrics.registry,
      calls,
    });
  });
}
