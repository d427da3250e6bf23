import { Type } from 'typebox';
import { Nullable, NullableTimestamp, PathId, Timestamp } from '../../core/schemas.ts';
import { EVENT_TYPES } from '../../platform/event-types.ts';

export const EventTypeSchema = Type.Enum([...EVENT_TYPES], { description: 'An event type of the catalogue' });

export const Event = Type.Object({
  id: Type.String({ pattern: '^evt_[A-Za-z0-9]{20}$' }),
  type: EventTypeSchema,
  created_at: Timestamp,
  organization_id: Type.String(),
  data: Type.Object({}, { additionalProperties: true, description: 'The resource as the API returns it' }),
}, {
  title: 'Event',
  examples: [{
    id: 'evt_2xR9fK3mQ7pL1vN8bT4c', type: 'recording.ready', created_at: '2026-05-04T12:00:00.000Z', organization_id: 'org_9f51914aa15c',
    data: { call_sid: 'call_8hQ2mN5pR7tV9xZ1bC3d', content_type: 'audio/wav', bytes: 240044 },
  }],
});

export const ListEventsQuery = Type.Object({
  type: Type.Optional(Type.Array(EventTypeSchema, { maxItems: 50, description: 'Repeatable: only events of these types' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page' })),
});

export const EventIdParams = Type.Object({ event_id: PathId('evt_ + 20 letters and digits') });

export const DeliveryStatusSchema = Type.Enum(['pending', 'retrying', 'succeeded', 'failed']);

export const DeliveryAttempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  at: Timestamp,
  status_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  duration_ms: Type.Integer({ minimum: 0 }),
  response_body: Nullable(Type.String({ description: 'The first 1 KB of the answer' })),
}, { title: 'DeliveryAttempt' });

export const Delivery = Type.Object({
  delivery_id: Type.String({ pattern: '^dlv_[A-Za-z0-9]{20}$' }),
  webhook_id: Type.String(),
  event_id: Type.String(),
  event_type: EventTypeSchema,
  status: DeliveryStatusSchema,
  attempts: Type.Array(DeliveryAttempt),
  next_attempt_at: NullableTimestamp,
  created_at: Timestamp,
}, {
  title: 'Delivery',
  examples: [{
    delivery_id: 'dlv_7Hk2Lm9Np3Qr5St8Uv1W', webhook_id: 'whk_3c9e1a7b5d2f', event_id: 'evt_2xR9fK3mQ7pL1vN8bT4c', event_type: 'call.ended',
    status: 'retrying', attempts: [{ attempt: 1, at: '2026-05-04T12:00:00.120Z', status_code: 503, error: null, duration_ms: 48, response_body: 'down for maintenance' }], next_attempt_at: '2026-05-04T12:00:05.300Z', created_at: '2026-05-04T12:00:00.100Z',
  }],
});

const WebhookUrl = Type.String({ minLength: 1, maxLength: 2000, description: 'https (plain http only for the operator\'s allowed networks)' });
const EventTypes = Type.Array(EventTypeSchema, { maxItems: 50, uniqueItems: true, description: 'Empty: every event type' });
const AgentIds = Type.Array(Type.String({ pattern: '^agent_[a-f0-9]{12}$' }), {
  maxItems: 100, uniqueItems: true, description: 'Empty: every agent; filters call.* and recording.* events',
});

export const Webhook = Type.Object({
  webhook_id: Type.String({ pattern: '^whk_[a-f0-9]{12}$' }),
  url: Type.String(),
  description: Type.String(),
  event_types: Type.Array(EventTypeSchema),
  agent_ids: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.Enum(['gone', 'failing', 'manual'])),
  client_id: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, {
  title: 'Webhook',
  examples: [{
    webhook_id: 'whk_3c9e1a7b5d2f', url: 'https://crm.example.com/switchboard', description: 'CRM sync', event_types: ['call.ended'],
    agent_ids: [], enabled: true, disabled_reason: null, client_id: 'org_9f51914aa15c', created_at: '2026-05-04T12:00:00.000Z', updated_at: '2026-05-04T12:00:00.000Z',
  }],
});

export const CreatedWebhook = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'whsec_ + base64 of 24 random bytes. Shown only in this response.' }),
}, {
  title: 'CreatedWebhook',
  examples: [{
    webhook_id: 'whk_3c9e1a7b5d2f', url: 'https://crm.example.com/switchboard', description: 'CRM sync', event_types: ['call.ended'],
    agent_ids: [], enabled: true, disabled_reason: null, client_id: 'org_9f51914aa15c', created_at: '2026-05-04T12:00:00.000Z', updated_at: '2026-05-04T12:00:00.000Z',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }],
});

export const CreateWebhookBody = Type.Object({
  url: WebhookUrl,
  description: Type.Optional(Type.String({ maxLength: 500 })),
  event_types: Type.Optional(EventTypes),
  agent_ids: Type.Optional(AgentIds),
}, { title: 'CreateWebhookBody', additionalProperties: false });

export const UpdateWebhookBody = Type.Object({
  url: Type.Optional(WebhookUrl),
  description: Type.Optional(Type.String({ maxLength: 500 })),
  event_types: Type.Optional(EventTypes),
  agent_ids: Type.Optional(AgentIds),
  enabled: Type.Optional(Type.Boolean({ description: 'true re-enables (clearing disabled_reason); false disables ("manual")' })),
}, { title: 'UpdateWebhookBody', additionalProperties: false });

export const WebhookSecret = Type.Object({
  secret: Type.String({ description: 'The new secret; the old one also signs for 24 hours' }),
}, { title: 'WebhookSecret' });

export const ListWebhooksQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page' })),
});

export const ListDeliveriesQuery = Type.Object({
  status: Type.Optional(DeliveryStatusSchema),
  event_type: Type.Optional(EventTypeSchema),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page' })),
});

export const WebhookIdParams = Type.Object({ webhook_id: PathId('whk_ + 12 hex') });
export const DeliveryIdParams = Type.Object({ webhook_id: PathId('whk_ + 12 hex'), delivery_id: PathId('dlv_ + 20 letters and digits') });

