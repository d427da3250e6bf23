import type { FastifyRequest } from 'fastify';
import { Errors, type FieldError } from '../../core/errors.ts';
import { spool, TooLargeError, type SpooledFile } from '../../adapters/storage/spool.ts';
import { MAX_FILE_BYTES } from './schemas.ts';
import type { DocumentUpload } from './service.ts';


const FIELDS = new Set(['name', 'agent_id', 'text']);

/**
 * Reads a multipart document upload: the file streams to a temporary file as it arrives (refused
 * with 413 once past 50 MB, and removed), the fields are checked like the JSON body's.
 */
export async function readDocumentUpload(request: FastifyRequest, tmpDir: string): Promise<DocumentUpload> {
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
          file = { spooled: await spool(part.file, { dir: tmpDir, maxBytes: MAX_FILE_BYTES }), filename: part.filename || 'upload' };
        } catch (err) {
          if (err instanceof TooLargeError || (err as { statusCode?: number }).statusCode === 413) {
            throw Errors.payloadTooLarge(`The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB`);
          }
          throw err;
        }
      } else if (!FIELDS.has(part.fieldname)) {
        errors.push({ path: `body.${part.fieldname}`, message: 'unknown field' });
      } else {
        fields[part.fieldname] = String(part.value);
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
    throw err;
  }
}
