import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../core/schemas.ts';
import { Call, DialCallBody } from './schemas.ts';
import type { CallDialer } from './service.ts';

/** `POST /api/calls/dial` (extensions.md §2): the platform places the call. */
export function dialRoutes(dialing: CallDialer): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/calls/dial', {
      // A retry that arrives while the first request still dials waits for its answer: the same call, dialled once.
      config: { permission: 'calls:dial', idempotency: 'wait' },
      schema: { operationId: 'dialCall',
        tags: ['Calls'], headers: OrganizationHeader, body: DialCallBody,
        summary: 'Place an outbound call from a number of the organization: created queued and placed with the number\'s provider '
          + '(carrier_a Calls.json, LiveKit CreateSIPParticipant, or left queued for the runtime by the local SIP backend). '
          + '409 outbound_not_supported / insufficient_credits / carrier_rejected, 429 concurrency_limit, 502 carrier_unavailable (the call is then failed, not charged). '
          + 'Send Idempotency-Key to retry safely: the same key dials once',
        response: { 200: envelope(Call), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409, 429, 502) },
      },
    }, async (req) => ({ success: true, message: 'Call placed', data: await dialing.dial(req.ctx, req.body) }));
  };
}
