import { Type } from 'typebox';
import { CALL_STATUSES, CALL_TYPES } from '../../core/call-enums.ts';
import { GRANULARITIES } from './usage-periods.ts';

export const USAGE_METRICS = [
  'calls', 'duration_seconds', 'duration_p50', 'duration_p95', 'latency_p50', 'latency_p95', 'cost', 'cost_stt', 'cost_llm', 'cost_tts', 'cost_telephony', 'cost_platform', 'success_rate',
] as const;
export type UsageMetric = (typeof USAGE_METRICS)[number];

/** The group_by values backed by rollups, and the name each gives its group's field. */
export const GROUP_FIELDS = {
  agent: 'agent_id', phone_number: 'phone_number', status: 'status', end_reason: 'end_reason', call_type: 'call_type', campaign: 'campaign_id', agent_version: 'agent_version',
  'analysis.success': 'analysis.success', 'analysis.sentiment': 'analysis.sentiment',
} as const;
const escaped = (name: string) => name.replace(/\./g, '\\.');

export const UsageQuery = Type.Object(
  {
    start: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; the first bucket is the one holding it (default: end − 30 days)' })),
    end: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601, excluded; the last bucket is the one holding the instant before it (default: now)' })),
    granularity: Type.Enum([...GRANULARITIES], { default: 'day', description: 'minute (period ≤ 48 h), hour (≤ 31 days), day (≤ 366 days), week (ISO, from Monday; ≤ 5 years), month (≤ 5 years)' }),
    timezone: Type.String({ default: 'UTC', minLength: 1, maxLength: 64, description: 'IANA time zone of the buckets' }),
    group_by: Type.Optional(Type.String({
      pattern: `^(${Object.keys(GROUP_FIELDS).map(escaped).join('|')}|metadata\\..{1,64}|analysis\\.data\\..{1,64})$`,
      description: 'agent, phone_number (the organization\'s number: called inbound, calling outbound), status, end_reason, call_type, campaign, agent_version (the version of the agent the call ran, as text), '
        + 'analysis.success (true, false; null: not judged), analysis.sentiment, or metadata.<key> / analysis.data.<key> (the top-level value of metadata / of the analysis\'s structured_data, as text)',
    })),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    call_type: Type.Optional(Type.Enum([...CALL_TYPES])),
    status: Type.Optional(Type.Enum([...CALL_STATUSES])),
    metrics: Type.Optional(Type.String({
      pattern: `^(${USAGE_METRICS.join('|')})(,(${USAGE_METRICS.join('|')}))*$`, maxLength: 200,
      description: `Comma list of ${USAGE_METRICS.join(', ')} (default: all)`,
    })),
  },
  { additionalProperties: false },
);

const metricFields = {
  additionalProperties: Type.Number(),
  description: 'The metrics asked for: calls, seconds, credits, milliseconds for latency_p50 and latency_p95, and success_rate: of the calls whose analysis judged success, the share that succeeded (0 to 1; 0 when none was judged)',
};

export const UsagePoint = Type.Object({ start: Type.String({ format: 'date-time', description: 'Start of the bucket' }) }, { ...metricFields, title: 'UsagePoint' });

export const UsageReport = Type.Object({
  period: Type.Object({
    start: Type.String({ format: 'date-time', description: 'Start of the first bucket' }),
    end: Type.String({ format: 'date-time', description: 'End of the last bucket (excluded)' }),
  }),
  granularity: Type.Enum([...GRANULARITIES]),
  timezone: Type.String(),
  group_by: Type.Union([Type.String(), Type.Null()]),
  series: Type.Array(Type.Object({
    group: Type.Union([Type.Object({}, { additionalProperties: Type.Union([Type.String(), Type.Null()]) }), Type.Null()], { description: 'null without group_by' }),
    points: Type.Array(UsagePoint),
  })),
  totals: Type.Object({}, metricFields),
}, { title: 'UsageReport' });
