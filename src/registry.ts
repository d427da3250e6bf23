import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import type { JobDefinition, JobUnit } from './jobs/job.ts';
import { agentsModule } from './modules/agents/module.ts';
import { analyticsModule } from './modules/analytics/module.ts';
import { apiKeysModule } from './modules/api-keys/module.ts';
import { auditModule } from './modules/audit/module.ts';
import { billingModule } from './modules/billing/module.ts';
import { callAnalysisModule } from './modules/calls/analysis/module.ts';
import { callExportsModule } from './modules/calls/exports/module.ts';
import { callsModule, dialModule } from './modules/calls/module.ts';
import { previewModule } from './modules/calls/preview/module.ts';
import { recordingsModule } from './modules/calls/recordings/module.ts';
import { retentionModule } from './modules/calls/retention/module.ts';
import { campaignsModule } from './modules/campaigns/module.ts';
import { consoleModule } from './modules/console/module.ts';
import { dataSettingsModule } from './modules/data-settings/module.ts';
import { eventsModule } from './modules/events/module.ts';
import { idempotencyModule } from './modules/idempotency/module.ts';
import { integrationsModule } from './modules/integrations/module.ts';
import { invitationsModule } from './modules/invitations/module.ts';
import { knowledgeBaseModule } from './modules/knowledge-base/module.ts';
import { limitsModule } from './modules/limits/module.ts';
import { organizationsModule } from './modules/organizations/module.ts';
import { phoneNumbersModule } from './modules/phone-numbers/module.ts';
import { runtimeModule } from './modules/runtime/module.ts';
import { sessionsModule } from './modules/sessions/module.ts';
import { systemModule } from './modules/system/module.ts';
import { telephonyModule } from './modules/telephony/module.ts';
import { toolsModule } from './modules/tools/module.ts';

/**
 * What a module contributes, exported by the module itself (`<module>/module.ts`): its routes (loaded
 * on first use, so a worker or a CLI command never loads HTTP code), the queues it owns and the
 * handlers of those queues. Each module names only the services it uses (`S`); services.ts checks
 * every entry against the composition root's `Services`.
 */
export interface PlatformModule<S> {
  name: string;
  routes?: (services: S) => Promise<FastifyPluginAsync<any, RawServerDefault, any>>;
  /** Its queues, created when the queue starts (a dead-letter queue before the queue that names it). */
  jobs?: readonly JobDefinition<any>[];
  /** The handlers of its queues, one per queue. */
  workers?: (services: S) => JobUnit<any>[];
}

/**
 * Every module of the platform, one line each: app.ts registers their routes in this order (which
 * is the OpenAPI document's order of paths), the queue creates their queues, and the workers
 * register their handlers. A new resource adds its folder, its line here, a migration and its tests.
 */
export const MODULES = [
  systemModule, sessionsModule, organizationsModule, invitationsModule, apiKeysModule, agentsModule, integrationsModule,
  phoneNumbersModule, knowledgeBaseModule, callsModule, recordingsModule, callExportsModule, callAnalysisModule, billingModule,
  analyticsModule, toolsModule, runtimeModule, dataSettingsModule, auditModule, limitsModule, eventsModule, campaignsModule,
  telephonyModule, dialModule, previewModule, consoleModule, retentionModule, idempotencyModule,
];
