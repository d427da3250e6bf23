import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../../core/schemas.ts';
import type { CallAnalysisService } from './service.ts';
import { AnalysisJob, AnalysisJobParams, AnalysisJobProgress, AnalyzeCallBody, AnalyzeCallsBody } from './schemas.ts';
import { Call, CallSidParams } from '../schemas.ts';

const tags = ['Calls'];

/**
 * Post-call analysis reruns (extensions.md §13): `calls:analyze` (admin, agent_manager). The work is
 * a job, so both answer 200 at once, as every success of the contract does (decisions: "success is always HTTP 200"); the analysis is then read with the call (`calls:read`).
 */
export function callAnalysisRoutes(service: CallAnalysisService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/calls/:call_sid/analyze', {
      config: { permission: 'calls:analyze' },
      schema: { operationId: 'analyzeCall',
        tags, headers: OrganizationHeader, params: CallSidParams, body: AnalyzeCallBody,
        summary: "Analyze a call again with its own agent version's analysis settings, or another version's: answers the call as it is; "
          + 'the new analysis replaces `analysis` when the job ends (call.analyzed), its cost charged once. 409 no_transcript. Honours Idempotency-Key',
        response: { 200: envelope(Call), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req, reply) => {
      const data = await service.rerun(req.ctx, req.params.call_sid, req.body?.agent_version);
      return reply.code(200).send({ success: true, message: 'Analysis started', data });
    });

    app.post('/api/calls/analyze', {
      config: { permission: 'calls:analyze' },
      schema: { operationId: 'analyzeCalls',
        tags, headers: OrganizationHeader, body: AnalyzeCallsBody,
        summary: "Analyze again every call the list returns for these filters (each with its own agent version), as a job: poll GET /api/calls/analyze/{job_id}. Honours Idempotency-Key",
        response: { 200: envelope(AnalysisJob), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req, reply) => reply.code(200).send({ success: true, message: 'Analysis job started', data: await service.rerunMany(req.ctx, req.body ?? {}) }));

    app.get('/api/calls/analyze/:job_id', {
      config: { permission: 'calls:analyze' },
      schema: { operationId: 'getCallAnalysisJob',
        tags, headers: OrganizationHeader, params: AnalysisJobParams,
        summary: 'A bulk analysis job\'s progress: calls gathered, analyses completed, failed and pending',
        response: { 200: envelope(AnalysisJobProgress), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.progress(req.ctx, req.params.job_id) }));
  };
}
