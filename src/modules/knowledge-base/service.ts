import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Static } from 'typebox';
import { type Database } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { decodeCursor, decodeIntegerCursor, decodeTimeCursor, toPage, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newDocumentId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import type { Embedder } from '../../adapters/embedding/embedder.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { AgentService } from '../agents/service.ts';
import { detectFormat, FORMATS } from './file-types.ts';
import { toDocument, toSummary } from './document-view.ts';
import { INDEX_DOCUMENT } from './jobs.ts';
import type { SpooledFile } from '../../adapters/storage/spool.ts';
import { DocumentRepository, sortValueOf, type DocumentPosition, type DocumentRow, type NewDocumentRow, type SortBy } from './repository.ts';
import type { CreatedDocument, CreateTextDocumentBody, Document, DocumentSummary, ListDocumentsQuery, SearchHit } from './schemas.ts';
import type { AuditService } from '../audit/service.ts';
import { clientTransaction } from '../../db/unit-of-work.ts';

type SummaryView = Static<typeof DocumentSummary>;
type DocumentView = Static<typeof Document>;
type Created = Static<typeof CreatedDocument>;

/** A file upload, already spooled to disk under the size limit (see readDocumentUpload in routes.ts). */
export interface DocumentUpload {
  name: string;
  agentId: string | undefined;
  file: SpooledFile;
  filename: string;
}

/** A filename safe as the last part of an object key. */
function keyName(filename: string): string {
  return path.basename(filename).replace(/[^A-Za-z0-9._-]+/g, '_').slice(-100) || 'file';
}

export interface KnowledgeBaseDeps {
  database: Database;
  queue: JobQueue;
  store: ObjectStore;
  embedder: Embedder;
  agents: AgentService;
  audit: Pick<AuditService, 'change' | 'record'>;
}

const audited = (action: string, id: string, fields: string[]) => ({ action, resourceType: 'document', resourceId: id, changedFields: fields });

export class KnowledgeBaseService {
  readonly #database: Database;
  readonly #queue: JobQueue;
  readonly #store: ObjectStore;
  readonly #embedder: Embedder;
  readonly #agents: AgentService;
  readonly #audit: KnowledgeBaseDeps['audit'];
  constructor(deps: KnowledgeBaseDeps) {
    this.#audit = deps.audit;
    this.#database = deps.database;
    this.#queue = deps.queue;
    this.#store = deps.store;
    this.#embedder = deps.embedder;
    this.#agents = deps.agents;
  }

  /** The JSON form: exactly one of file and text, so without a file the text is required. */
  async createText(ctx: RequestContext, input: Static<typeof CreateTextDocumentBody>): Promise<Created> {
    if (input.text === undefined) {
      throw Errors.validation('Give either a file (multipart) or a text', [{ path: 'body.text', message: 'required when no file is uploaded' }]);
    }
    await this.#checkAgent(ctx, input.agent_id);
    return this.#create(ctx, {
      id: newDocumentId(), name: input.name, type: 'text', format: 'txt', text: input.text, sizeBytes: Buffer.byteLength(input.text),
    }, input.agent_id);
  }

  /**
   * The file is already spooled; its type must be one the indexer reads (extension and first bytes
   * agreeing). It moves to the object store, then the row and job commit together.
   */
  async createFile(ctx: RequestContext, input: DocumentUpload): Promise<Created> {
    const format = detectFormat(input.filename, input.file.head);
    if (!format) throw Errors.unsupportedMediaType('Unsupported file type: upload PDF, DOCX, TXT, Markdown, HTML or CSV (the content must match the extension)');
    await this.#checkAgent(ctx, input.agentId);
    const id = newDocumentId();
    const key = `${ctx.orgId}/kb/${id}/${keyName(input.filename)}`;
    const stored = await this.#store.putFile(key, input.file.path, FORMATS[format]);
    try {
      return await this.#create(ctx, {
        id, name: input.name, type: 'file', format, filename: input.filename, contentType: FORMATS[format],
        sizeBytes: stored.size, storageKey: stored.key, storageUri: stored.uri,
      }, input.agentId);
    } catch (err) {
      await this.#store.delete(key).catch(() => {});
      throw err;
    }
  }

  async list(ctx: RequestContext, query: Static<typeof ListDocumentsQuery>): Promise<Page<SummaryView>> {
    const order = { by: query.sort_by as SortBy, direction: query.sort_direction as 'asc' | 'desc' };
    const filter = { search: query.search, types: query.types as Array<'file' | 'text'> | undefined };
    const after = query.cursor ? this.#position(query.cursor, order.by) : undefined;
    const repo = new DocumentRepository(this.#database.db);
    const [rows, total] = await Promise.all([repo.list(ctx.orgId, filter, order, query.page_size + 1, after), repo.count(ctx.orgId, filter)]);
    return toPage(rows, query.page_size, (r) => ({ value: sortValueOf(r, order.by), id: r.id }), toSummary, total);
  }

  async get(ctx: RequestContext, id: string): Promise<DocumentView> {
    const repo = new DocumentRepository(this.#database.db);
    const row = await repo.findById(ctx.orgId, id);
    if (!row) throw Errors.notFound('Document');
    return toDocument(row, await repo.agentIds(ctx.orgId, id));
  }

  /** The row goes first (chunks and agent links with it), then the file. */
  async delete(ctx: RequestContext, id: string): Promise<void> {
    const row = await this.#audit.change(ctx, async (tx) => {
      const deleted = await new DocumentRepository(tx).delete(ctx.orgId, id);
      if (!deleted) throw Errors.notFound('Document');
      return deleted;
    }, () => audited('document.delete', id, []));
    if (row.storageKey) await this.#store.delete(row.storageKey);
  }

  async reprocess(ctx: RequestContext, id: string): Promise<Created> {
    return clientTransaction(this.#database, async (tx, client) => {
      const messageId = randomUUID();
      const row = await new DocumentRepository(tx).bumpRevision(ctx.orgId, id, messageId);
      if (!row) throw Errors.notFound('Document');
      await this.#queue.send(INDEX_DOCUMENT, { clientId: ctx.orgId, documentId: id, revision: row.revision }, { id: messageId, within: client });
      await this.#audit.record(tx, ctx, audited('document.reprocess', id, []));
      return { documentation_id: row.id, name: row.name, type: row.type as Created['type'], message_id: messageId };
    });
  }

  async search(ctx: RequestContext, given: { query: string; agent_id?: string; top_k: number }): Promise<Array<Static<typeof SearchHit>>> {
    // A call token searches its agent's documents only (extensions.md §10).
    if (ctx.call && given.agent_id !== undefined && given.agent_id !== ctx.call.agentId) throw Errors.scopeMissing("another agent's documents");
    const input = ctx.call ? { ...given, agent_id: ctx.call.agentId } : given;
    await this.#checkAgent(ctx, input.agent_id);
    const [embedding] = await this.#embedder.embed([input.query]);
    return new DocumentRepository(this.#database.db).search(ctx.orgId, { text: input.query, embedding: embedding!, agentId: input.agent_id, topK: input.top_k });
  }

  async #create(ctx: RequestContext, row: NewDocumentRow, agentId: string | undefined): Promise<Created> {
    return clientTransaction(this.#database, async (tx, client) => {
      const repo = new DocumentRepository(tx);
      const messageId = randomUUID();
      const created = await repo.insert(ctx.orgId, { ...row, messageId });
      if (agentId) {
        await this.#agents.requireAgent(ctx.orgId, agentId, { within: tx }); // it may have been deleted meanwhile
        await repo.attach(ctx.orgId, agentId, created.id);
      }
      await this.#queue.send(INDEX_DOCUMENT, { clientId: ctx.orgId, documentId: created.id, revision: created.revision }, { id: messageId, within: client });
      await this.#audit.record(tx, ctx, audited('document.create', created.id, ['name', row.type === 'file' ? 'file' : 'text', ...(agentId ? ['agent_id'] : [])]));
      return { documentation_id: created.id, name: created.name, type: created.type as Created['type'], message_id: messageId };
    });
  }

  async #checkAgent(ctx: RequestContext, agentId: string | undefined): Promise<void> {
    if (agentId) await this.#agents.requireAgent(ctx.orgId, agentId);
  }

  #position(cursor: string, by: SortBy): DocumentPosition {
    if (by === 'created_at' || by === 'updated_at') {
      const { at, id } = decodeTimeCursor(cursor);
      return { value: at, id };
    }
    if (by === 'size') return decodeIntegerCursor(cursor);
    const { value, id } = decodeCursor(cursor);
    if (typeof value !== 'string') throw Errors.invalidCursor();
    return { value, id };
  }
}
