import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../context.ts';
import { Errors } from '../errors.ts';
import { CommitHolder, runHoldingCommits } from '../../db/held-commit.ts';
import type { PendingWrites } from '../../db/pending-write.ts';

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

/** A key as another request left it: its request's fingerprint, and its response once kept. */
export interface KeptKey {
  fingerprint: string;
  response: KeptResponse | undefined;
}

/** What a request with `fingerprint` gets from a key another request holds. */
export function answerOf(key: KeptKey, fingerprint: string): Exclude<IdempotencyClaim, { kind: 'acquired' }> {
  if (key.fingerprint !== fingerprint) return { kind: 'reused' };
  return key.response ? { kind: 'replay', response: key.response } : { kind: 'in_use' };
}

/** Where keys live (the idempotency module implements it over PostgreSQL). */
export interface IdempotencyStore {
  claim(scope: IdempotencyScope, fingerprint: string): Promise<IdempotencyClaim>;
  /** Keeps the response of the request that holds `lockId` (no-op if it no longer holds it). */
  complete(scope: IdempotencyScope, lockId: string, response: KeptResponse): Promise<void>;
  /** Frees the key, so the request may be tried again (a 5xx, a response that cannot be kept). */
  release(scope: IdempotencyScope, lockId: string): Promise<void>;
  /**
   * Added to the change's pending writes, written with them before its COMMIT: the key is done with
   * `response`, or marked as changed when the response is not known yet. When the request no longer
   * holds the key (a retry took it over), that write throws and the change rolls back.
   */
  seal(unit: PendingWrites, scope: IdempotencyScope, lockId: string, response: KeptResponse | undefined): void;
  /**
   * An `in-transaction` route's key, taken with its response by one write among the change's pending
   * writes; when another request has it, `taken` is called there (and throws: the change rolls back).
   */
  keepIn(unit: PendingWrites, scope: IdempotencyScope, fingerprint: string, lockId: string, response: KeptResponse | undefined, taken: () => never): void;
  /** The same key taken on its own, for a request that had no transaction; false when another request has it. */
  keep(scope: IdempotencyScope, fingerprint: string, lockId: string, response: KeptResponse | undefined): Promise<boolean>;
  existing(scope: IdempotencyScope): Promise<KeptKey | undefined>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `in-transaction`: for a route whose whole effect is one database transaction (nothing outside
     * it that a concurrent retry could repeat: no carrier, payment, mail or file): the key is taken
     * at that transaction's COMMIT, with its response, in one statement, instead of claimed by a
     * statement and commit of its own before the handler runs. A concurrent or later retry runs the
     * handler too, but cannot commit: its change rolls back and it answers what the first kept.
     *
     * `wait`: a request arriving while the first with its key still runs waits for it (up to
     * WAIT_MS) and gets its response, instead of 409 `idempotency_key_in_use` (the credit purchase,
     * whose contract returns one checkout session to concurrent requests).
     */
    idempotency?: 'wait' | 'in-transaction';
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** 1-255 printable ASCII characters (contract, extensions.md §6). */
const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;
const WAIT_MS = 15_000;
const WAIT_POLL_MS = 25;
/**
 * How long the COMMIT of a keyed request's transaction may wait for its response (held-commit.ts).
 * Serializing a response takes well under a millisecond; a request that does more after its
 * transaction (a network call) commits without it and keeps it after the fact.
 */
const MAX_HOLD_MS = 500;

const HEADER_SCHEMA = {
  type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$',
  description: 'Makes the write safe to retry: the same key with the same request returns the kept response (Idempotent-Replayed: true) for 24 hours',
};

interface Held {
  scope: IdempotencyScope;
  lockId: string;
  settled: boolean;
  /** Holds the COMMIT of the request's transaction until its response can be sealed in it. */
  commits: CommitHolder<KeptResponse>;
  /** An `in-transaction` route's: the request's fingerprint, the key being taken only at its commit. */
  takenAtCommit?: string;
}

/** An `in-transaction` key another request took first: this request's change rolls back. */
class KeyTakenError extends Error {}

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

/**
 * Answers what another request with the key left: its kept response (replayed), or 409. Returns the
 * body to send (a hook's payload); throws the 409s.
 */
async function answer(reply: FastifyReply, claim: Exclude<IdempotencyClaim, { kind: 'acquired' }>): Promise<string> {
  switch (claim.kind) {
    case 'replay':
      reply.code(claim.response.status).header('idempotent-replayed', 'true');
      if (claim.response.contentType) reply.header('content-type', claim.response.contentType);
      else reply.removeHeader('content-type');
      return claim.response.body;
    case 'reused':
      throw Errors.conflict('idempotency_key_reused', 'This Idempotency-Key was used with a different request');
    case 'in_use':
      throw Errors.conflict('idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry later');
  }
}

/** The answer an `in-transaction` request gets once another took its key (gone again: still in use, retry). */
async function answerOfExisting(store: IdempotencyStore, scope: IdempotencyScope, print: string): Promise<Exclude<IdempotencyClaim, { kind: 'acquired' }>> {
  const key = await store.existing(scope);
  return key ? answerOf(key, print) : { kind: 'in_use' };
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
 * The kept response is written in the change's own transaction: the request's transactions run inside
 * a commit holder (db/held-commit.ts), which hands each one's result to the route at once but holds its
 * COMMIT until the response is known here, then seals it in. A process that dies before that COMMIT
 * leaves neither the change nor a completed key (the key, still `running`, is taken over once its lease
 * lapses, and the retry runs); one that dies after it leaves both (the retry replays). A response with
 * no transaction to ride (a read, a refusal) is kept before it is sent.
 */
export function registerIdempotency(app: FastifyInstance, store: IdempotencyStore): void {
  // Every write documents (and validates) the header.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.config?.auth === 'public' || route.config?.auth === 'principal' || !methods.some((m) => WRITES.has(m))) return;
    const headers = (route.schema?.headers ?? { type: 'object', properties: {} }) as { properties?: Record<string, unknown> };
    route.schema = { ...route.schema, headers: { ...headers, properties: { ...headers.properties, 'idempotency-key': HEADER_SCHEMA } } };
  });

