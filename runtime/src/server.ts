/**
 * The runtime's HTTP side: a Fastify plugin with the two stream routes (mounted in the API server by
 * default, RUNTIME=in-process) and `startRuntimeServer` for `switchboard runtime` on its own, which adds
 * only /api/health and /metrics. Calls are tracked so that SIGTERM can drain: new streams are refused,
 * calls in progress go on for up to RUNTIME_DRAIN_SECONDS.
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import websocket from '@fastify/websocket';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WebSocket } from 'ws';
import { convertAudio } from './audio/convert.ts';
import { CallSession, type Logger, type ProvidersFactory } from './engine/call-session.ts';
import { DEFAULT_PRICES } from './engine/prices.ts';
import type { CallTransport, ConverterFactory, EngineMetrics, Prices, Recorder } from './engine/types.ts';
import { HttpCallPlatform, organizationOfToken } from './platform/http-platform.ts';
import type { CallPlatform } from './platform/call-platform.ts';
import { CarrierTransport } from './transports/carrier.ts';
import { PreviewTransport } from './transports/preview.ts';

/** WebSocket close code for a stream refused while draining (1008: policy violation). */
export const DRAINING_CLOSE_CODE = 1008;

export interface RuntimeOptions {
  /**
   * Where the API is (the runtime is its client). A function is asked at each call's start: mounted in
   * the API server, the address is known only once that server listens (port 0 in tests).
   */
  apiBaseUrl: string | (() => string);
  prices?: Prices;
  /** The vendor adapters; by default `createProviders` of ./providers/index.ts, loaded on first use. */
  providersFactory?: ProvidersFactory;
  /** Audio conversion; by default the audio layer's `convertAudio` (μ-law and the Speex resampler). */
  converterFactory?: ConverterFactory;
  recorderFactory?: () => Recorder;
  /** The API as seen for one call; by default over HTTP with the call's token. */
  platformFactory?: (call: { callSid: string; token: string; organizationId: string }) => CallPlatform;
  logger?: Logger;
  registry?: Registry;
  /** The process's call tracker (shared with the drain); one is made when not given. */
  calls?: RuntimeCalls;
}

/** The calls this process serves, and whether it still takes new ones. */
export class RuntimeCalls {
  readonly #sessions = new Set<CallSession>();
  #draining = false;
  onChange: ((active: number) => void) | null = null;

