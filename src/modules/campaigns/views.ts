import type { Static } from 'typebox';
import { Errors, type FieldError } from '../../core/errors.ts';
import { iso } from '../../core/schemas.ts';
import { isTimeZone, parseInstant } from '../../core/time-zones.ts';
import type { ListedContact } from './contacts-repository.ts';
import type { CampaignRow, NewCampaignRow } from './repository.ts';
import { clockMinutes } from './schedule.ts';
import { DEFAULTS, type Campaign, type CampaignContact, type CampaignStatus, type CreateCampaignBody } from './schemas.ts';

type CampaignView = Static<typeof Campaign>;
type ContactView = Static<typeof CampaignContact>;

export function toCampaignView(c: CampaignRow): CampaignView {
  return {
    campaign_id: c.id, name: c.name, agent_id: c.agentId, from_phone_number_id: c.fromPhoneNumberId, status: c.status as CampaignStatus,
    schedule: { timezone: c.timezone, windows: c.windows, start_at: iso(c.startAt), end_at: iso(c.endAt) },
    max_concurrency: c.maxConcurrency, calls_per_minute: c.callsPerMinute,
    retry: { max_attempts: c.retryMaxAttempts, on: c.retryOn, delay_minutes: c.retryDelayMinutes },
    progress: {
      total: c.total, pending: c.pending, in_progress: c.inProgress, completed: c.completed, failed: c.failed, retrying: c.retrying, skipped: c.skipped,
    },
    client_id: c.clientId, created_at: iso(c.createdAt), updated_at: iso(c.updatedAt),
  };
}

export function toContactView(c: ListedContact): ContactView {
  return {
    row: c.row, phone_number: c.phoneNumber, variables: c.variables, status: c.status as ContactView['status'], attempts: c.attempts,
    call_sids: c.callSids, last_outcome: c.lastOutcome, next_attempt_at: iso(c.nextAttemptAt), error: c.error, created_at: iso(c.createdAt), updated_at: iso(c.updatedAt),
  };
}

export type CampaignInput = Partial<Static<typeof CreateCampaignBody>>;

/** The columns of a create or update body, after the checks no schema keyword can make. */
export function columns(input: CampaignInput): Partial<NewCampaignRow> {
  const out: Partial<NewCampaignRow> = {};
  const errors: FieldError[] = [];
  if (input.name !== undefined) out.name = input.name;
  if (input.agent_id !== undefined) out.agentId = input.agent_id;
  if (input.from_phone_number_id !== undefined) out.fromPhoneNumberId = input.from_phone_number_id;
  if (input.max_concurrency !== undefined) out.maxConcurrency = input.max_concurrency;
  if (input.calls_per_minute !== undefined) out.callsPerMinute = input.calls_per_minute;
  if (input.retry !== undefined) {
    const retry = { ...DEFAULTS.retry, ...input.retry };
    out.retryMaxAttempts = retry.max_attempts;
    out.retryOn = retry.on;
    out.retryDelayMinutes = retry.delay_minutes;
  }
  const schedule = input.schedule;
  if (schedule) {
    if (!isTimeZone(schedule.timezone)) errors.push({ path: 'body.schedule.timezone', message: 'is not an IANA time zone' });
    schedule.windows.forEach((w, i) => {
      if (clockMinutes(w.end) <= clockMinutes(w.start)) errors.push({ path: `body.schedule.windows.${i}.end`, message: 'must be after start (a window does not cross midnight)' });
    });
    const startAt = schedule.start_at ? parseInstant(schedule.start_at, 'body.schedule.start_at') : null;
    const endAt = schedule.end_at ? parseInstant(schedule.end_at, 'body.schedule.end_at') : null;
    if (startAt && endAt && endAt <= startAt) errors.push({ path: 'body.schedule.end_at', message: 'must be after start_at' });
    Object.assign(out, { timezone: schedule.timezone, windows: schedule.windows, startAt, endAt });
  }
  if (errors.length) throw Errors.validation('Invalid campaign', errors);
  return out;
}
