import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader, PathId, Timestamp } from '../../../core/schemas.ts';
import type { PreviewSessions } from './sessions.ts';

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
        summary: 'Talk to an agent in the browser: a preview call and the runtime WebSocket to connect to',
        description: 'Creates a call of call_type preview, queued, with the agent\'s version (credits and the concurrency limit apply as for dialing; '
          + 'it has no telephony cost), and answers its call token and the runtime\'s preview WebSocket, websocket_url '
          + '(/api/runtime/preview?token=… on PUBLIC_BASE_URL as ws/wss, or on the host of RUNTIME_STREAM_URL). On that socket: binary frames of '
          + '16-bit little-endian mono PCM at 16 kHz, 20 ms (640 bytes), both ways; from the runtime JSON text frames '
          + '{type: "transcript", role, text, final}, {type: "agent_speaking", speaking}, {type: "turn", latency} and {type: "ended", end_reason}; '
          + 'from the browser {type: "end"} hangs up (user_hangup). A token the runtime cannot load the call with closes the socket with 1008. '
          + 'The call is then reported like any other (transcript, latency, costs). 409 insufficient_credits, 429 concurrency_limit, 404 for an agent of another organization',
        response: { 200: envelope(PreviewSession), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409, 429) },
      },
    }, async (req, reply) => reply.code(200).send({ success: true, message: 'Preview session created', data: await sessions.create(req.ctx, req.params.agent_id) }));
  };
}
