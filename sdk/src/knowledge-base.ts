import type { BodyOf, QueryOf, Schemas } from './resources.ts';
import { paginate, type Page } from './pagination.ts';
import { ensureOk, unwrap, type ApiClient } from './transport.ts';
import { fileNameOf, multipartStream, toStream, type FileSource } from './uploads.ts';

export class KnowledgeBase {
  private readonly api: ApiClient;
  private readonly send: (request: Request) => Promise<Response>;
  private readonly baseUrl: string;
  constructor(api: ApiClient, send: (request: Request) => Promise<Response>, baseUrl: string) {
    this.api = api;
    this.send = send;
    this.baseUrl = baseUrl;
  }

  /** A document from text. */
  async createText(body: BodyOf<'createDocument'>) { return (await unwrap(this.api.POST('/api/knowledge-base', { body }))).data; }

  /**
   * A document from a file (PDF, DOCX, TXT, Markdown, HTML, CSV): a path, a Blob or a stream, sent as
   * multipart/form-data while it is read. Indexing is queued; `get` shows its progress.
   */
  async upload(input: { name: string; file: FileSource; filename?: string; contentType?: string; agentId?: string }) {
    const { body, contentType } = multipartStream(
      { name: input.name, agent_id: input.agentId },
      { name: fileNameOf(input.file, input.filename), contentType: input.contentType ?? 'application/octet-stream', stream: toStream(input.file) },
    );
    const request = new Request(`${this.baseUrl}/api/knowledge-base`, {
      method: 'POST', body, headers: { 'content-type': contentType, 'x-switchboard-stream': '1' }, duplex: 'half',
    } as RequestInit);
    const response = await ensureOk(await this.send(request));
    return ((await response.json()) as Schemas['CreatedDocumentResponse']).data;
  }

  list(query: Partial<Omit<QueryOf<'listDocuments'>, 'cursor'>> = {}) {
    return paginate<Schemas['DocumentSummary']>((cursor) =>
      unwrap(this.api.GET('/api/knowledge-base', { params: { query: { ...query, cursor } as never } })) as Promise<Page<Schemas['DocumentSummary']>>);
  }

  async get(id: string) { return (await unwrap(this.api.GET('/api/knowledge-base/{documentation_id}', { params: { path: { documentation_id: id } } }))).data; }
  async delete(id: string) { await unwrap(this.api.DELETE('/api/knowledge-base/{documentation_id}', { params: { path: { documentation_id: id } } })); }
  async reprocess(id: string) { return (await unwrap(this.api.POST('/api/knowledge-base/{documentation_id}/reprocess', { params: { path: { documentation_id: id } } }))).data; }
  /** The chunks nearest the query (vector and full text, fused). */
  async search(body: BodyOf<'searchKnowledgeBase'>) { return (await unwrap(this.api.POST('/api/knowledge-base/search', { body }))).data; }

  /** Waits until indexing ends (`completed` or `failed`), polling every `intervalMs`. */
  async waitForIndexing(id: string, options: { timeoutMs?: number; intervalMs?: number } = {}) {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const document = await this.get(id);
      if (document.processing_status === 'completed' || document.processing_status === 'failed') return document;
      if (Date.now() > deadline) throw new Error(`Document ${id} is still ${document.processing_status}`);
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 250));
    }
  }
}
