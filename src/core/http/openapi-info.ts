/** The OpenAPI document's own part: what the API is, where, its tags and its credentials. */
export const OPENAPI_INFO = {
  openapi: '3.1.0',
  info: {
    title: 'Switchboard',
    version: '0.1.0',
    description:
      'Control plane of a voice-agent platform. Every organization-scoped request carries X-Organization-Id and a credential: X-API-Key or Authorization: Bearer followed by a JWT. Success is HTTP 200 with {success, message?, data, pagination?}; errors are {detail, code, errors?}.',
    contact: { name: 'Switchboard', url: 'https://github.com/switchboard' },
    license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
  },
  // Relative: the document describes the server that serves it.
  servers: [{ url: '/', description: 'This server' }],
  tags: [
    { name: 'Service', description: 'Liveness, readiness and this document' },
    { name: 'Sign-in', description: 'People sign in to the console with an e-mail link; the session lives in an httpOnly cookie' },
    { name: 'Organizations', description: 'The caller, organizations and their members' },
    { name: 'Invitations', description: 'Inviting colleagues into an organization' },
    { name: 'API keys', description: 'Keys with a role, for servers and the voice runtime' },
    { name: 'Agents', description: 'Voice agents: providers, prompt, tools and knowledge' },
    { name: 'Tools', description: 'Webhook tools agents call during a conversation' },
    { name: 'Integrations', description: 'Provider accounts: telephony (carrier_a) and the voice runtime\'s speech and language providers (stt, tts, llm)' },
    { name: 'Voice runtime', description: 'What a voice runtime reads and calls for one call, with that call\'s token' },
    { name: 'Phone numbers', description: 'Carrier and SIP numbers, and the agents that answer them' },
    { name: 'Knowledge base', description: 'Documents indexed for hybrid search' },
    { name: 'Calls', description: 'Calls reported by the voice runtime, their transcripts and recordings' },
    { name: 'Analytics', description: 'Call counts, durations and costs over time' },
    { name: 'Billing', description: 'Prepaid credits, purchases and the ledger' },
    { name: 'Audit log', description: 'Who changed what, when, from where' },
    { name: 'Telephony', description: "The carrier's webhooks: calls answered and their progress" },
    { name: 'Limits', description: "The organization's concurrency limit and rate limit" },
    { name: 'Data settings', description: 'Retention of transcripts and recordings, and redaction of personal data' },
    { name: 'Events', description: 'Changes the organization may react to, kept 30 days' },
    { name: 'Webhooks', description: 'Endpoints that receive events, signed (Standard Webhooks), with their delivery log' },
    { name: 'Campaigns', description: 'Lists of contacts called within calling hours, at a bounded pace, with retries and live progress' },
  ],
  components: {
    securitySchemes: {
      ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    },
  },
};
