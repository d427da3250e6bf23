import { Type } from 'typebox';
import { Nullable, pageQuery, PathId, Timestamp } from '../../core/schemas.ts';

const Parameter = Type.Object(
  {
    name: Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$', maxLength: 64 }),
    type: Type.Enum(['string', 'number', 'integer', 'boolean', 'object', 'array']),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    required: Type.Optional(Type.Boolean()),
    enum: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number()]), { minItems: 1, maxItems: 100 })),
  },
  { additionalProperties: false },
);

const fields = {
  tool_name: Type.String({ minLength: 1, maxLength: 50, pattern: '^[a-zA-Z0-9_]+$' }),
  tool_description: Type.String({ minLength: 1, maxLength: 500 }),
  webhook_url: Type.String({ minLength: 1, maxLength: 500, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$', description: 'http or https URL' }),
  http_method: Type.Enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
  headers: Type.Record(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", maxLength: 100 }), Type.String({ maxLength: 2000 }), {
    maxProperties: 50, description: 'Sent with every webhook call; replaces the existing headers entirely',
  }),
  parameters: Type.Array(Parameter, { maxItems: 50, description: 'Replaces the existing parameters entirely' }),
  timeout_seconds: Type.Integer({ minimum: 1, maximum: 60 }),
};

export const CreateToolBody = Type.Object(
  {
    tool_name: fields.tool_name,
    tool_description: fields.tool_description,
    webhook_url: fields.webhook_url,
    http_method: Type.Optional({ ...fields.http_method, default: 'POST' }),
    headers: Type.Optional(fields.headers),
    parameters: Type.Optional(fields.parameters),
    timeout_seconds: Type.Optional({ ...fields.timeout_seconds, default: 10 }),
  },
  { title: 'CreateToolBody', additionalProperties: false },
);

export const UpdateToolBody = Type.Object(
  {
    tool_name: Type.Optional(fields.tool_name),
    tool_description: Type.Optional(fields.tool_description),
    webhook_url: Type.Optional(fields.webhook_url),
    http_method: Type.Optional(fields.http_method),
    headers: Type.Optional(fields.headers),
    parameters: Type.Optional(fields.parameters),
    timeout_seconds: Type.Optional(fields.timeout_seconds),
  },
  { title: 'UpdateToolBody', additionalProperties: false, minProperties: 1 },
);

export const Tool = Type.Object({
  tool_id: Type.String({ pattern: '^tool_[a-f0-9]{12}$' }),
  client_id: Type.String(),
  tool_name: Type.String(),
  tool_description: Type.String(),
  webhook_url: Type.String(),
  http_method: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  parameters: Type.Array(Parameter),
  timeout_seconds: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Tool' });

export const TestToolBody = Type.Object(
  { arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Defaults to sample values per parameter' })) },
  { title: 'TestToolBody', additionalProperties: false },
);

export const ToolTestResult = Type.Object({
  ok: Type.Boolean({ description: 'The webhook answered 2xx' }),
  status_code: Nullable(Type.Integer()),
  latency_ms: Type.Number(),
  body: Nullable(Type.String({ description: 'First 4 KB of the response' })),
  truncated: Type.Boolean(),
  error: Nullable(Type.String()),
  request: Type.Object({ method: Type.String(), url: Type.String(), arguments: Type.Record(Type.String(), Type.Unknown()) }),
}, { title: 'ToolTestResult' });

export const ListToolsQuery = Type.Object(pageQuery(50));
export const ToolIdParams = Type.Object({ tool_id: PathId('tool_ + 12 hex') });
