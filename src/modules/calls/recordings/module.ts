import type { RecordingService } from './service.ts';

/** What the recordings module adds to the platform (src/registry.ts lists every module). */
export const recordingsModule = {
  name: 'recordings',
  routes: async (s: { recordings: RecordingService }) => (await import('./routes.ts')).recordingRoutes(s.recordings),
};
