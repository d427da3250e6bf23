import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The outcome of one webhook delivery attempt, as the delivery log records it. */
export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed';

/** A reading taken when Prometheus scrapes: one value per label set. */
export type Reading<L extends string> = Array<{ labels: Record<L, string>; value: number }>;

/**
 * The process's Prometheus metrics (prom-client), in a registry of its own rather than the library's
 * global one, so several apps in one test process never share or double-register a metric.
 * Counters and histograms are fed as things happen; gauges read their source at scrape time.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly #deliveries: Counter<'outcome'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.#httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request to response, by route pattern and status code',
      labelNames: ['method', 'route', 'status_code'],
      // From a cached GET (about a millisecond) to an upload or an export link (seconds).
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.#deliveries = new Counter({
      name: 'switchboard_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts made by this process, by what the attempt decided for the delivery',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
  }

  /** `route` is the pattern (`/api/calls/:call_sid`), never the path: ids would make a series per record. */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.#httpDuration.observe({ method, route, status_code: String(statusCode) }, seconds);
  }

  webhookAttempt(outcome: DeliveryOutcome): void {
    this.#deliveries.inc({ outcome });
  }

  /** A gauge read at scrape time; a reading that fails leaves the gauge empty for that scrape. */
  gauge<L extends string>(name: string, help: string, labelNames: L[], read: () => Promise<Reading<L>> | Reading<L>): void {
    new Gauge<L>({
      name, help, labelNames, registers: [this.registry],
      async collect() {
        this.reset();
        const readings = await Promise.resolve().then(read).catch(() => [] as Reading<L>);
        for (const { labels, value } of readings) this.set(labels as never, value);
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
