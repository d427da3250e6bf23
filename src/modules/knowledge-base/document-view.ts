import type { Static } from 'typebox';
import { iso } from '../../core/schemas.ts';
import type { DocumentRow } from './repository.ts';
import type { Document, DocumentSummary } from './schemas.ts';

type SummaryView = Static<typeof DocumentSummary>;
type DocumentView = Static<typeof Document>;

export function toSummary(row: DocumentRow): SummaryView {
  const isFile = row.type === 'file';
  return {
    documentation_id: row.id,
    name: row.name,
    type: row.type as SummaryView['type'],
    size: isFile ? row.sizeBytes : null,
    filename: isFile ? row.filename : null,
    word_count: row.wordCount,
    processing_status: row.processingStatus as SummaryView['processing_status'],
    page_count: row.pageCount,
    vector_count: row.vectorCount,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The whole document as `GET /api/knowledge-base/{id}` (and the document.* events) show it. */
export function toDocument(row: DocumentRow, agentIds: string[]): DocumentView {
  return {
    ...toSummary(row),
    client_id: row.clientId,
    storage_key: row.storageKey,
    storage_uri: row.storageUri,
    content_type: row.contentType,
    text: row.type === 'text' ? row.text : null,
    last_processed_at: iso(row.lastProcessedAt),
    processing_error: row.processingError,
    agent_ids: agentIds,
  };
}
