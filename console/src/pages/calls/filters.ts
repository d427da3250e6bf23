import type { paths } from '@switchboard/sdk/schema';

export type CallQuery = NonNullable<paths['/api/calls']['get']['parameters']['query']>;

/**
 * Every value of the SDK's union `T`, in the order the page shows them. The compiler holds the list to
 * the generated types (which come from the API's document): a value the API adds and the list lacks
 * is a type error naming it, as is a value the API does not have.
 */
const everyValue = <T extends string>() => <const A extends readonly T[]>(values: A & ([T] extends [A[number]] ? unknown : { missing: Exclude<T, A[number]> })): string[] => [...values];
type Option<K extends keyof CallQuery> = NonNullable<CallQuery[K]> & string;

export const STATUSES = everyValue<Option<'status'>>()(['queued', 'ringing', 'in_progress', 'completed', 'failed', 'busy', 'no_answer', 'canceled']);
export const CALL_TYPES = everyValue<Option<'call_type'>>()(['inbound', 'outbound', 'preview']);
export const END_REASONS = everyValue<Option<'end_reason'>>()(['user_hangup', 'agent_hangup', 'tool_end_call', 'silence_timeout', 'max_duration', 'voicemail', 'transferred', 'error']);
export const BILLING_STATUSES = everyValue<Option<'billing_status'>>()(['pending', 'billed', 'insufficient_credits', 'waived']);

/** The filters of GET /api/calls that the page offers, as they appear in the page's address. */
export const TEXT_FILTERS = ['q', 'agent_id', 'status', 'call_type', 'from', 'to', 'end_reason', 'billing_status', 'phone_number', 'campaign_id', 'has_recording',
  'analysis.success', 'analysis.sentiment'] as const;
/** The filters sent as booleans (the address holds "true" or "false"). */
const BOOLEAN_FILTERS: ReadonlySet<string> = new Set(['has_recording', 'analysis.success']);
export const SENTIMENTS = everyValue<Option<'analysis.sentiment'>>()(['positive', 'neutral', 'negative']);
export const NUMBER_FILTERS = ['min_duration', 'max_duration', 'min_cost', 'max_cost'] as const;

/** The list's query from the address bar: unknown or empty parameters are left out. */
export function queryFromParams(params: URLSearchParams): Partial<CallQuery> {
  const query: Record<string, string | number | boolean> = {};
  for (const name of TEXT_FILTERS) {
    const value = params.get(name);
    if (value) query[name] = BOOLEAN_FILTERS.has(name) ? value === 'true' : value;
  }
  for (const name of NUMBER_FILTERS) {
    const value = params.get(name);
    if (value && Number.isFinite(Number(value))) query[name] = Number(value);
  }
  for (const [name, value] of params) if (name.startsWith('metadata.') && value) query[name] = value;
  return query as Partial<CallQuery>;
}

export const options = (values: string[]) => values.map((value) => ({ value, label: value.replaceAll('_', ' ') }));
