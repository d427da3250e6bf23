import path from 'node:path';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { spool, TooLargeError, type SpooledFile } from '../../adapters/storage/spool.ts';
import { AppError, Errors, type FieldError } from '../../core/errors.ts';
import { unstorableText } from '../../core/http/input-guards.ts';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, MessageEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { CreatedDocument, CreateTextDocumentBody, Document, DocumentIdParams, DocumentSummary, ListDocumentsQuery, MAX_FILE_BYTES, SearchBody, SearchHit } from './schemas.ts';
import type { DocumentUpload, KnowledgeBaseService } from './service.ts';

const tags = ['Knowledge base'];

// The multipart form is checked while it streams (readDocumentUpload); its schema only documents it,
// so it carries no keyword the validator would apply to the (unparsed) body.
const MultipartDocument = {
  title: 'DocumentUpload',
  description: 'Fields: name (1-200 characters, required), file (binary: PDF, DOCX, TXT, Markdown, HTML or CSV; at most 50 MB), agent_id (optional)',
  examples: [{ name: 'Opening hours', file: '(the file, binary)', agent_id: 'agent_a1b2c3d4e5f6' }],
};
/** The form as the OpenAPI document types it, so generated clients send a FormData with a binary file. */
const DocumentedMultipartDocument = {
  ...MultipartDocument,
  type: 'object',
  required: ['name', 'file'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    file: { type: 'string', format: 'binary', description: 'PDF, DOCX, TXT, Markdown, HTML or CSV; at most 50 MB' },
    agent_id: { type: 'string', description: 'The agent the document belongs to' },
  },
};

