import type { Database } from '../../db/database.ts';
import type { Static } from 'typebox';
import type { CallSummary } from './schemas.ts';
import type { CallFilters } from './repository.ts';

type CallSummaryView = Static<typeof CallSummary>;

const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The summary columns under their API names, timestamps already ISO 8601 text: rows go out as they come. */
const COLUMNS = `call_sid, to_number, from_number, agent_id, agent_name, client_id, call_type, status, recording_enabled,
  total_cost::float8 AS total_cost, duration_seconds, turn_count, ${isoText('created_at')} AS created_at, ${isoText('updated_at')} AS updated_at,
  ${isoText('start_time')} AS start_time, ${isoText('end_time')} AS end_time, end_reason, billing_status`;

const FILTERS: Array<[keyof CallFilters, string]> = [
  ['agentId', 'agent_id = '], ['status', 'status = '], ['callType', 'call_type = '], ['from', 'created_at >= '], ['to', 'created_at < '],
];

/**
 * The calls list, the hottest read of the API: plain SQL as a named prepared statement (one per
 * combination of filters, planned once per connection), rows selected in their response shape.
 * Newest first by (created_at, call_sid), the keyset served by the (client_id, created_at, call_sid) index.
 */
export async function listCallSummaries(
  database: Pick<Database, 'prepared'>,
  orgId: string,
  filters: CallFilters,
  limit: number,
  before?: { at: Date; id: string },
): Promise<CallSummaryView[]> {
  const values: unknown[] = [orgId];
  const conditions = ['client_id = $1'];
  let name = 'calls_list';
  for (const [key, condition] of FILTERS) {
    const value = filters[key];
    if (value === undefined) continue;
    values.push(value instanceof Date ? value.toISOString() : value);
    conditions.push(`${condition}$${values.length}`);
    name += `_${key}`;
  }
  if (before) {
    values.push(before.at.toISOString(), before.id);
    conditions.push(`(created_at, call_sid) < ($${values.length - 1}::timestamptz, $${values.length})`);
    name += '_after';
  }
  values.push(limit);
  // ORDER BY names the table: the select list reuses the column names for the ISO text.
  const text = `SELECT ${COLUMNS} FROM calls WHERE ${conditions.join(' AND ')} ORDER BY calls.created_at DESC, calls.call_sid DESC LIMIT $${values.length}`;
  return database.prepared<CallSummaryView>(name, text, values);
}
