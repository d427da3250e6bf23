import { Type } from 'typebox';
import { Nullable, Timestamp, pageQuery } from '../../core/schemas.ts';

export const AuditActor = Type.Object({
  type: Type.Enum(['api_key', 'user', 'system']),
  id: Type.String({ description: 'The key id, the user id, or the platform job' }),
  label: Nullable(Type.String({ description: "The key's name, the user's e-mail, or the job's name" })),
}, { title: 'AuditActor' });

export const AuditEntry = Type.Object({
  audit_id: Type.String({ pattern: '^aud_[A-Za-z0-9]{20}$' }),
  at: Timestamp,
  actor: AuditActor,
  action: Type.String({ description: 'resource.verb, e.g. agent.update, recording.access' }),
  resource_type: Type.String(),
  resource_id: Type.String(),
  changed_fields: Type.Array(Type.String(), { description: 'Names of the fields the change set (never their values)' }),
  ip: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  request_id: Nullable(Type.String()),
}, {
  title: 'AuditEntry',
  examples: [{
    audit_id: 'aud_4f9K2mQ8xZ1pL7sT0bNc', at: '2026-11-22T10:15:00.000Z',
    actor: { type: 'api_key', id: 'apikey_a1b2c3d4e5f6', label: 'deploy bot' },
    action: 'agent.update', resource_type: 'agent', resource_id: 'agent_a1b2c3d4e5f6', changed_fields: ['system_prompt'],
    ip: '203.0.113.7', user_agent: 'curl/8.5.0', request_id: 'req-7f3a9c',
  }],
});

const Instant = Type.String({ format: 'date-time' });

export const ListAuditLogsQuery = Type.Object({
  ...pageQuery(50),
  actor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  from: Type.Optional({ ...Instant, description: 'At or after' }),
  to: Type.Optional({ ...Instant, description: 'Before' }),
}, { additionalProperties: false });
