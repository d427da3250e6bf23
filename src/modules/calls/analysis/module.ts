import { CALL_ANALYSIS, CALL_ANALYSIS_BATCH, callAnalysisJobs } from './jobs.ts';
import type { CallAnalysisService } from './service.ts';

/** What the post-call analysis module adds to the platform (src/registry.ts lists every module). */
export const callAnalysisModule = {
  name: 'call-analysis',
  routes: async (s: { callAnalysis: CallAnalysisService }) => (await import('./routes.ts')).callAnalysisRoutes(s.callAnalysis),
  jobs: [CALL_ANALYSIS, CALL_ANALYSIS_BATCH],
  workers: (s: { callAnalysis: CallAnalysisService }) => callAnalysisJobs(s.callAnalysis),
};
