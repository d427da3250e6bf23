import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../../core/schemas.ts';
import { Call, CallSidParams, RecordingStream, SignedRecordingQuery } from '../schemas.ts';
import type { RecordingBody, RecordingService } from './service.ts';
import { sendFileRange } from '../../../adapters/http/send-file.ts';

const tags = ['Calls'];

// The upload's body as the OpenAPI document names it; it validates nothing (the handler checks the stream).
const RecordingAudio = { title: 'RecordingAudio', description: 'The recording file: WAV (audio/wav) or MP3 (audio/mpeg)', examples: ['(the file, binary)'] };
/** The upload as the OpenAPI document types it: generated clients send the bytes as they are. */
const DocumentedRecordingAudio = { ...RecordingAudio, type: 'string', format: 'binary' };

/** Headers of a recording answer (platform-api.md §4.2), always sent; the document marks them required. */
const RECORDING_HEADERS = {
  'Content-Disposition': { type: 'string', description: 'attachment (download) or inline (signed link), with the filename recording_{to_number}.wav (.mp3 for an MP3 recording)' },
  'Content-Length': { type: 'integer', description: 'Bytes in this answer' },
};

const binary = (description: string, types: string[]) => ({
  description,
  content: Object.fromEntries(types.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
});

async function sendRecording(reply: FastifyReply, body: RecordingBody, disposition: 'inline' | 'attachment') {
  reply
    .header('content-type', body.contentType)
    .header('content-length', String(body.length))
    .header('content-disposition', `${disposition}; filename="${body.filename}"`)
    .header('cache-control', 'private, no-store');
  if (body.range) reply.status(206).header('content-range', `bytes ${body.range.start}-${body.range.end}/${body.size}`);
  if ('stream' in body.source) return reply.send(body.source.stream);
  // A local file goes out through reused buffers, written to the socket directly.
  reply.hijack();
  reply.raw.writeHead(reply.statusCode, reply.getHeaders() as Record<string, string>);
  if (reply.request.method === 'HEAD' || body.length === 0) return reply.raw.end();
  const start = body.range?.start ?? 0;
  await sendFileRange(reply.raw, body.source.file, start, start + body.length - 1);
}

export function recordingRoutes(service: RecordingService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Audio bodies reach the handler as the raw stream: it checks the call first, then spools under the limit.
    app.addContentTypeParser(/^audio\//, (_req, payload, done) => done(null, payload));

    app.put('/api/calls/:call_sid/recording', {
      config: { permission: 'calls:write', largeUpload: true, callToken: true, documentedBody: { 'audio/wav': DocumentedRecordingAudio, 'audio/mpeg': DocumentedRecordingAudio } },
      schema: { operationId: 'uploadRecording',
        tags, headers: OrganizationHeader, params: CallSidParams,
        summary: "Upload the call's recording (voice runtime): the binary body, audio/wav (header checked) or audio/mpeg; replaces an earlier one; 409 when the agent has recording off",
        // Documented only: the body is a stream the handler checks while it reads it.
        body: { content: { 'audio/wav': { schema: RecordingAudio }, 'audio/mpeg': { schema: RecordingAudio } } } as never,
        response: { 200: envelope(Call), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409, 413, 415) },
      },
    }, async (req, reply) => {
      try {
        const upload = { contentType: req.headers['content-type'], body: req.body as Readable };
        return { success: true, message: 'Recording stored', data: await service.upload(req.ctx, req.params.call_sid, upload) };
      } catch (err) {
        // The rest of a refused body is not read: the connection closes once the error is sent.
        reply.header('connection', 'close');
        reply.raw.once('finish', () => req.raw.destroy());
        throw err;
      }
    });

    app.get('/api/calls/:call_sid/recording/stream', {
      config: { permission: 'calls:read' },
      schema: { operationId: 'getRecordingStreamLink',
        tags, headers: OrganizationHeader, params: CallSidParams,
        summary: 'A URL that plays the recording, valid 3600 s, with Range support (seeking)',
        response: { 200: envelope(RecordingStream), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.streamLink(req.ctx, req.params.call_sid) }));

    app.get('/api/calls/:call_sid/recording/download', {
      config: { permission: 'calls:read' },
      schema: { operationId: 'downloadRecording',
        tags, headers: OrganizationHeader, params: CallSidParams,
        summary: 'The whole recording as an attachment recording_{to_number}.wav (an MP3 recording is sent as stored, .mp3, audio/mpeg)',
        response: { 200: { ...binary('The recording', ['audio/wav', 'audio/mpeg']), headers: RECORDING_HEADERS }, ...errorResponses(...ORG_ROUTE_ERRORS, 404, 502) },
      },
    }, async (req, reply) => sendRecording(reply, await service.download(req.ctx, req.params.call_sid), 'attachment'));

    app.get('/api/recordings/:call_sid', {
      config: { auth: 'public' },
      schema: { operationId: 'readSignedRecording',
        tags, params: CallSidParams, querystring: SignedRecordingQuery,
        summary: 'A signed recording link (from the stream endpoint): no credential; Range requests answer 206, an unsatisfiable range 416; a bad or expired signature 403',
        response: {
          200: { ...binary('The recording', ['audio/wav', 'audio/mpeg']), headers: RECORDING_HEADERS },
          206: { ...binary('Part of the recording', ['audio/wav', 'audio/mpeg']), headers: { ...RECORDING_HEADERS, 'Content-Range': { type: 'string', description: 'bytes {start}-{end}/{size}' } } },
          ...errorResponses(400, 403, 404, 416, 500),
        },
      },
    }, async (req, reply) => {
      // An <audio> element on the dashboard's origin must be allowed to load it.
      reply.header('cross-origin-resource-policy', 'cross-origin').header('accept-ranges', 'bytes');
      const link = { orgId: req.query.org, callSid: req.params.call_sid, expires: req.query.expires };
      return sendRecording(reply, await service.openSigned(link, req.query.sig, req.headers.range), 'inline');
    });
  };
}
