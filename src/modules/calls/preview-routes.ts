import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader, PathId, Timestamp } from '../../core/schemas.ts';
import type { PreviewSessions } from './preview-sessions.ts';

const PreviewSession = Type.Object({
  call_sid: Type.String({ description: 'The preview call, created queued; the runtime moves it to in_progress when the browser connects' }),
  websocket_url: Type.String({ description: "The runtime's preview WebSocket with the token in its query: binary frames of 16-bit little-endian mono PCM at 16 kHz (20 ms) both ways; JSON text frames transcript, agent_speaking, turn, ended from the runtime, {type: \"end\"} from the browser" }),
  token: Type.String({ description: "The call's token (scope runtime), good for this call alone" }),
  expires_at: Timestamp,
}, { title: 'PreviewSession' });

/** `POST /api/agents/{agent_id}/preview-sessions` (extensions.md §11): talking to an agent in the browser. */
export function previewRoutes(sessions: PreviewSessions): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/agents/:agent_id/preview-sessions', {
      config: { permission: 'agents:preview' },
      schema: { operationId: 'createPreviewSession',
        tags: ['Agents'], headers: OrganizationHeader, params: Type.Object({ agent_id: PathId('The agent to talk to') }),
        summary: 'Talk to an agent in the browser: creates a preview call (credits and the concurrency limit apply as for dialing; '
          + 'no telephony cost) and answers the runtime WebSocket to connect to with its call token. '
          + '409 insufficient_credits, 429 concurrency_limit',
        response: { 201: envelope(PreviewSession), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409, 429) },
      },
    }, async (req, reply) => reply.code(201).send({ success: true, message: 'Preview session created', data: await sessions.create(req.ctx, req.params.agent_id) }));
  };
}
