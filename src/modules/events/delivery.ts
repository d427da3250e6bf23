import { performance } from 'node:perf_hooks';
import { Webhook as Signer } from 'standardwebhooks';
import { safeRequest } from '../../adapters/http/safe-request.ts';
import { checkHostAddresses, DestinationRefusedError, isInNetworks, type AllowedNetworks } from '../../adapters/http/outbound-addresses.ts';
import { clientOf, type Db } from '../../db/database.ts';
import type { SecretBox } from '../../core/secret-box.ts';
import type { DeliveryOutcome, Metrics } from '../../core/metrics.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { WEBHOOK_DISABLED_EMAIL } from './jobs.ts';
import { DeliveryRepository, EventRepository, WebhookRepository, type DeliveryAttempt, type DeliveryRow, type EndpointRow, type EventRow } from './repository.ts';
import { transaction } from '../../db/unit-of-work.ts';

/** How deliveries are made: the contract's values by default, shorter in tests. */
export interface DeliverySettings {
  /** A 2xx must arrive within this (15 s). */
  timeoutMs: number;
  /** Delays before attempts 2, 3, ... (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 attempts in all). */
  retryDelaysMs: readonly number[];
  /** An endpoint whose deliveries all failed this long is disabled (5 days). */
  disableAfterFailingMs: number;
  allowedNetworks: AllowedNetworks;
}

export const CONTRACT_RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
const RESPONSE_BODY_BYTES = 1024;
const JITTER = 0.1;

/** The delay before attempt `next` (2-based), ±10 % so a burst of failures does not retry in lockstep. */
export function retryDelayMs(delays: readonly number[], next: number, random: () => number = Math.random): number | undefined {
  const base = delays[next - 2];
  if (base === undefined) return undefined;
  return Math.round(base * (1 + JITTER * (2 * random() - 1)));
}

/** The body a receiver gets: the event as `GET /api/events/{id}` shows it. */
export function eventBody(event: EventRow): string {
  return JSON.stringify({ id: event.id, type: event.type, created_at: event.createdAt.toISOString(), organization_id: event.clientId, data: event.data });
}

/**
 * Plain http is for the operator's allowed networks only: every address the name resolves to must
 * be in them (https to a public address needs nothing more; the connection itself checks again).
 */
export async function checkDestination(url: URL, allowed: AllowedNetworks): Promise<void> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DestinationRefusedError('only https (or http to an allowed network) is accepted');
  if (url.username || url.password) throw new DestinationRefusedError('credentials in the URL are not accepted');
  const addresses = await checkHostAddresses(url, allowed, 'refuse');
  if (url.protocol === 'http:' && addresses.some((a) => !isInNetworks(a, allowed))) {
    throw new DestinationRefusedError('plain http is only accepted for the operator\'s allowed networks; use https');
  }
}

interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string | null;
}

export interface DelivererDeps {
  db: Db;
  queue: JobQueue;
  secrets: SecretBox;
  settings: DeliverySettings;
  /** Counts each attempt by what it decided (succeeded, retrying, failed). */
  metrics?: Pick<Metrics, 'webhookAttempt'>;
  now?: () => Date;
  random?: () => number;
}

/**
 * Makes one attempt of a delivery and records it: a 2xx succeeds, `410 Gone` disables the endpoint,
 * anything else schedules the next attempt of the contract's schedule (or fails the delivery after
 * the last) by moving the delivery's `next_attempt_at`. No transaction is open during the request.
 */
export class WebhookDeliverer {
  readonly #deps: DelivererDeps;
  readonly #now: () => Date;
  constructor(deps: DelivererDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
  }

  /**
   * One attempt. `attempt` given (the dispatcher): only if that attempt was not made yet, and not to
   * a disabled endpoint (the delivery then fails). Not given (test, replay): the next attempt, now.
   */
  async attempt(orgId: string, deliveryId: string, options: { attempt?: number } = {}): Promise<DeliveryRow | undefined> {
    const { db } = this.#deps;
    const delivery = await new DeliveryRepository(db).findById(orgId, deliveryId);
    if (!delivery) return undefined;
    const number = options.attempt ?? delivery.attemptCount + 1;
    if (options.attempt !== undefined && (delivery.attemptCount >= number || delivery.status === 'succeeded' || delivery.status === 'failed')) return delivery;
    const [endpoint, event] = await Promise.all([
      new WebhookRepository(db).findById(orgId, delivery.endpointId),
      new EventRepository(db).findById(orgId, delivery.eventId),
    ]);
    if (!endpoint || !event) return delivery;
    if (options.attempt !== undefined && !endpoint.enabled) {
      return new DeliveryRepository(db).update(orgId, deliveryId, { status: 'failed', nextAttemptAt: null, lockedUntil: null });
    }
    const at = this.#now();
    const result = await this.#send(endpoint, event, at);
    const recorded = await this.#record(orgId, delivery.id, number, at, result);
    if (recorded && recorded.attemptCount === number) this.#deps.metrics?.webhookAttempt(recorded.status as DeliveryOutcome);
    return recorded;
  }

