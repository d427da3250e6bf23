/**
 * The enumerations of a call (platform-api.md §4, extensions.md §10), defined once: the API's schemas,
 * analytics, limits and the MCP tools read them from here (the console and SDK from the OpenAPI document).
 */
export const CALL_STATUSES = ['queued', 'ringing', 'in_progress', 'completed', 'failed', 'busy', 'no_answer', 'canceled'] as const;
/** The statuses a call ends in: it changes no more, and is billed and counted. */
export const FINAL_STATUSES = ['completed', 'failed', 'busy', 'no_answer', 'canceled'] as const;
/** The statuses of a call still under way: what the concurrency limit counts. */
export const ACTIVE_STATUSES = ['queued', 'ringing', 'in_progress'] as const;
export const END_REASONS = ['user_hangup', 'agent_hangup', 'tool_end_call', 'silence_timeout', 'max_duration', 'voicemail', 'transferred', 'error'] as const;
export const CALL_TYPES = ['inbound', 'outbound', 'preview'] as const;
export const BILLING_STATUSES = ['pending', 'billed', 'insufficient_credits', 'waived'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
