import type { Db } from '../../../db/database.ts';
import type { CallService } from '../service.ts';
import type { PreviewSessions } from './sessions.ts';
import { PREVIEW_CALLS_SWEEP, PreviewCallSweeper, previewSweepJobs } from './sweep.ts';

/** What the browser preview module adds to the platform (src/registry.ts lists every module). */
export const previewModule = {
  name: 'preview',
  routes: async (s: { previewSessions: PreviewSessions }) => (await import('./routes.ts')).previewRoutes(s.previewSessions),
  jobs: [PREVIEW_CALLS_SWEEP],
  workers: (s: { database: { db: Db }; calls: CallService }) => previewSweepJobs(new PreviewCallSweeper({ db: s.database.db, calls: s.calls })),
};