  // Callback style: the rest of the request (its handler and its transactions) runs inside the key's
  // commit holder (an async hook's continuation would not carry it).
  app.addHook('preValidation', (request, reply, done) => {
    const given = request.headers['idempotency-key'];
    if (given === undefined || !WRITES.has(request.method) || !request.ctx) return done();
    const key = Array.isArray(given) ? given[0]! : given;
    if (!KEY_PATTERN.test(key)) {
      return done(Errors.validation('Idempotency-Key must be 1-255 printable ASCII characters', [
        { path: 'headers.idempotency-key', message: 'must be 1-255 printable ASCII characters' },
      ]));
    }
    const scope = { orgId: request.ctx.orgId, credentialId: credentialOf(request.ctx), key };
    const print = fingerprint(request);
    const mode = request.routeOptions.config?.idempotency;
    if (mode === 'in-transaction') {
      const lockId = randomUUID();
      const commits = new CommitHolder<KeptResponse>((unit, response) => store.keepIn(unit, scope, print, lockId, response, () => {
        throw new KeyTakenError();
      }), MAX_HOLD_MS);
      held.set(request, { scope, lockId, settled: false, commits, takenAtCommit: print });
      return runHoldingCommits(commits as CommitHolder<unknown>, () => done());
    }
    claim(store, scope, print, mode === 'wait').then((result) => {
      if (result.kind !== 'acquired') return void answer(reply, result).then((body) => void reply.send(body), done);
      const lockId = result.lockId;
      // A claimed route may act outside the database after its transaction (a checkout, a dial, a
      // file): its change's own writes go before the hold, so a failing one fails it before it acts.
      const commits = new CommitHolder<KeptResponse>((unit, response) => store.seal(unit, scope, lockId, response), MAX_HOLD_MS, { flushFirst: true });
      held.set(request, { scope, lockId, settled: false, commits });
      return runHoldingCommits(commits as CommitHolder<unknown>, () => done());
    }, (err: unknown) => done(err as Error));
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claimHeld = held.get(request);
    if (!claimHeld || claimHeld.settled) return payload;
    claimHeld.settled = true;
    const contentType = reply.getHeader('content-type');
    // Text is kept; a stream or binary answer is not (no write here answers one) and frees the key.
    const keepable = typeof payload === 'string' || (Buffer.isBuffer(payload) && /json|text/i.test(String(contentType ?? '')));
    const response = reply.statusCode < 500 && keepable ? {
      status: reply.statusCode,
      contentType: contentType === undefined ? null : String(contentType),
      body: Buffer.isBuffer(payload) ? payload.toString('utf8') : payload as string,
    } : undefined;
    const { scope, lockId, takenAtCommit } = claimHeld;
    try {
      // The usual case: the change's transaction is still open, and commits with its response.
      if (await claimHeld.commits.settle(response)) return payload;
    } catch (err) {
      // The change rolled back (its key was taken over, or its COMMIT failed): this answer is not true.
      await store.release(scope, lockId).catch(() => {});
      if (err instanceof KeyTakenError) return answer(reply, await answerOfExisting(store, scope, takenAtCommit!));
      throw err;
    }
    // No transaction (a read, a refusal) or one that could not wait: kept after the fact.
    let taken = true;
    try {
      if (!response) await store.release(scope, lockId);
      else if (takenAtCommit === undefined) await store.complete(scope, lockId, response);
      else taken = await store.keep(scope, takenAtCommit, lockId, response);
    } catch (err) {
      request.log.error({ err }, 'the idempotency key could not be settled; it is freed after its lease');
    }
    return taken ? payload : answer(reply, await answerOfExisting(store, scope, takenAtCommit!));
  });

  // A response that never went through onSend. Not on abort: the handler may still be running then.
  app.addHook('onResponse', async (request) => {
    const claimHeld = held.get(request);
    if (!claimHeld || claimHeld.settled) return;
    claimHeld.settled = true;
    await claimHeld.commits.settle().catch(() => {});
    await store.release(claimHeld.scope, claimHeld.lockId).catch((err: unknown) => request.log.warn({ err }, 'idempotency key release failed'));
  });
}
