import { INVITATION_EMAIL } from '../modules/invitations/jobs.ts';
import { INDEX_DOCUMENT, INDEX_DOCUMENT_DEAD } from '../modules/knowledge-base/jobs.ts';
import type { JobDefinition } from './job.ts';

/**
 * Every queue of the platform, created when the queue starts (a dead-letter queue before the queue
 * that names it). The workers register one unit per entry (src/jobs/workers.ts).
 */
export const JOB_DEFINITIONS: readonly JobDefinition[] = [INDEX_DOCUMENT_DEAD, INDEX_DOCUMENT, INVITATION_EMAIL];
