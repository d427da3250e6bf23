import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import {
  CreatedWebhook, CreateWebhookBody, Delivery, DeliveryIdParams, Event, EventIdParams, ListDeliveriesQuery, ListEventsQuery,
  ListWebhooksQuery, UpdateWebhookBody, Webhook, WebhookIdParams, WebhookSecret,
} from './schemas.ts';
import type { EventService } from './service.ts';
import type { WebhookService } from './webhook-service.ts';

const eventTags = ['Events'];
const tags = ['Webhooks'];

export function eventRoutes(events: EventService, webhooks: WebhookService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/events', {
      config: { permission: 'events:read' },
      schema: { operationId: 'listEvents', tags: eventTags,
        summary: 'List the organization\'s events of the last 30 days, newest first (`type` repeatable)',
        headers: OrganizationHeader, querystring: ListEventsQuery,
        response: { 200: listEnvelope(Event), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await events.list(req.ctx, req.query)));

    app.get('/api/events/:event_id', {
      config: { permission: 'events:read' },
      schema: { operationId: 'getEvent', tags: eventTags, summary: 'Get an event',
        headers: OrganizationHeader, params: EventIdParams,
        response: { 200: envelope(Event), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await events.get(req.ctx, req.params.event_id) }));

    app.post('/api/webhooks', {
      config: { permission: 'webhooks:write', idempotency: 'in-transaction' },
      schema: { operationId: 'createWebhook', tags,
        summary: 'Register a webhook endpoint (its signing secret is returned only here)',
        headers: OrganizationHeader, body: CreateWebhookBody,
        response: { 200: envelope(CreatedWebhook), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, message: 'Webhook endpoint created', data: await webhooks.create(req.ctx, req.body) }));

    app.get('/api/webhooks', {
      config: { permission: 'webhooks:read' },
      schema: { operationId: 'listWebhooks', tags, summary: 'List webhook endpoints, newest first',
        headers: OrganizationHeader, querystring: ListWebhooksQuery,
        response: { 200: listEnvelope(Webhook), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await webhooks.list(req.ctx, req.query)));

    app.get('/api/webhooks/:webhook_id', {
      config: { permission: 'webhooks:read' },
      schema: { operationId: 'getWebhook', tags, summary: 'Get a webhook endpoint',
        headers: OrganizationHeader, params: WebhookIdParams,
        response: { 200: envelope(Webhook), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await webhooks.get(req.ctx, req.params.webhook_id) }));

    app.patch('/api/webhooks/:webhook_id', {
      config: { permission: 'webhooks:write', idempotency: 'in-transaction' },
      schema: { operationId: 'updateWebhook', tags,
        summary: 'Change a webhook endpoint (any field; `enabled` true re-enables a disabled one)',
        headers: OrganizationHeader, params: WebhookIdParams, body: UpdateWebhookBody,
        response: { 200: envelope(Webhook), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Webhook endpoint updated', data: await webhooks.update(req.ctx, req.params.webhook_id, req.body) }));

    app.delete('/api/webhooks/:webhook_id', {
      config: { permission: 'webhooks:write', idempotency: 'in-transaction' },
      schema: { operationId: 'deleteWebhook', tags, summary: 'Delete a webhook endpoint and its delivery log',
        headers: OrganizationHeader, params: WebhookIdParams,
        response: { 200: envelope(Webhook), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Webhook endpoint deleted', data: await webhooks.delete(req.ctx, req.params.webhook_id) }));

    app.post('/api/webhooks/:webhook_id/rotate-secret', {
      config: { permission: 'webhooks:write' },
      schema: { operationId: 'rotateWebhookSecret', tags,
        summary: 'Replace the signing secret; the old one also signs for 24 hours',
        headers: OrganizationHeader, params: WebhookIdParams,
        response: { 200: envelope(WebhookSecret), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Secret rotated', data: await webhooks.rotateSecret(req.ctx, req.params.webhook_id) }));

    app.post('/api/webhooks/:webhook_id/test', {
      config: { permission: 'webhooks:write' },
      schema: { operationId: 'testWebhook', tags,
        summary: 'Send a webhook.test event to the endpoint now and return its delivery',
        headers: OrganizationHeader, params: WebhookIdParams,
        response: { 200: envelope(Delivery), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await webhooks.test(req.ctx, req.params.webhook_id) }));

    app.get('/api/webhooks/:webhook_id/deliveries', {
      config: { permission: 'webhooks:read' },
      schema: { operationId: 'listWebhookDeliveries', tags,
        summary: 'The delivery log: every delivery with its attempts, newest first',
        headers: OrganizationHeader, params: WebhookIdParams, querystring: ListDeliveriesQuery,
        response: { 200: listEnvelope(Delivery), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => pageBody(await webhooks.deliveries(req.ctx, req.params.webhook_id, req.query)));

    app.post('/api/webhooks/:webhook_id/deliveries/:delivery_id/retry', {
      config: { permission: 'webhooks:write' },
      schema: { operationId: 'retryWebhookDelivery', tags,
        summary: 'Send a delivery\'s event again now (same webhook-id, new timestamp and signature)',
        headers: OrganizationHeader, params: DeliveryIdParams,
        response: { 200: envelope(Delivery), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await webhooks.retry(req.ctx, req.params.webhook_id, req.params.delivery_id) }));
  };
}
