import { Type } from 'typebox';
import { Nullable, pageQuery, PathId, Timestamp } from '../../core/schemas.ts';
import { VOICE_CATEGORIES, VOICE_PROVIDERS } from './providers.ts';

const CarrierCredentials = Type.Object(
  {
    account_sid: Type.String({ minLength: 1, maxLength: 100 }),
    auth_token: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { title: 'CarrierCredentials', additionalProperties: false, description: 'carrier_a (telephony); encrypted at rest, never returned' },
);

const ProviderCredentials = Type.Object(
  {
    api_key: Type.String({ minLength: 1, maxLength: 500 }),
    base_url: Type.Optional(Nullable(Type.String({
      minLength: 1, maxLength: 500, pattern: '^https?://',
      description: "Replaces the vendor's address (a self-hosted compatible server); must pass the outbound address rule (ALLOWED_NETWORKS)",
    }))),
    region: Type.Optional(Nullable(Type.String({ pattern: '^[a-z0-9-]{1,50}$', description: 'azure only: the Speech resource region, e.g. westeurope' }))),
  },
  { title: 'ProviderCredentials', additionalProperties: false, description: 'stt, tts and llm providers; encrypted at rest, never returned' },
);

const Credentials = Type.Union([CarrierCredentials, ProviderCredentials]);

export const CreateIntegrationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    provider: Type.Enum(['carrier_a', ...VOICE_PROVIDERS]),
    category: Type.Optional(Type.Enum(['telephony', ...VOICE_CATEGORIES], {
      description: 'telephony for carrier_a; stt, tts or llm for the speech and language providers (default: the only category the provider serves; openai and azure must say)',
    })),
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
