import type { FastifyRequest } from 'fastify';
import { AppError, Errors, type FieldError } from '../../core/errors.ts';
import { unstorableText } from '../../core/http/input-guards.ts';
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
