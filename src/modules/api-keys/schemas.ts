import { Type } from 'typebox';
import { NullableTimestamp, pageQuery, PathId, RoleSchema, Timestamp } from '../../core/schemas.ts';

export const ApiKey = Type.Object(
  {
    key_id: Type.String({ pattern: '^apikey_[a-f0-9]{12}$' }),
    name: Type.String(),
    role: RoleSchema,
    prefix: Type.String({ description: 'First 12 characters of the key' }),
    client_id: Type.String(),
    user_id: Type.String({ description: 'User who created the key' }),
    status: Type.Enum(['active', 'revoked']),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    expires_at: NullableTimestamp,
    scopes: Type.Array(Type.String(), { description: "Permissions the key is narrowed to; empty: everything its role holds" }),
    allowed_ips: Type.Array(Type.String(), { description: 'Networks (CIDR) the key is accepted from; empty: any address' }),
  }, { title: 'ApiKey' });

export const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'The full key (sk_ + 40 base62). Shown only in this response.' }),
}, { title: 'CreatedApiKey' });

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    role: RoleSchema,
    expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'Must be in the future' })),
    scopes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 100, uniqueItems: true,
      description: 'Permission strings (e.g. calls:read) the key is narrowed to: a request needs the role and the scope (403 scope_missing). Empty or absent: the role\'s permissions. A key created with a key narrowed by scopes must list scopes, each among that key\'s (403 scope_missing)',
    })),
    allowed_ips: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 64 }), {
      maxItems: 50, uniqueItems: true,
      description: 'IPv4/IPv6 addresses or CIDR networks the key is accepted from (403 ip_not_allowed otherwise). Empty or absent: any address. A key created with a key that has allowed_ips must list networks, each inside one of that key\'s (403 allowed_ips_too_wide)',
    })),
  },
  { title: 'CreateApiKeyBody', additionalProperties: false },
);

export const ListApiKeysQuery = Type.Object(pageQuery(50));
export const KeyIdParams = Type.Object({ key_id: PathId('apikey_ + 12 hex') });
