import { and, asc, count, eq, ilike, inArray, sql, type SQL } from 'drizzle-orm';
import { orgKeyset, type KeysetPosition } from '../../db/keyset.ts';
import type { Executor } from '../../db/database.ts';
import { agentDocuments, documentChunks, documents } from '../../db/schema/index.ts';

export type DocumentRow = typeof documents.$inferSelect;
export type NewDocumentRow = Omit<typeof documents.$inferInsert, 'clientId'>;

export type SortBy = 'name' | 'created_at' | 'updated_at' | 'size';
export interface DocumentFilter {
  search?: string;
  types?: Array<'file' | 'text'>;
}
export interface SortOrder {
  by: SortBy;
  direction: 'asc' | 'desc';
}

const SORT_COLUMNS = { name: documents.name, created_at: documents.createdAt, updated_at: documents.updatedAt, size: documents.sizeBytes };

/** The position a page continues after: the sort value of the previous page's last row, and its id. */
export type DocumentPosition = KeysetPosition;

export function sortValueOf(row: DocumentRow, by: SortBy): string | number {
  if (by === 'name') return row.name;
  if (by === 'size') return row.sizeBytes;
  return (by === 'created_at' ? row.createdAt : row.updatedAt).toISOString();
}

export interface ChunkInput {
  text: string;
  page: number | null;
  embedding: number[];
}

export interface ChunkHit {
  documentation_id: string;
  name: string;
  text: string;
  page: number | null;
  score: number;
}

/** How many full-text matches are ranked at most (see search). */
export const FULL_TEXT_POOL = 500;
/**
 * From this expected share of matching chunks up, a query's pool is read from the chunks, not the
 * GIN index (see search): 500 matches are then found within about 17,000 chunks.
 */
export const COMMON_QUERY_SHARE = 0.03;

