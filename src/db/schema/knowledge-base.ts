import { sql } from 'drizzle-orm';
import { bigint, customType, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex, vector } from 'drizzle-orm/pg-core';
import { clientId, createdAt, updatedAt } from './columns.ts';
import { agents } from './configuration.ts';

/** Dimensions of every stored embedding (the HNSW index needs one fixed size). */
export const EMBEDDING_DIMENSIONS = 256;

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

export const documents = pgTable(
  'documents',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    name: text('name').notNull(),
    /** `file` or `text`. */
    type: text('type').notNull(),
    /** pdf, docx, txt, md, html, csv: what the extractor reads. */
    format: text('format').notNull(),
    filename: text('filename'),
    contentType: text('content_type'),
    /** Bytes of the file, or of the text (UTF-8) for text documents; sorts `size`. */
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    storageKey: text('storage_key'),
    storageUri: text('storage_uri'),
    text: text('text'),
    processingStatus: text('processing_status').notNull().default('pending'),
    processingError: text('processing_error'),
    /** Bumped by every (re)processing request; a job for an older revision does nothing. */
    revision: integer('revision').notNull().default(1),
    messageId: text('message_id'),
    pageCount: integer('page_count'),
    wordCount: integer('word_count'),
    vectorCount: integer('vector_count').notNull().default(0),
    lastProcessedAt: timestamp('last_processed_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('documents_client_created_idx').on(t.clientId, t.createdAt, t.id),
    index('documents_client_updated_idx').on(t.clientId, t.updatedAt, t.id),
    index('documents_client_name_idx').on(t.clientId, t.name, t.id),
    index('documents_client_size_idx').on(t.clientId, t.sizeBytes, t.id),
    index('documents_name_trgm_idx').using('gin', sql`${t.name} gin_trgm_ops`),
  ],
);

export const documentChunks = pgTable(
  'document_chunks',
  {
    documentId: text('document_id').notNull().references(() => documents.id, { onDelete: 'cascade' }),
    chunkIndex: integer('chunk_index').notNull(),
    clientId: clientId(),
    page: integer('page'),
    text: text('text').notNull(),
    embedding: vector('embedding', { dimensions: EMBEDDING_DIMENSIONS }).notNull(),
    searchVector: tsvector('search_vector').generatedAlwaysAs(sql`to_tsvector('simple', text)`),
  },
  (t) => [
    primaryKey({ columns: [t.documentId, t.chunkIndex] }),
    index('document_chunks_client_idx').on(t.clientId),
    index('document_chunks_embedding_idx').using('hnsw', t.embedding.op('vector_cosine_ops')),
    index('document_chunks_search_idx').using('gin', t.searchVector),
  ],
);

export const agentDocuments = pgTable(
  'agent_documents',
  {
    agentId: text('agent_id').notNull().references(() => agents.id, { onDelete: 'cascade' }),
    documentId: text('document_id').notNull().references(() => documents.id, { onDelete: 'cascade' }),
    clientId: clientId(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.documentId] }), uniqueIndex('agent_documents_document_idx').on(t.documentId, t.agentId)],
);
