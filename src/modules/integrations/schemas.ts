import { Type } from 'typebox';
import { pageQuery, PathId, Timestamp } from '../../core/schemas.ts';

const Credentials = Type.Object(
  {
    account_sid: Type.String({ minLength: 1, maxLength: 100 }),
    auth_token: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false, description: 'Encrypted at rest; never returned' },
);

export const CreateIntegrationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    provider: Type.Enum(['carrier_a']),
    category: Type.Optional(Type.Enum(['telephony'], { default: 'telephony' })),
    credentials: Credentials,
  },
  { title: 'CreateIntegrationBody', additionalProperties: false },
);

export const UpdateIntegrationBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), credentials: Type.Optional(Credentials) },
  { title: 'UpdateIntegrationBody', additionalProperties: false, minProperties: 1 },
);

export const IntegrationSummary = Type.Object({
  integration_id: Type.String({ pattern: '^intg_[a-f0-9]{12}$' }),
  name: Type.String(),
  provider: Type.String(),
  category: Type.String(),
  status: Type.Enum(['active', 'invalid']),
  created_at: Timestamp,
}, { title: 'IntegrationSummary' });

export const Integration = Type.Object({ ...IntegrationSummary.properties, client_id: Type.String(), updated_at: Timestamp }, { title: 'Integration' });

export const ListIntegrationsQuery = Type.Object(pageQuery(50));
export const IntegrationIdParams = Type.Object({ integration_id: PathId('intg_ + 12 hex') });
