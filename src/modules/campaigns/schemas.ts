import { Type } from 'typebox';
import { Nullable, NullableTimestamp, PathId, Timestamp } from '../../core/schemas.ts';

export const CAMPAIGN_STATUSES = ['draft', 'running', 'paused', 'completed', 'cancelled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
/** Final call statuses a campaign may retry on (extensions.md §3). */
export const RETRYABLE_OUTCOMES = ['busy', 'no_answer', 'failed'] as const;
export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
/** At most this many contacts in one campaign (extensions.md §3). */
export const MAX_CONTACTS = 100_000;
export const MAX_VARIABLES = 50;
export const MAX_VARIABLE_LENGTH = 1000;

export const DEFAULTS = {
  maxConcurrency: 5,
  callsPerMinute: 60,
  retry: { max_attempts: 3, on: ['busy', 'no_answer', 'failed'] as Array<(typeof RETRYABLE_OUTCOMES)[number]>, delay_minutes: 30 },
};

const Clock = (description: string) => Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$|^24:00$', description });

export const CampaignWindow = Type.Object({
  days: Type.Array(Type.Enum([...DAYS]), { minItems: 1, maxItems: 7, uniqueItems: true }),
  start: Clock('HH:MM, wall clock in the campaign\'s time zone'),
  end: Clock('HH:MM (24:00 = end of day), after start: a window does not cross midnight'),
}, { title: 'CampaignWindow', additionalProperties: false, examples: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }] });

export const CampaignSchedule = Type.Object({
  timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' }),
  windows: Type.Array(CampaignWindow, { minItems: 1, maxItems: 50, description: 'When the dialer may call; daylight-saving changes follow the zone' }),
  start_at: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'No call before this instant' }))),
  end_at: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'No call from this instant on; contacts not yet called are skipped' }))),
}, { title: 'CampaignSchedule', additionalProperties: false, examples: [{ timezone: 'Europe/Berlin', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }], start_at: null, end_at: null }] });

export const RetryRule = Type.Object({
  max_attempts: Type.Integer({ minimum: 1, maximum: 10, default: 3, description: 'Attempts per contact, the first included' }),
  on: Type.Array(Type.Enum([...RETRYABLE_OUTCOMES]), { uniqueItems: true, maxItems: 3, default: ['busy', 'no_answer', 'failed'], description: 'Final call statuses that earn another attempt' }),
  delay_minutes: Type.Integer({ minimum: 0, maximum: 10_080, default: 30 }),
}, { title: 'CampaignRetry', additionalProperties: false, examples: [{ max_attempts: 3, on: ['busy', 'no_answer', 'failed'], delay_minutes: 30 }] });

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  agent_id: Type.String({ minLength: 1, maxLength: 64 }),
  from_phone_number_id: Type.String({ minLength: 1, maxLength: 64, description: 'A number of the organization with supports_outbound' }),
  schedule: CampaignSchedule,
  max_concurrency: Type.Integer({ minimum: 1, maximum: 100, description: 'Calls of the campaign active at once (default 5)' }),
  calls_per_minute: Type.Integer({ minimum: 1, maximum: 600, description: 'Calls started in any 60 seconds (default 60)' }),
  retry: RetryRule,
};

export const CreateCampaignBody = Type.Object({
  name: fields.name,
  agent_id: fields.agent_id,
  from_phone_number_id: fields.from_phone_number_id,
  schedule: fields.schedule,
  max_concurrency: Type.Optional(fields.max_concurrency),
  calls_per_minute: Type.Optional(fields.calls_per_minute),
  retry: Type.Optional(fields.retry),
}, {
  title: 'CreateCampaignBody', additionalProperties: false,
  examples: [{ name: 'Spring reminders', agent_id: 'agent_a1b2c3d4e5f6', from_phone_number_id: 'phon_a1b2c3d4e5f6', schedule: { timezone: 'Europe/Berlin', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }], start_at: null, end_at: null }, max_concurrency: 5 }],
});

export const UpdateCampaignBody = Type.Object({
  name: Type.Optional(fields.name),
  agent_id: Type.Optional(fields.agent_id),
  from_phone_number_id: Type.Optional(fields.from_phone_number_id),
  schedule: Type.Optional(fields.schedule),
  max_concurrency: Type.Optional(fields.max_concurrency),
  calls_per_minute: Type.Optional(fields.calls_per_minute),
  retry: Type.Optional(fields.retry),
}, { title: 'UpdateCampaignBody', additionalProperties: false, minProperties: 1, examples: [{ max_concurrency: 10, calls_per_minute: 30 }] });

export const CampaignProgress = Type.Object({
  total: Type.Integer(),
  pending: Type.Integer(),
  in_progress: Type.Integer(),
  completed: Type.Integer(),
  failed: Type.Integer(),
  retrying: Type.Integer(),
  skipped: Type.Integer(),
}, { title: 'CampaignProgress', description: 'Contacts by status; the counts always add up to total', examples: [{ total: 1000, pending: 600, in_progress: 5, completed: 350, failed: 20, retrying: 25, skipped: 0 }] });

