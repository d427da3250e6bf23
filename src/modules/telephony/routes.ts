import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../core/schemas.ts';
import type { CarrierRequest, TelephonyService } from './service.ts';
import { empty } from './twiml.ts';

const tags = ['Telephony'];

const CarrierCallParams = Type.Object({
  CallSid: Type.Optional(Type.String({ maxLength: 64 })),
  AccountSid: Type.Optional(Type.String({ maxLength: 64 })),
  From: Type.Optional(Type.String({ maxLength: 256 })),
  To: Type.Optional(Type.String({ maxLength: 256 })),
  CallStatus: Type.Optional(Type.String({ maxLength: 32 })),
  Direction: Type.Optional(Type.String({ maxLength: 32 })),
  CallDuration: Type.Optional(Type.String({ maxLength: 16 })),
}, {
  title: 'CarrierCallParams', additionalProperties: Type.String({ maxLength: 4000 }),
  description: 'The form parameters the carrier sends (Twilio-compatible); every one is covered by X-Twilio-Signature',
  examples: [{ CallSid: 'CA0123456789abcdef0123456789abcdef', AccountSid: 'AC0123456789abcdef0123456789abcdef', From: '+14155550111', To: '+14155550100', CallStatus: 'ringing', Direction: 'inbound' }],
});

const SignatureHeader = Type.Object({ 'x-twilio-signature': Type.Optional(Type.String({ description: 'HMAC-SHA1 of the URL and the sorted parameters, keyed with the auth token' })) });

const TwiML = Type.String({
  title: 'TwiML', description: 'The carrier\'s call instructions (TwiML, XML)',
  examples: ['<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://runtime.example/stream"><Parameter name="call_sid" value="call_a1b2c3"/><Parameter name="agent_id" value="agent_0123456789ab"/></Stream></Connect></Response>'],
});

const xml = { content: { 'text/xml': { schema: TwiML } } };

function carrierRequest(req: { url: string; body: unknown; headers: Record<string, unknown> }): CarrierRequest {
  const at = req.url.indexOf('?');
  const signature = req.headers['x-twilio-signature'];
  return { query: at < 0 ? '' : req.url.slice(at), params: (req.body ?? {}) as Record<string, string>, signature: typeof signature === 'string' ? signature : undefined };
}

/** The carrier's webhooks: public routes, each request checked against the carrier's signature. */
export function telephonyRoutes(service: TelephonyService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // The carrier posts forms. A repeated name keeps its last value (the carrier repeats none here).
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    app.post('/api/telephony/carrier_a/voice', {
      config: { auth: 'public' },
      schema: { operationId: 'answerCarrierCall',
        tags, headers: SignatureHeader, body: CarrierCallParams, consumes: ['application/x-www-form-urlencoded'],
        summary: 'carrier_a voice webhook (VoiceUrl): creates the inbound call and answers TwiML connecting it to the voice runtime, or <Reject/> (unknown number, no agent, concurrency limit)',
        response: { 200: xml, ...errorResponses(400, 403, 500) },
      },
    }, async (req, reply) => reply.type('text/xml; charset=utf-8').send(await service.answerVoice(carrierRequest(req))));

    app.post('/api/telephony/carrier_a/status', {
      config: { auth: 'public' },
      schema: { operationId: 'receiveCarrierStatus',
        tags, headers: SignatureHeader, body: CarrierCallParams, consumes: ['application/x-www-form-urlencoded'],
        summary: 'carrier_a status callback (StatusCallback): maps CallStatus and CallDuration onto the call; a final status ends it as PATCH /api/calls does, once, whatever the order or repetition',
        response: { 200: xml, ...errorResponses(400, 403, 500) },
      },
    }, async (req, reply) => {
      await service.applyStatus(carrierRequest(req));
      return reply.type('text/xml; charset=utf-8').send(empty());
    });
  };
}
