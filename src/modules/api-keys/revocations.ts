import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import type { Executor } from '../../db/database.ts';
import type { Logger } from '../../core/logger.ts';
import type { CacheTrust, CredentialCache } from './credential-cache.ts';
import { announceRevocation, forgetListener, heartbeat, listenersBehind, listenForRevocations, recordSeen } from './revocation-queries.ts';

/**
 * How a revocation reaches every process that caches key lookups, so that "revocation takes effect
 * on the very next request" (decisions.md §2) holds with the cache:
 * - `announce` runs in the revoking transaction: it numbers the revocation and notifies at commit;
 * - `settle` runs after the commit and returns once every live process has cleared its cache.
 */
export interface Revocations extends CacheTrust {
  announce(within: Executor): Promise<number>;
  settle(seq: number): Promise<void>;
  /** Begins listening (idempotent); until it listens, nothing cached is trusted. */
  start(): void;
  stop(): Promise<void>;
}

/**
 * The embedded database: exactly one process serves HTTP (the data directory's owner), so clearing
 * its own cache after the commit is the whole propagation.
 */
export class LocalRevocations implements Revocations {
  readonly #cache: () => CredentialCache;
  constructor(deps: { cache: () => CredentialCache }) {
    this.#cache = deps.cache;
  }
  trusted(): boolean {
    return true;
  }
  async announce(): Promise<number> {
    return 0;
  }
  async settle(): Promise<void> {
    this.#cache().clear();
  }
  start(): void {}
  async stop(): Promise<void> {}
}

const HEARTBEAT_MS = 2_000;
/** A process trusts its cache only this long after its listener last proved alive... */
const TRUST_MS = 6_000;
/** ...and the revoker waits for every listener that proved alive within this window (longer, so a listener still trusting is always waited for). */
const LIVE_SECONDS = 10;
const SETTLE_POLL_MS = 5;

/**
 * Several server processes on one PostgreSQL. Each keeps a LISTEN connection and a row in
 * `credential_listeners`, refreshed every 2 s over that same connection. A revocation's NOTIFY
 * makes every listener clear its cache and record the revocation's number; the revoking request
 * answers only once every listener alive in the last 10 s has recorded it. A process whose listener
 * has not proved alive for 6 s stops trusting its cache, and one silent for 10 s is no longer waited
 * for: a stalled process never serves a revoked key from memory.
 */
export class SharedRevocations implements Revocations {
  readonly #connection: pg.ClientConfig;
  readonly #db: Executor;
  readonly #log: Logger;
  readonly #cache: () => CredentialCache;
  readonly #id = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  #client: pg.Client | undefined;
  #lastAliveAt = -Infinity;
  #started = false;
  #stopped = false;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(deps: { connection: pg.ClientConfig; db: Executor; log: Logger; cache: () => CredentialCache }) {
    this.#connection = deps.connection;
    this.#db = deps.db;
    this.#log = deps.log;
    this.#cache = deps.cache;
  }

  trusted(): boolean {
    return this.#client !== undefined && performance.now() - this.#lastAliveAt < TRUST_MS;
  }

  announce(within: Executor): Promise<number> {
    return announceRevocation(within);
  }

  async settle(seq: number): Promise<void> {
    this.#cache().clear();
    const deadline = performance.now() + (LIVE_SECONDS + 2) * 1000;
    while (performance.now() < deadline) {
      if ((await listenersBehind(this.#db, seq, LIVE_SECONDS)) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
    }
    this.#log.warn({ seq }, 'a revocation was not acknowledged by every live process in time');
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#heartbeat);
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    await forgetListener(client, this.#id).catch(() => {});
    await client.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    const client = new pg.Client(this.#connection);
    try {
      await client.connect();
      client.on('notification', (message) => void this.#apply(client, Number(message.payload)));
      client.on('error', (err) => this.#lost(client, err));
      client.on('end', () => this.#lost(client, new Error('listener connection ended')));
      await listenForRevocations(client, this.#id);
      if (this.#stopped) return void (await client.end());
      this.#cache().clear();
      this.#client = client;
      this.#lastAliveAt = performance.now();
      this.#heartbeat = setInterval(() => void this.#beat(client), HEARTBEAT_MS).unref();
    } catch (err) {
      await client.end().catch(() => {});
      this.#retry(err);
    }
  }

  async #apply(client: pg.Client, seq: number): Promise<void> {
    this.#cache().clear();
    try {
      await recordSeen(client, this.#id, seq);
      this.#lastAliveAt = performance.now();
    } catch (err) {
      this.#lost(client, err);
    }
  }

  async #beat(client: pg.Client): Promise<void> {
    try {
      if (!(await heartbeat(client, this.#id))) throw new Error('the listener row is gone');
      this.#lastAliveAt = performance.now();
    } catch (err) {
      this.#lost(client, err);
    }
  }

  #lost(client: pg.Client, err: unknown): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    clearInterval(this.#heartbeat);
    this.#cache().clear();
    client.end().catch(() => {});
    this.#retry(err);
  }

  #retry(err: unknown): void {
    if (this.#stopped) return;
    this.#log.warn({ err }, 'credential cache listener unavailable: keys are looked up in the database until it reconnects');
    setTimeout(() => void this.#connect(), 1_000).unref();
  }
}
