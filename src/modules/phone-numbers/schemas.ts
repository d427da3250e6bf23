import { Type } from 'typebox';
import { E164, Nullable, pageQuery, PathId, Timestamp } from '../../core/schemas.ts';

/** The import body of section 4.6; the provider-specific rules are checked by the service. */
export const ImportPhoneNumberBody = Type.Object(
  {
    phone_number: E164,
    provider: Type.Enum(['carrier_a', 'sip']),
    supports_inbound: Type.Boolean({ default: false }),
    supports_outbound: Type.Boolean({ default: false }),
    integration_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Required for carrier_a: a carrier_a integration of this organization' })),
    sip_trunk_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'SIP: trunk name (required)' })),
    sip_username: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'SIP: trunk auth username (required)' })),
    sip_password: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'SIP: trunk auth password (required; never returned)' })),
    sip_server_address: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'SIP: required for outbound; creates the outbound trunk' })),
    inbound_room_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$', description: 'SIP: room name prefix of inbound calls (required)' })),
    inbound_pin: Type.Optional(Type.String({ minLength: 4, maxLength: 10, description: 'SIP, optional: PIN callers enter (never returned)' })),
    media_encryption: Type.Optional(Type.Enum(['disable', 'allow', 'require'], { default: 'allow', description: 'SIP: default allow' })),
  },
  { title: 'ImportPhoneNumberBody', additionalProperties: false },
);

export const UpdatePhoneNumberBody = Type.Object(
  {
    agent_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'Agent to assign; null unassigns' }))),
    supports_inbound: Type.Optional(Type.Boolean()),
    supports_outbound: Type.Optional(Type.Boolean()),
  },
  { title: 'UpdatePhoneNumberBody', additionalProperties: false, minProperties: 1 },
);

export const PhoneNumber = Type.Object({
  phone_number_id: Type.String({ pattern: '^phon_[a-f0-9]{12}$' }),
  phone_number: Type.String(),
  provider: Type.Enum(['carrier_a', 'sip']),
  status: Type.Enum(['free', 'assigned'], { description: 'assigned while an agent answers the number' }),
  supports_inbound: Type.Boolean(),
  supports_outbound: Type.Boolean(),
  integration_id: Nullable(Type.String({ description: 'carrier_a numbers' })),
  agent_id: Nullable(Type.String()),
  client_id: Type.String(),
  sip: Nullable(
    Type.Object({
      trunk_name: Type.String(),
      username: Type.String(),
      server_address: Nullable(Type.String()),
      inbound_room_name: Type.String(),
      media_encryption: Type.String(),
      has_inbound_pin: Type.Boolean(),
      inbound_trunk_id: Type.String(),
      outbound_trunk_id: Nullable(Type.String()),
      dispatch_rule_id: Type.String(),
    }, { description: 'SIP numbers: the trunks created for them (password and PIN are never returned)' }),
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'PhoneNumber' });

export const ListPhoneNumbersQuery = Type.Object(pageQuery(50));
export const PhoneNumberIdParams = Type.Object({ phone_number_id: PathId('phon_ + 12 hex') });
