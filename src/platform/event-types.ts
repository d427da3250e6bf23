// The event catalogue (extensions.md §1): what the outbox may emit and what webhook endpoints subscribe to.
/** Every event type of extensions.md §1. */
export const EVENT_TYPES = [
  'call.created', 'call.updated', 'call.ended', 'call.analyzed', 'recording.ready', 'document.completed', 'document.failed',
  'credits.purchased', 'credits.low', 'agent.created', 'agent.updated', 'agent.deleted',
  'phone_number.imported', 'phone_number.deleted', 'api_key.created', 'api_key.revoked',
  'invitation.accepted', 'member.removed', 'campaign.completed', 'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
