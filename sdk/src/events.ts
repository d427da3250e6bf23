import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { Resource, type BodyOf, type QueryOf, type Schemas } from './resources.ts';
import { paginate, type Page } from './pagination.ts';
import { unwrap } from './transport.ts';

type ListQuery<Q> = Partial<Omit<Q, 'cursor'>>;
const listing = <T>(fetch: (cursor: string | undefined) => Promise<unknown>) => paginate<T>((cursor) => fetch(cursor) as Promise<Page<T>>);

export { WebhookVerificationError };

export class Events extends Resource {
  /** The organization's events of the last 30 days, newest first; `type` filters (several allowed). */
  list(query: ListQuery<QueryOf<'listEvents'>> = {}) { return listing<Schemas['Event']>((cursor) => unwrap(this.api.GET('/api/events', { params: { query: { ...query, cursor } as never } }))); }
  async get(eventId: string) { return (await unwrap(this.api.GET('/api/events/{event_id}', { params: { path: { event_id: eventId } } }))).data; }
}

export class Webhooks extends Resource {
  /** The signing secret is in the answer (`secret`), and only there. */
  async create(body: BodyOf<'createWebhook'>) { return (await unwrap(this.api.POST('/api/webhooks', { body }))).data; }
  list(query: ListQuery<QueryOf<'listWebhooks'>> = {}) { return listing<Schemas['Webhook']>((cursor) => unwrap(this.api.GET('/api/webhooks', { params: { query: { ...query, cursor } as never } }))); }
  async get(id: string) { return (await unwrap(this.api.GET('/api/webhooks/{webhook_id}', { params: { path: { webhook_id: id } } }))).data; }
  async update(id: string, body: BodyOf<'updateWebhook'>) { return (await unwrap(this.api.PATCH('/api/webhooks/{webhook_id}', { params: { path: { webhook_id: id } }, body }))).data; }
  async delete(id: string) { return (await unwrap(this.api.DELETE('/api/webhooks/{webhook_id}', { params: { path: { webhook_id: id } } }))).data; }
  /** A new secret; the old one keeps signing beside it for 24 hours. */
  async rotateSecret(id: string) { return (await unwrap(this.api.POST('/api/webhooks/{webhook_id}/rotate-secret', { params: { path: { webhook_id: id } } }))).data; }
  /** Sends a webhook.test event now; answers its delivery with the attempt. */
  async test(id: string) { return (await unwrap(this.api.POST('/api/webhooks/{webhook_id}/test', { params: { path: { webhook_id: id } } }))).data; }
  deliveries(id: string, query: ListQuery<QueryOf<'listWebhookDeliveries'>> = {}) {
    return listing<Schemas['Delivery']>((cursor) => unwrap(this.api.GET('/api/webhooks/{webhook_id}/deliveries', { params: { path: { webhook_id: id }, query: { ...query, cursor } as never } })));
  }
  /** Sends the delivery's event again now, under the same webhook-id. */
  async retry(id: string, deliveryId: string) {
    return (await unwrap(this.api.POST('/api/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', { params: { path: { webhook_id: id, delivery_id: deliveryId } } }))).data;
  }

  /**
   * For a receiver: checks a request's Standard Webhooks signature and timestamp (5 minutes) against
   * the endpoint's secret and returns the event; throws WebhookVerificationError otherwise. `body` is
   * the raw body as received, `headers` its headers.
   */
  static verify(secret: string, body: string | Buffer, headers: Record<string, string | string[] | undefined>): Schemas['Event'] {
    const flat = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v ?? '']));
    return new Webhook(secret).verify(body, flat) as Schemas['Event'];
  }

  /** The same as `Webhooks.verify`, from a client. */
  verify(secret: string, body: string | Buffer, headers: Record<string, string | string[] | undefined>): Schemas['Event'] {
    return Webhooks.verify(secret, body, headers);
  }
}
