import { CALL_EXPORT, CALL_EXPORTS_CLEANUP, callExportJobs, type CallExportService } from './service.ts';

/** What the call exports module adds to the platform (src/registry.ts lists every module). */
export const callExportsModule = {
  name: 'call-exports',
  routes: async (s: { callExports: CallExportService }) => (await import('./routes.ts')).callExportRoutes(s.callExports),
  jobs: [CALL_EXPORT, CALL_EXPORTS_CLEANUP],
  workers: (s: { callExports: CallExportService }) => callExportJobs(s.callExports),
};
