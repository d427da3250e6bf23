import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../context.ts';
import { Errors } from '../errors.ts';

/** Who a key belongs to: keys of different organizations or credentials never meet. */
export interface IdempotencyScope {
  orgId: string;
  credentialId: string;
  key: string;
}

export interface KeptResponse {
  status: number;
  contentType: string | null;
  body: string;
}

/** The outcome of claiming a key for a request with this fingerprint. */
export type IdempotencyClaim =
  | { kind: 'acquired'; lockId: string }
  | { kind: 'replay'; response: KeptResponse }
  | { kind: 'reused' }
  | { kind: 'in_use' };

/** Where keys live (the idempotency module implements it over PostgreSQL). */
export interface IdempotencyStore {
  claim(scope: IdempotencyScope, fingerprint: string): Promise<IdempotencyClaim>;
  /** Keeps the response of the request that holds `lockId` (no-op if it no longer holds it). */
  complete(scope: IdempotencyScope, lockId: string, response: KeptResponse): Promise<void>;
  /** Frees the key, so the request may be tried again (a 5xx, a response that cannot be kept). */
  release(scope: IdempotencyScope, lockId: string): Promise<void>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `wait`: a request arriving while the first with its key still runs waits for it (up to
     * WAIT_MS) and gets its response, instead of 409 `idempotency_key_in_use` (the credit purchase,
     * whose contract returns one checkout session to concurrent requests).
     */
    idempotency?: 'wait';
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** 1-255 printable ASCII characters (contract, extensions.md §6). */
const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;
const WAIT_MS = 15_000;
const WAIT_POLL_MS = 25;

const HEADER_SCHEMA = {
  type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$',
  description: 'Makes the write safe to retry: the same key with the same request returns the kept response (Idempotent-Replayed: true) for 24 hours',
};

interface Held {
  scope: IdempotencyScope;
  lockId: string;
  settled: boolean;
}

const held = new WeakMap<FastifyRequest, Held>();

function credentialOf(ctx: RequestContext): string {
  return ctx.actor.type === 'api_key' ? ctx.actor.keyId : ctx.actor.userId;
}

/**
 * What makes two requests "the same": method, path with query, and body. A parsed body is hashed
 * as its JSON. A streamed body is neither held in memory nor read twice: a raw upload (a recording
 * PUT) stands in by its media type and declared length; a multipart form (a document upload) by its
 * media type alone, since its length depends on the boundary, which clients draw anew per attempt.
 */
function fingerprint(request: FastifyRequest): string {
  const hash = createHash('sha256').update(`${request.method}\n${request.url}\n`);
  const body = request.body as unknown;
  const contentType = String(request.headers['content-type'] ?? '');
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType.startsWith('multipart/')) {
    hash.update(`multipart ${mediaType}`);
  } else if (body !== null && typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function') {
    hash.update(`stream ${mediaType} ${request.headers['content-length'] ?? 'chunked'}`);
  } else if (Buffer.isBuffer(body)) {
    hash.update('bytes\n').update(body);
  } else {
    hash.update(`json\n${body === undefined ? '' : JSON.stringify(body)}`);
  }
  return hash.digest('hex');
}

function replay(reply: FastifyReply, response: KeptResponse): FastifyReply {
  reply.code(response.status).header('idempotent-replayed', 'true');
  if (response.contentType) reply.header('content-type', response.contentType);
  return reply.send(response.body);
}

async function claim(store: IdempotencyStore, scope: IdempotencyScope, print: string, wait: boolean): Promise<IdempotencyClaim> {
  const deadline = performance.now() + WAIT_MS;
  for (;;) {
    const result = await store.claim(scope, print);
    if (result.kind !== 'in_use' || !wait || performance.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}

/**
 * One plugin for every write of an organization-scoped route (POST, PUT, PATCH, DELETE) that carries
 * `Idempotency-Key`: the first request runs and its response (any status below 500) is kept; the
 * same request again gets it back with `Idempotent-Replayed: true` and runs nothing; another request
 * with the key is 409 `idempotency_key_reused`; one arriving while the first runs is 409
 * `idempotency_key_in_use`. A 5xx frees the key. The key is claimed after authentication and body
 * parsing, before validation, so a refused body is kept like any other answer.
 *
 * The kept response is written before it is sent: a client that saw an answer finds it on retry. The
 * operation's own transaction and the kept response are not one transaction (routes own their
 * transactions), so a process that dies between the two leaves the key `running`; it is taken over
 * after the store's lease.
 */
export function registerIdempotency(app: FastifyInstance, store: IdempotencyStore): void {
  // Every write documents (and validates) the header.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.config?.auth === 'public' || route.config?.auth === 'principal' || !methods.some((m) => WRITES.has(m))) return;
    const headers = (route.schema?.headers ?? { type: 'object', properties: {} }) as { properties?: Record<string, unknown> };
    route.schema = { ...route.schema, headers: { ...headers, properties: { ...headers.properties, 'idempotency-key': HEADER_SCHEMA } } };
  });

  app.addHook('preValidation', async (request, reply) => {
    const given = request.headers['idempotency-key'];
    if (given === undefined || !WRITES.has(request.method) || !request.ctx) return;
    const key = Array.isArray(given) ? given[0]! : given;
    if (!KEY_PATTERN.test(key)) {
      throw Errors.validation('Idempotency-Key must be 1-255 printable ASCII characters', [
        { path: 'headers.idempotency-key', message: 'must be 1-255 printable ASCII characters' },
      ]);
    }
    const scope = { orgId: request.ctx.orgId, credentialId: credentialOf(request.ctx), key };
    const result = await claim(store, scope, fingerprint(request), request.routeOptions.config?.idempotency === 'wait');
    switch (result.kind) {
      case 'acquired':
        held.set(request, { scope, lockId: result.lockId, settled: false });
        return;
      case 'replay':
        return replay(reply, result.response);
      case 'reused':
        throw Errors.conflict('idempotency_key_reused', 'This Idempotency-Key was used with a different request');
      case 'in_use':
        throw Errors.conflict('idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry later');
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claimHeld = held.get(request);
    if (!claimHeld || claimHeld.settled) return payload;
    claimHeld.settled = true;
    const contentType = reply.getHeader('content-type');
    // Text is kept; a stream or binary answer is not (no write here answers one) and frees the key.
    const keepable = typeof payload === 'string' || (Buffer.isBuffer(payload) && /json|text/i.test(String(contentType ?? '')));
    try {
      if (reply.statusCode >= 500 || !keepable) {
        await store.release(claimHeld.scope, claimHeld.lockId);
      } else {
        await store.complete(claimHeld.scope, claimHeld.lockId, {
          status: reply.statusCode,
          contentType: contentType === undefined ? null : String(contentType),
          body: Buffer.isBuffer(payload) ? payload.toString('utf8') : payload,
        });
      }
    } catch (err) {
      request.log.error({ err }, 'the idempotency key could not be settled; it is freed after its lease');
    }
    return payload;
  });

  // A response that never went through onSend. Not on abort: the handler may still be running then.
  app.addHook('onResponse', async (request) => {
    const claimHeld = held.get(request);
    if (!claimHeld || claimHeld.settled) return;
    claimHeld.settled = true;
    await store.release(claimHeld.scope, claimHeld.lockId).catch((err: unknown) => request.log.warn({ err }, 'idempotency key release failed'));
  });
}
