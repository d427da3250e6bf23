import { boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { clientId, createdAt, updatedAt } from './columns.ts';

export const agents = pgTable(
  'agents',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    agentName: text('agent_name').notNull(),
    language: text('language').notNull(),
    sttProvider: text('stt_provider').notNull(),
    sttModel: text('stt_model'),
    ttsProvider: text('tts_provider').notNull(),
    ttsModel: text('tts_model'),
    voiceId: text('voice_id'),
    llmProvider: text('llm_provider').notNull(),
    llmModel: text('llm_model').notNull(),
    systemPrompt: text('system_prompt').notNull().default(''),
    firstMessage: text('first_message'),
    temperature: doublePrecision('temperature').notNull(),
    maxCallDurationSeconds: integer('max_call_duration_seconds').notNull(),
    recordingEnabled: boolean('recording_enabled').notNull().default(false),
    /** The integrations serving the providers (extensions.md §10); null: the newest active one of the provider. */
    sttIntegrationId: text('stt_integration_id'),
    ttsIntegrationId: text('tts_integration_id'),
    llmIntegrationId: text('llm_integration_id'),
    interruptible: boolean('interruptible').notNull().default(true),
    endCallEnabled: boolean('end_call_enabled').notNull().default(true),
    transferNumber: text('transfer_number'),
    silenceTimeoutSeconds: integer('silence_timeout_seconds').notNull().default(30),
    /** Post-call analysis settings (extensions.md §13), as the API shows them; null: none. */
    analysis: jsonb('analysis').$type<Record<string, unknown>>(),
    /** The latest version (agent_versions); each configuration change adds one, under this row's lock. */
    version: integer('version').notNull().default(1),
    /** null: the latest version takes every call; else the split between versions (extensions.md §12). */
    traffic: jsonb('traffic').$type<Array<{ version: number; weight: number }>>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('agents_client_created_idx').on(t.clientId, t.createdAt, t.id)],
);

export const tools = pgTable(
  'tools',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    toolName: text('tool_name').notNull(),
    toolDescription: text('tool_description').notNull(),
    webhookUrl: text('webhook_url').notNull(),
    httpMethod: text('http_method').notNull(),
    headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
    parameters: jsonb('parameters').$type<ToolParameter[]>().notNull().default([]),
    timeoutSeconds: integer('timeout_seconds').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('tools_client_created_idx').on(t.clientId, t.createdAt, t.id),
    // An agent's language model calls tools by name, so a name means one tool in an organization.
    uniqueIndex('tools_client_name_key').on(t.clientId, t.toolName),
  ],
);

export interface ToolParameter {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';
  description?: string;
  required?: boolean;
  enum?: Array<string | number>;
}

/** Which tools an agent may call. */
export const agentTools = pgTable(
  'agent_tools',
  {
    clientId: clientId(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    toolId: text('tool_id')
      .notNull()
      .references(() => tools.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.toolId] }), index('agent_tools_tool_idx').on(t.toolId)],
);

export const integrations = pgTable(
  'integrations',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    name: text('name').notNull(),
    provider: text('provider').notNull(),
    category: text('category').notNull(),
    status: text('status').notNull().default('active'),
    /** AES-256-GCM of the credentials JSON (`v1.iv.tag.ciphertext`, base64url); never returned. */
    credentialsEncrypted: text('credentials_encrypted').notNull(),
    lastValidatedAt: timestamp('last_validated_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('integrations_client_created_idx').on(t.clientId, t.createdAt, t.id)],
);

export const phoneNumbers = pgTable(
  'phone_numbers',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    phoneNumber: text('phone_number').notNull(),
    provider: text('provider').notNull(),
    supportsInbound: boolean('supports_inbound').notNull().default(false),
    supportsOutbound: boolean('supports_outbound').notNull().default(false),
    integrationId: text('integration_id').references(() => integrations.id),
    /** The agent answering this number; an assigned number cannot be deleted, nor its agent. */
    agentId: text('agent_id').references(() => agents.id),
    carrierNumberSid: text('carrier_number_sid'),
    sipTrunkName: text('sip_trunk_name'),
    sipUsername: text('sip_username'),
    /** AES-256-GCM, like integration credentials. */
    sipPasswordEncrypted: text('sip_password_encrypted'),
    sipServerAddress: text('sip_server_address'),
    inboundRoomName: text('inbound_room_name'),
    inboundPinEncrypted: text('inbound_pin_encrypted'),
    mediaEncryption: text('media_encryption'),
    sipInboundTrunkId: text('sip_inbound_trunk_id'),
    sipOutboundTrunkId: text('sip_outbound_trunk_id'),
    sipDispatchRuleId: text('sip_dispatch_rule_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // "Already exists in the system": a number belongs to one organization at a time.
    uniqueIndex('phone_numbers_number_key').on(t.phoneNumber),
    index('phone_numbers_client_created_idx').on(t.clientId, t.createdAt, t.id),
    index('phone_numbers_agent_idx').on(t.agentId),
    index('phone_numbers_integration_idx').on(t.integrationId),
  ],
);

/** SIP trunks and dispatch rules of the `local` SIP backend (the LiveKit backend keeps them in LiveKit). */
export const sipResources = pgTable('sip_resources', {
  id: text('id').primaryKey(),
  clientId: clientId(),
  kind: text('kind').notNull(),
  spec: jsonb('spec').$type<Record<string, unknown>>().notNull(),
  createdAt: createdAt(),
});
