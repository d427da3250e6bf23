import type { ObjectStore } from '../../../adapters/storage/object-store.ts';
import type { Logger } from '../../../core/logger.ts';
import type { Db } from '../../../db/database.ts';
import type { AuditService } from '../../audit/service.ts';
import type { DataSettingsService } from '../../data-settings/service.ts';
import { DATA_RETENTION, dataRetentionJobs, RetentionSweeper } from './service.ts';

/** What data retention adds to the platform: its daily sweep (src/registry.ts lists every module). */
export const retentionModule = {
  name: 'retention',
  jobs: [DATA_RETENTION],
  workers: (s: { database: { db: Db }; adapters: { store: ObjectStore }; log: Logger; dataSettings: DataSettingsService; audit: AuditService }) =>
    dataRetentionJobs(new RetentionSweeper({ db: s.database.db, store: s.adapters.store, log: s.log, dataSettings: s.dataSettings, audit: s.audit })),
};