  get active() { return this.#sessions.size; }
  get draining() { return this.#draining; }

  track(session: CallSession) {
    this.#sessions.add(session);
    this.onChange?.(this.#sessions.size);
    void session.done.finally(() => {
      this.#sessions.delete(session);
      this.onChange?.(this.#sessions.size);
    });
  }

  /** Refuses new streams, waits for the calls in progress up to `seconds`, then ends the rest `error`. */
  async drain(seconds: number): Promise<void> {
    this.#draining = true;
    const deadline = Date.now() + seconds * 1000;
    while (this.#sessions.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    await Promise.all([...this.#sessions].map((session) =>
      session.end('error', { provider: 'runtime', code: 'runtime_shutdown', message: 'the runtime process stopped before the call ended' })));
  }
}

function runtimeMetrics(registry: Registry): EngineMetrics & { active: Gauge } {
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
  const active = existing<Gauge>('switchboard_runtime_active_calls')
    ?? new Gauge({ name: 'switchboard_runtime_active_calls', help: 'Calls this runtime process is serving', registers: [registry] });
  const latency = existing<Histogram>('switchboard_runtime_turn_latency_seconds') ?? new Histogram({
    name: 'switchboard_runtime_turn_latency_seconds',
    help: "Agent turn latency: end of the caller's speech to the first agent audio sent",
    buckets: [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10], registers: [registry],
  });
  const errors = existing<Counter>('switchboard_runtime_provider_errors_total') ?? new Counter({
    name: 'switchboard_runtime_provider_errors_total', help: 'Calls ended by a failing provider', labelNames: ['provider'], registers: [registry],
  });
  return {
    active,
    turnLatency: (ms) => latency.observe(ms / 1000),
    providerError: (provider) => errors.inc({ provider }),
  };
}


async function defaultProviders(): Promise<ProvidersFactory> {
  // Loaded by name at run time: the adapters are their own part of the runtime.
  const specifier = './providers/index.ts';
  const adapters = (await import(specifier)) as { createProviders: ProvidersFactory };
  return adapters.createProviders;
}

export const runtimeRoutes: FastifyPluginAsync<RuntimeOptions> = async (app, options) => {
  const calls = options.calls ?? new RuntimeCalls();
  const metrics = runtimeMetrics(options.registry ?? new Registry());
  calls.onChange = (active) => metrics.active.set(active);
  const converterFactory = options.converterFactory ?? convertAudio;
  let adapters: ProvidersFactory | undefined;
  const platformFor = options.platformFactory
    ?? ((call) => new HttpCallPlatform({ apiBaseUrl: typeof options.apiBaseUrl === 'function' ? options.apiBaseUrl() : options.apiBaseUrl, ...call }));
  const logger = options.logger ?? app.log;

  const serve = (transport: CallTransport, callSid: string, token: string, telephony: boolean) => {
    const organizationId = organizationOfToken(token) ?? '';
    const session = new CallSession({
      platform: platformFor({ callSid, token, organizationId }),
      transport, telephony,
      providersFactory: options.providersFactory
        ?? (async (settings, language) => (adapters ??= await defaultProviders())(settings, language)),
      convert: converterFactory, prices: options.prices ?? DEFAULT_PRICES,
      recorderFactory: options.recorderFactory, metrics, logger,
    });
    calls.track(session);
    void session.run();
  };

  const refuseWhileDraining = (socket: WebSocket) => {
    if (!calls.draining) return false;
    socket.close(DRAINING_CLOSE_CODE, 'draining');
    return true;
  };

  await app.register(websocket);
  app.get('/api/runtime/carrier_a/stream', { websocket: true, schema: { hide: true } }, (socket) => {
    if (refuseWhileDraining(socket)) return;
    const transport = new CarrierTransport(socket);
    transport.started.then((start) => {
      const { call_sid: callSid, token } = start.customParameters;
      if (!callSid || !token) return socket.close(1008, 'call_sid and token parameters are required');
      serve(transport, callSid, token, true);
    }, () => socket.close(1008, 'no start'));
  });

  app.get('/api/runtime/preview', { websocket: true, schema: { hide: true } }, (socket, request) => {
    if (refuseWhileDraining(socket)) return;
    const token = (request.query as { token?: string }).token ?? '';
    const callSid = subjectOfToken(token);
    if (!callSid) return socket.close(1008, 'a call token is required');
    serve(new PreviewTransport(socket), callSid, token, false);
  });
};

/** The call a token is for (its `sub`); the API verifies the token on every request. */
function subjectOfToken(token: string): string | null {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : null;
  } catch {
    return null;
  }
}

export interface RuntimeServerOptions extends RuntimeOptions {
  port: number;
  host?: string;
  /** RUNTIME_DRAIN_SECONDS (default 600). */
  drainSeconds?: number;
  /** Installs the SIGTERM drain (the `switchboard runtime` command does). */
  handleSignals?: boolean;
}

/** `switchboard runtime`: the stream routes, /api/health and /metrics, nothing else. */
export async function startRuntimeServer(options: RuntimeServerOptions): Promise<{ app: FastifyInstance; calls: RuntimeCalls; url: string; stop(): Promise<void> }> {
  const app = Fastify({ logger: options.logger ? false : { level: process.env.LOG_LEVEL ?? 'info' } });
  const registry = options.registry ?? new Registry();
  const calls = options.calls ?? new RuntimeCalls();
  await app.register(runtimeRoutes, { ...options, registry, calls });
  app.get('/api/health', async () => ({ status: 'ok', active_calls: calls.active, draining: calls.draining }));
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
  const url = await app.listen({ port: options.port, host: options.host ?? '0.0.0.0' });
  const stop = async () => {
    await calls.drain(options.drainSeconds ?? 600);
    await app.close();
  };
  if (options.handleSignals) process.once('SIGTERM', () => void stop().then(() => process.exit(0)));
  return { app, calls, url, stop };
}