  #signatures(endpoint: EndpointRow, eventId: string, at: Date, body: string): string {
    const { secrets } = this.#deps;
    const keys = [secrets.open(endpoint.secretSealed)];
    if (endpoint.previousSecretSealed && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > at) {
      keys.push(secrets.open(endpoint.previousSecretSealed));
    }
    return keys.map((secret) => new Signer(secret).sign(eventId, at, body)).join(' ');
  }

  async #send(endpoint: EndpointRow, event: EventRow, at: Date): Promise<AttemptResult> {
    const body = eventBody(event);
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const url = new URL(endpoint.url);
      await checkDestination(url, this.#deps.settings.allowedNetworks);
      const res = await safeRequest(url.toString(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Switchboard-Webhooks/1',
          'webhook-id': event.id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': this.#signatures(endpoint, event.id, at, body),
        },
        body,
        timeoutMs: this.#deps.settings.timeoutMs,
        maxBodyBytes: RESPONSE_BODY_BYTES,
        maxRedirects: 0,
        allowedNetworks: this.#deps.settings.allowedNetworks,
      });
      const redirect = res.status >= 300 && res.status < 400 ? `redirect to ${res.headers.location ?? '(no location)'} not followed` : null;
      return { statusCode: res.status, error: redirect, durationMs: elapsed(), responseBody: res.body.toString('utf8') };
    } catch (err) {
      const message = err instanceof DestinationRefusedError ? `destination refused: ${err.message}` : `request failed: ${(err as Error).message}`;
      return { statusCode: null, error: message, durationMs: elapsed(), responseBody: null };
    }
  }

  /** Records the attempt on the locked delivery, with what it decides for the delivery and the endpoint. */
  async #record(orgId: string, deliveryId: string, number: number, at: Date, result: AttemptResult): Promise<DeliveryRow | undefined> {
    const { db, queue, settings } = this.#deps;
    return transaction(db, async (tx) => {
      const deliveries = new DeliveryRepository(tx);
      const current = await deliveries.findById(orgId, deliveryId, { forUpdate: true });
      if (!current || current.attemptCount >= number) return current; // recorded by another worker meanwhile
      const endpoints = new WebhookRepository(tx);
      const endpoint = await endpoints.findById(orgId, current.endpointId, { forUpdate: true });
      const entry: DeliveryAttempt = {
        attempt: number, at: at.toISOString(), status_code: result.statusCode, error: result.error,
        duration_ms: result.durationMs, response_body: result.responseBody,
      };
      const attempts = [...current.attempts, entry];
      const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      if (ok) {
        if (endpoint?.failingSince) await endpoints.update(orgId, endpoint.id, { failingSince: null });
        return deliveries.update(orgId, deliveryId, { status: 'succeeded', attempts, attemptCount: number, nextAttemptAt: null });
      }
      if (result.statusCode === 410) {
        if (endpoint) await endpoints.update(orgId, endpoint.id, { enabled: false, disabledReason: 'gone' });
        return deliveries.update(orgId, deliveryId, { status: 'failed', attempts, attemptCount: number, nextAttemptAt: null });
      }
      if (endpoint) {
        const failingSince = endpoint.failingSince ?? at;
        const disable = endpoint.enabled && at.getTime() - failingSince.getTime() >= settings.disableAfterFailingMs;
        await endpoints.update(orgId, endpoint.id, disable ? { failingSince, enabled: false, disabledReason: 'failing' } : { failingSince });
        if (disable) await queue.send(WEBHOOK_DISABLED_EMAIL, { clientId: orgId, webhookId: endpoint.id }, { within: clientOf(tx) });
        if (disable || !endpoint.enabled) {
          return deliveries.update(orgId, deliveryId, { status: 'failed', attempts, attemptCount: number, nextAttemptAt: null });
        }
      }
      const delay = retryDelayMs(settings.retryDelaysMs, number + 1, this.#deps.random);
      if (delay === undefined || !endpoint) {
        return deliveries.update(orgId, deliveryId, { status: 'failed', attempts, attemptCount: number, nextAttemptAt: null });
      }
      // Due again at that time: a dispatcher claims it then.
      return deliveries.update(orgId, deliveryId, {
        status: 'retrying', attempts, attemptCount: number, nextAttemptAt: new Date(at.getTime() + delay), lockedUntil: null,
      });
    });
  }
}
