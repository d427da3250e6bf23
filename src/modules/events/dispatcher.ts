import type { Logger } from '../../core/logger.ts';
import type { Db } from '../../db/database.ts';
import type { WebhookDeliverer } from './delivery.ts';
import { claimDueDeliveries, type ClaimedDelivery } from './repository.ts';

/** Per worker process: attempts in flight at once (a slow receiver holds one slot for up to 15 s). */
export const WEBHOOK_ATTEMPTS_IN_FLIGHT = 8;
/** An idle dispatcher's poll: the usual delay from a change's commit to its first attempt. */
export const WEBHOOK_POLL_MS = 250;
/** A claim outlasts the attempt's request timeout by this much; then a dead worker's claim lapses. */
export const WEBHOOK_LEASE_MARGIN_MS = 5_000;

export interface DispatcherDeps {
  db: Db;
  deliverer: Pick<WebhookDeliverer, 'attempt'>;
  log: Logger;
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** How long a claim holds a delivery: longer than an attempt can take (its request timeout and a margin). */
  leaseMs: number;
  /** How often an idle dispatcher looks for due deliveries. */
  pollMs: number;
  now?: () => Date;
}

/**
 * Sends the due webhook deliveries. The outbox writes a delivery row with the change that caused its
 * event, and a failed attempt moves the row's `next_attempt_at`; each worker process runs one
 * dispatcher that claims due rows (SKIP LOCKED, for a lease) and makes their attempts. A backlog is
 * claimed again as soon as a slot frees up; otherwise the dispatcher polls. A worker killed
 * mid-attempt loses only its leases: the rows are due again when they lapse, and the attempt is
 * made again under the same event id (the receiver may see it twice, never under two ids).
 */
export class WebhookDispatcher {
  readonly #deps: DispatcherDeps;
  readonly #now: () => Date;
  readonly #inFlight = new Set<Promise<void>>();
  #running = false;
  #claiming = false;
  #backlog = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#wake(0);
  }

  /** Stops claiming and waits for the attempts in flight (their results are recorded). */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    await Promise.allSettled([...this.#inFlight]);
  }

  #wake(delayMs: number): void {
    if (!this.#running) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#claim(), delayMs);
    this.#timer.unref();
  }

  async #claim(): Promise<void> {
    if (!this.#running || this.#claiming) return;
    this.#claiming = true;
    const free = this.#deps.concurrency - this.#inFlight.size;
    try {
      if (free > 0) {
        const now = this.#now();
        const claimed = await claimDueDeliveries(this.#deps.db, now, free, new Date(now.getTime() + this.#deps.leaseMs));
        this.#backlog = claimed.length === free;
        for (const delivery of claimed) this.#attempt(delivery);
      }
    } catch (err) {
      // The database is away (a restart): the next poll tries again.
      this.#deps.log.warn({ err }, 'webhook dispatcher could not claim deliveries');
    } finally {
      this.#claiming = false;
    }
    this.#wake(this.#deps.pollMs);
  }

  #attempt(delivery: ClaimedDelivery): void {
    const attempt = this.#deps.deliverer.attempt(delivery.clientId, delivery.id, { attempt: delivery.attemptCount + 1 })
      .then(() => undefined, (err: unknown) => {
        // Not recorded: the lease lapses and the attempt is made again.
        this.#deps.log.error({ err, delivery_id: delivery.id }, 'webhook delivery attempt failed to run');
      })
      .finally(() => {
        this.#inFlight.delete(attempt);
        if (this.#backlog) this.#wake(0);
      });
    this.#inFlight.add(attempt);
  }
}