export function knowledgeBaseRoutes(service: KnowledgeBaseService, dataDir: string): FastifyPluginAsyncTypebox {
  const tmpDir = path.join(dataDir, 'tmp');
  return async (app) => {
    await app.register(multipart, { limits: { fileSize: MAX_FILE_BYTES + 1, files: 2, fields: 10, fieldSize: 64 * 1024, parts: 20 }, throwFileSizeLimit: true });

    app.post('/api/knowledge-base', {
      config: { permission: 'kb:create', largeUpload: true, documentedBody: { 'multipart/form-data': DocumentedMultipartDocument } },
      bodyLimit: 12 * 1024 * 1024,
      schema: { operationId: 'createDocument',
        tags, headers: OrganizationHeader,
        summary: 'Create a document from a file (multipart/form-data) or a text (JSON); queues its indexing job',
        body: { content: { 'application/json': { schema: CreateTextDocumentBody }, 'multipart/form-data': { schema: MultipartDocument } } } as never,
        response: { 200: envelope(CreatedDocument), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 413, 415) },
      },
    }, async (req, reply) => {
      if (!req.isMultipart()) {
        const data = await service.createText(req.ctx, req.body as Static<typeof CreateTextDocumentBody>);
        return { success: true, message: 'Document created; indexing queued', data };
      }
      let upload;
      try {
        upload = await readDocumentUpload(req, tmpDir);
      } catch (err) {
        reply.header('connection', 'close'); // the rest of a refused upload is not read
        throw err;
      }
      try {
        const data = await service.createFile(req.ctx, upload);
        return { success: true, message: 'Document uploaded; indexing queued', data };
      } finally {
        await upload.file.discard();
      }
    });

    app.get('/api/knowledge-base', {
      config: { permission: 'kb:read' },
      schema: { operationId: 'listDocuments',
        tags, summary: 'List documents: search by name, filter by type, sort by name, created_at, updated_at or size', headers: OrganizationHeader,
        querystring: ListDocumentsQuery, response: { 200: listEnvelope(DocumentSummary), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));

    app.get('/api/knowledge-base/:documentation_id', {
      config: { permission: 'kb:read' },
      schema: { operationId: 'getDocument',
        tags, summary: 'Get the full document', headers: OrganizationHeader, params: DocumentIdParams,
        response: { 200: envelope(Document), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.documentation_id) }));

    app.delete('/api/knowledge-base/:documentation_id', {
      config: { permission: 'kb:delete' },
      schema: { operationId: 'deleteDocument',
        tags, summary: 'Delete a document with its file, chunks and vectors', headers: OrganizationHeader, params: DocumentIdParams,
        response: { 200: MessageEnvelope, ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => {
      await service.delete(req.ctx, req.params.documentation_id);
      return { success: true, message: 'Document deleted' };
    });

    app.post('/api/knowledge-base/:documentation_id/reprocess', {
      config: { permission: 'kb:update' },
      schema: { operationId: 'reprocessDocument',
        tags, summary: 'Index the document again (a new job; older jobs for it are ignored)', headers: OrganizationHeader, params: DocumentIdParams,
        response: { 200: envelope(CreatedDocument), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Reprocessing queued', data: await service.reprocess(req.ctx, req.params.documentation_id) }));

    app.post('/api/knowledge-base/search', {
      config: { permission: 'kb:read', callToken: true },
      schema: { operationId: 'searchKnowledgeBase',
        tags, summary: 'Hybrid search (vector + full text, reciprocal rank fusion) over the organization\'s or one agent\'s documents',
        headers: OrganizationHeader, body: SearchBody,
        response: { 200: envelope(Type.Array(SearchHit)), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.search(req.ctx, req.body) }));
  };
}

const FIELDS = new Set(['name', 'agent_id', 'text']);

/**
 * Reads a multipart document upload: the file streams to a temporary file as it arrives (refused
 * with 413 once past 50 MB, and removed), the fields are checked like the JSON body's.
 */
async function readDocumentUpload(request: FastifyRequest, tmpDir: string): Promise<DocumentUpload> {
  const fields: Record<string, string> = {};
  let file: { spooled: SpooledFile; filename: string } | undefined;
  const errors: FieldError[] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || file) {
          part.file.resume();
          errors.push({ path: `body.${part.fieldname}`, message: 'only one file, in the field "file"' });
          continue;
        }
        try {
          const filename = part.filename || 'upload';
          if (unstorableText(filename) || filename.length > 255) {
            part.file.resume();
            errors.push({ path: 'body.file', message: 'the file name must be 1-255 characters of valid text' });
            continue;
          }
          file = { spooled: await spool(part.file, { dir: tmpDir, maxBytes: MAX_FILE_BYTES }), filename };
        } catch (err) {
          if (err instanceof TooLargeError || (err as { statusCode?: number }).statusCode === 413) {
            throw Errors.payloadTooLarge(`The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB`);
          }
          throw err;
        }
      } else if (!FIELDS.has(part.fieldname)) {
        errors.push({ path: `body.${part.fieldname}`, message: 'unknown field' });
      } else {
        const value = String(part.value);
        const problem = unstorableText(value);
        if (problem) errors.push({ path: `body.${part.fieldname}`, message: problem });
        else fields[part.fieldname] = value;
      }
    }
    const name = fields.name?.trim() ?? '';
    if (!name || name.length > 200) errors.push({ path: 'body.name', message: 'required, 1-200 characters' });
    if (fields.text !== undefined && file) errors.push({ path: 'body', message: 'give either file or text, not both' });
    if (fields.text === undefined && !file) errors.push({ path: 'body.file', message: 'a file (or, as JSON, a text) is required' });
    if (fields.text !== undefined && !file) errors.push({ path: 'body.text', message: 'send text documents as JSON' });
    if (errors.length) throw Errors.validation('Invalid document upload', errors);
    return { name, agentId: fields.agent_id || undefined, file: file!.spooled, filename: file!.filename };
  } catch (err) {
    await file?.spooled.discard();
    if (err instanceof AppError) throw err;
    if ((err as { statusCode?: number }).statusCode === 413) throw Errors.payloadTooLarge('The upload has too many parts or fields');
    // The multipart parser's own complaints (no boundary, a body that ends mid-part...) are the client's.
    throw Errors.validation(`The multipart body is malformed: ${(err as Error).message}`, [{ path: 'body', message: 'is not well-formed multipart/form-data' }]);
  }
}
