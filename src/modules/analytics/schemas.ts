import { Type } from 'typebox';

export const MAX_DAYS = 366;
export const MAX_MINUTES = 24 * 60;

export const DailyQuery = Type.Object(
  {
    start_date: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'First day (YYYY-MM-DD, in timezone); default 30 days before end_date' })),
    end_date: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Last day, included; default today in timezone' })),
    start_time: Type.Optional(Type.String({ format: 'date-time', description: 'Gives points per minute from this instant (instead of days)' })),
    end_time: Type.Optional(Type.String({ format: 'date-time', description: 'End of the minute range (excluded); default start_time + 24 h, or now if earlier' })),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only this agent's calls" })),
    timezone: Type.String({ default: 'UTC', minLength: 1, maxLength: 64, description: 'IANA time zone of the calendar days' }),
  },
  { additionalProperties: false },
);

export const DailyPoint = Type.Object({
  date: Type.String({ description: 'YYYY-MM-DD for days; the minute (ISO 8601, UTC) for minutes' }),
  calls: Type.Integer(),
  cost_credits: Type.Number(),
  total_duration_seconds: Type.Number(),
}, { title: 'DailyPoint' });

export const DailyMetrics = Type.Object({
  period: Type.Object({
    start: Type.String({ format: 'date-time', description: 'First instant counted' }),
    end: Type.String({ format: 'date-time', description: 'First instant after the period (excluded)' }),
  }),
  granularity: Type.Enum(['day', 'minute']),
  timezone: Type.String(),
  daily: Type.Array(DailyPoint),
}, { title: 'DailyMetrics' });