export const Campaign = Type.Object({
  campaign_id: Type.String({ pattern: '^cmp_[a-f0-9]{12}$' }),
  name: Type.String(),
  agent_id: Type.String(),
  from_phone_number_id: Type.String(),
  status: Type.Enum([...CAMPAIGN_STATUSES]),
  schedule: Type.Object({
    timezone: Type.String(),
    windows: Type.Array(CampaignWindow),
    start_at: NullableTimestamp,
    end_at: NullableTimestamp,
  }),
  max_concurrency: Type.Integer(),
  calls_per_minute: Type.Integer(),
  retry: Type.Object({ max_attempts: Type.Integer(), on: Type.Array(Type.String()), delay_minutes: Type.Integer() }),
  progress: CampaignProgress,
  client_id: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, {
  title: 'Campaign',
  examples: [{
    campaign_id: 'cmp_a1b2c3d4e5f6', name: 'Spring reminders', agent_id: 'agent_a1b2c3d4e5f6', from_phone_number_id: 'phon_a1b2c3d4e5f6', status: 'running',
    schedule: { timezone: 'Europe/Berlin', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }], start_at: null, end_at: null }, max_concurrency: 5, calls_per_minute: 60, retry: { max_attempts: 3, on: ['busy', 'no_answer', 'failed'], delay_minutes: 30 }, progress: { total: 1000, pending: 600, in_progress: 5, completed: 350, failed: 20, retrying: 25, skipped: 0 },
    client_id: 'org_a1b2c3d4e5f6', created_at: '2026-03-02T08:00:00.000Z', updated_at: '2026-03-02T09:00:00.000Z',
  }],
});

export const CONTACT_STATUS_VALUES = ['pending', 'in_progress', 'retrying', 'completed', 'failed', 'skipped'] as const;

export const CampaignContact = Type.Object({
  row: Type.Integer({ description: 'Position in the uploads (1 = the first contact)' }),
  phone_number: Type.String(),
  variables: Type.Record(Type.String(), Type.String()),
  status: Type.Enum([...CONTACT_STATUS_VALUES]),
  attempts: Type.Integer(),
  call_sids: Type.Array(Type.String(), { description: 'The calls of every attempt, oldest first' }),
  last_outcome: Nullable(Type.String({ description: 'Final status of the last call' })),
  next_attempt_at: { ...NullableTimestamp, description: 'When a retrying contact is called again' },
  error: Nullable(Type.Object({ provider: Type.String(), code: Type.String(), message: Type.String() }, {
    description: "The last call's error: why it failed when a provider or the runtime said (e.g. provider runtime, code no_runtime)",
  })),
  created_at: Timestamp,
  updated_at: Timestamp,
}, {
  title: 'CampaignContact',
  examples: [{
    row: 1, phone_number: '+14155550100', variables: { first_name: 'Ada' }, status: 'retrying', attempts: 1, call_sids: ['call_a1B2c3D4e5F6g7H8i9J0'],
    last_outcome: 'busy', next_attempt_at: '2026-03-02T09:30:00.000Z', error: null, created_at: '2026-03-02T08:00:00.000Z', updated_at: '2026-03-02T09:00:00.000Z',
  }],
});

const Variables = Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Type.String({ maxLength: MAX_VARIABLE_LENGTH }), {
  maxProperties: MAX_VARIABLES, description: 'Call variables (string values, at most 50)',
});

export const ContactsJsonBody = Type.Object({
  contacts: Type.Array(Type.Object({
    // Checked row by row (a bad number rejects its row, never the upload), so only bounded here.
    phone_number: Type.String({ maxLength: 64, description: 'E.164' }),
    variables: Type.Optional(Variables),
  }, { additionalProperties: false }), { maxItems: MAX_CONTACTS }),
}, { title: 'CampaignContactsBody', additionalProperties: false, examples: [{ contacts: [{ phone_number: '+14155550100', variables: { first_name: 'Ada' } }] }] });

export const REJECTION_REASONS = ['invalid_phone_number', 'duplicate', 'missing_column', 'extra_column', 'invalid_variables', 'malformed_row', 'contact_limit'] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export const ContactsUploadResult = Type.Object({
  accepted: Type.Integer({ description: 'Contacts added' }),
  rejected: Type.Array(Type.Object({
    row: Type.Integer({ description: 'The rejected row: 1 = the first contact (CSV: the line after the header)' }),
    reason: Type.Enum([...REJECTION_REASONS]),
  }), { description: 'Each rejected row (the first 100,000)' }),
  rejected_count: Type.Integer({ description: 'Every rejected row' }),
}, { title: 'ContactsUploadResult', examples: [{ accepted: 998, rejected: [{ row: 17, reason: 'invalid_phone_number' }, { row: 240, reason: 'duplicate' }], rejected_count: 2 }] });

export const CampaignIdParams = Type.Object({ campaign_id: PathId('cmp_ + 12 hex') });

export const ListCampaignsQuery = Type.Object({
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page' })),
}, { additionalProperties: false });

export const ListContactsQuery = Type.Object({
  status: Type.Optional(Type.Enum([...CONTACT_STATUS_VALUES])),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page' })),
}, { additionalProperties: false });
