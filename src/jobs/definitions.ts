import { IDEMPOTENCY_CLEANUP } from '../modules/idempotency/jobs.ts';
import { INVITATION_EMAIL } from '../modules/invitations/jobs.ts';
import { INDEX_DOCUMENT, INDEX_DOCUMENT_DEAD } from '../modules/knowledge-base/jobs.ts';
import { DATA_RETENTION } from '../modules/calls/retention/service.ts';
import { AUDIT_CLEANUP } from '../modules/audit/jobs.ts';
import { EVENTS_CLEANUP, WEBHOOK_DISABLED_EMAIL } from '../modules/events/jobs.ts';
import { CAMPAIGN_JOBS } from '../modules/campaigns/jobs.ts';
import { CALL_EXPORT, CALL_EXPORTS_CLEANUP } from '../modules/calls/exports/service.ts';
import { PREVIEW_CALLS_SWEEP } from '../modules/calls/preview/sweep.ts';
import { CALL_ANALYSIS, CALL_ANALYSIS_BATCH } from '../modules/calls/analysis/jobs.ts';
import type { JobDefinition } from './job.ts';

/**
 * Every queue of the platform, created when the queue starts (a dead-letter queue before the queue
 * that names it). The workers register one unit per entry (src/jobs/workers.ts).
 */
export const JOB_DEFINITIONS: readonly JobDefinition[] = [
  INDEX_DOCUMENT_DEAD, INDEX_DOCUMENT, INVITATION_EMAIL, DATA_RETENTION, AUDIT_CLEANUP, WEBHOOK_DISABLED_EMAIL, EVENTS_CLEANUP, IDEMPOTENCY_CLEANUP, ...CAMPAIGN_JOBS,
  CALL_EXPORT, CALL_EXPORTS_CLEANUP, PREVIEW_CALLS_SWEEP, CALL_ANALYSIS, CALL_ANALYSIS_BATCH,
];