/** Documents, their chunks and their agents, for one organization at a time. */
export class DocumentRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, row: NewDocumentRow): Promise<DocumentRow> {
    const [created] = await this.#db.insert(documents).values({ ...row, clientId: orgId }).returning();
    return created!;
  }

  async findById(orgId: string, id: string): Promise<DocumentRow | undefined> {
    const [row] = await this.#db.select().from(documents).where(and(eq(documents.clientId, orgId), eq(documents.id, id)));
    return row;
  }

  async list(orgId: string, filter: DocumentFilter, order: SortOrder, limit: number, after?: DocumentPosition): Promise<DocumentRow[]> {
    const page = orgKeyset({ clientId: documents.clientId, sort: SORT_COLUMNS[order.by], id: documents.id }, orgId, {
      direction: order.direction, after, filter: this.#filter(orgId, filter),
    });
    return this.#db.select().from(documents).where(page.where).orderBy(...page.orderBy).limit(limit);
  }

  async count(orgId: string, filter: DocumentFilter): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(documents).where(this.#filter(orgId, filter));
    return row?.n ?? 0;
  }

  async update(orgId: string, id: string, changes: Partial<NewDocumentRow>, onlyRevision?: number): Promise<DocumentRow | undefined> {
    const [row] = await this.#db.update(documents)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(documents.clientId, orgId), eq(documents.id, id), onlyRevision === undefined ? undefined : eq(documents.revision, onlyRevision)))
      .returning();
    return row;
  }

  /** A new revision to process: older jobs still queued will find they are stale. */
  async bumpRevision(orgId: string, id: string, messageId: string): Promise<DocumentRow | undefined> {
    const [row] = await this.#db.update(documents)
      .set({ revision: sql`${documents.revision} + 1`, processingStatus: 'pending', processingError: null, messageId, updatedAt: new Date() })
      .where(and(eq(documents.clientId, orgId), eq(documents.id, id)))
      .returning();
    return row;
  }

  async delete(orgId: string, id: string): Promise<DocumentRow | undefined> {
    const [row] = await this.#db.delete(documents).where(and(eq(documents.clientId, orgId), eq(documents.id, id))).returning();
    return row;
  }

  /** Replaces the document's chunks whole (run inside the transaction that marks it completed). */
  async replaceChunks(orgId: string, documentId: string, chunks: ChunkInput[]): Promise<void> {
    await this.#db.delete(documentChunks).where(and(eq(documentChunks.clientId, orgId), eq(documentChunks.documentId, documentId)));
    for (let i = 0; i < chunks.length; i += 200) {
      await this.#db.insert(documentChunks).values(chunks.slice(i, i + 200).map((c, j) => ({
        documentId, clientId: orgId, chunkIndex: i + j, page: c.page, text: c.text, embedding: c.embedding,
      })));
    }
  }

  async attach(orgId: string, agentId: string, documentId: string): Promise<void> {
    await this.#db.insert(agentDocuments).values({ clientId: orgId, agentId, documentId }).onConflictDoNothing();
  }

  async agentIds(orgId: string, documentId: string): Promise<string[]> {
    const rows = await this.#db.select({ id: agentDocuments.agentId }).from(agentDocuments)
      .where(and(eq(agentDocuments.clientId, orgId), eq(agentDocuments.documentId, documentId)))
      .orderBy(asc(agentDocuments.createdAt), asc(agentDocuments.agentId));
    return rows.map((r) => r.id);
  }

  /**
   * Hybrid search: the nearest chunks by cosine distance and the best full-text matches, each
   * ranked, fused by reciprocal rank (score = sum of 1 / (60 + rank)). The full-text side ranks at
   * most FULL_TEXT_POOL matching chunks. A query of common words matches much of a large index, and
   * ranking every match took 0.7-3 s at 1M chunks (issue 33); past the pool, the first matches found
   * are ranked, and the vector side, which is never cut, carries the meaning.
   *
   * The tsquery is written inline where it is used, not as a CTE: the planner folds the call on the
   * query's text into a constant and estimates from the column's statistics how many chunks match
   * (behind a CTE it guessed 0.5 % and always took the GIN index). Each examined chunk's tsvector is
   * read from its row (storage MAIN, migration 0032).
   *
   * How the pool is read is chosen here, not left to the planner: it prices the GIN index's bitmap,
   * which holds every match before the pool's LIMIT applies, far below what intersecting long
   * posting lists costs. Two words in 6 % of 1M chunks: 35-50 ms by the bitmap, which it chose,
   * against 11 ms reading the organization's chunks until 500 match (bench/kb-search.ts). So a
   * query whose words are all common (COMMON_QUERY_SHARE of the chunks expected to match, from the
   * column's statistics) is pooled by reading chunks, its match written in a form no index serves
   * (`IS TRUE`, estimated the same); any rarer query keeps the index, which finds its few matches.
   */
  async search(orgId: string, query: { text: string; embedding: number[]; agentId?: string; topK: number }): Promise<ChunkHit[]> {
    const candidates = Math.max(query.topK * 4, 40);
    const vector = `[${query.embedding.join(',')}]`;
    const scope = query.agentId
      ? sql`AND c.document_id IN (SELECT document_id FROM agent_documents WHERE client_id = ${orgId} AND agent_id = ${query.agentId})`
      : sql``;
    const tsquery = sql`websearch_to_tsquery('simple', ${query.text})`;
    const matches = (await this.#expectedShare(query.text)) >= COMMON_QUERY_SHARE
      ? sql`(c.search_vector @@ ${tsquery}) IS TRUE`
      : sql`c.search_vector @@ ${tsquery}`;
    const result = await this.#db.execute<{ documentation_id: string; name: string; text: string; page: number | null; score: number }>(sql`
      WITH nearest AS (
        SELECT document_id, chunk_index, row_number() OVER () AS rank FROM (
          SELECT c.document_id, c.chunk_index FROM document_chunks c
          WHERE c.client_id = ${orgId} ${scope}
          ORDER BY c.embedding <=> ${vector}::vector LIMIT ${candidates}
        ) v
      ),
      pool AS MATERIALIZED (
        SELECT c.document_id, c.chunk_index, c.search_vector FROM document_chunks c
        WHERE c.client_id = ${orgId} ${scope} AND ${matches}
        LIMIT ${FULL_TEXT_POOL}
      ),
      matching AS (
        SELECT document_id, chunk_index, row_number() OVER () AS rank FROM (
          SELECT p.document_id, p.chunk_index FROM pool p
          ORDER BY ts_rank_cd(p.search_vector, ${tsquery}) DESC, p.document_id, p.chunk_index LIMIT ${candidates}
        ) m
      ),
      fused AS (
        SELECT document_id, chunk_index, sum(1.0 / (60 + rank)) AS score
        FROM (SELECT * FROM nearest UNION ALL SELECT * FROM matching) ranked
        GROUP BY document_id, chunk_index
      )
      SELECT f.document_id AS documentation_id, d.name, c.text, c.page, f.score::float8 AS score
      FROM fused f
      JOIN document_chunks c ON c.document_id = f.document_id AND c.chunk_index = f.chunk_index
      JOIN documents d ON d.id = f.document_id AND d.client_id = ${orgId}
      ORDER BY f.score DESC, f.document_id, f.chunk_index
      LIMIT ${query.topK}`);
    return result.rows.map((r) => ({ ...r, score: Number(r.score) }));
  }

  /**
   * The share of chunks expected to hold every word of `text`: the product of the words' shares in
   * the column's statistics (the planner's own assumption of independence), 0 when a word is not
   * among its most common. Tokenized by PostgreSQL, as the search is ('simple': no stemming).
   */
  async #expectedShare(text: string): Promise<number> {
    const result = await this.#db.execute<{ share: number | null }>(sql`
      WITH common AS (
        SELECT unnest(most_common_elems::text::text[]) AS lexeme, unnest(most_common_elem_freqs) AS share
        FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'document_chunks' AND attname = 'search_vector'
      )
      SELECT CASE WHEN count(*) = 0 OR bool_or(c.share IS NULL) THEN 0 ELSE exp(sum(ln(c.share))) END::float8 AS share
      FROM unnest(tsvector_to_array(to_tsvector('simple', ${text}))) AS q(lexeme) LEFT JOIN common c USING (lexeme)`);
    return Number(result.rows[0]?.share ?? 0);
  }

  #filter(orgId: string, filter: DocumentFilter): SQL | undefined {
    const escaped = filter.search?.replace(/[\\%_]/g, (c) => `\\${c}`);
    return and(
      eq(documents.clientId, orgId),
      escaped ? ilike(documents.name, `%${escaped}%`) : undefined,
      filter.types?.length ? inArray(documents.type, filter.types) : undefined,
    );
  }
}
