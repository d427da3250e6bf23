import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from '../../config.ts';
import type { RequestLimiter } from '../auth/plugin.ts';
import { Errors } from '../errors.ts';

/**
 * The bucket a request counts in: its API key or user once authenticated, else its client address
 * (public routes, and requests whose credential was refused).
 */
function bucketOf(request: FastifyRequest): string {
  const actor = request.principal?.actor;
  if (actor?.type === 'api_key') return `key:${actor.keyId}`;
  if (actor?.type === 'user') return `user:${actor.userId}`;
  return `ip:${request.ip}`;
}

/**
 * Per-minute limits with @fastify/rate-limit's counters: in memory for one process, in Redis when
 * several processes share them. Every answer carries RateLimit-Limit, -Remaining and -Reset; one over
 * the limit is 429 `rate_limited` with Retry-After. A Redis outage lets requests through (logged)
 * rather than refusing all traffic.
 */
export async function createRequestLimiter(app: FastifyInstance, config: RateLimitConfig, redis: Redis | undefined): Promise<RequestLimiter> {
  await app.register(rateLimit, {
    global: false,
    timeWindow: 60_000,
    keyGenerator: bucketOf,
    max: (_request, key) => (key.startsWith('ip:') ? config.publicPerMinute : config.perMinute),
    skipOnError: true,
    ...(redis ? { redis, nameSpace: 'switchboard-rate-limit:' } : {}),
  });
  const count = app.createRateLimit();
  return async (request, reply) => {
    const result = await count(request);
    if (result.isAllowed) return;
    reply.header('ratelimit-limit', result.max).header('ratelimit-remaining', result.remaining).header('ratelimit-reset', result.ttlInSeconds);
    if (result.isExceeded) throw Errors.rateLimited(Math.max(1, result.ttlInSeconds));
  };
}
