import { AUDIT_CLEANUP, auditJobs } from './jobs.ts';
import type { AuditService } from './service.ts';

/** What the audit log module adds to the platform (src/registry.ts lists every module). */
export const auditModule = {
  name: 'audit',
  routes: async (s: { audit: AuditService }) => (await import('./routes.ts')).auditRoutes(s.audit),
  jobs: [AUDIT_CLEANUP],
  workers: (s: { audit: AuditService }) => auditJobs(s.audit),
};
