import { Type } from 'typebox';
import { Nullable, NullableTimestamp, PathId, Timestamp } from '../../core/schemas.ts';

export const MAX_FILE_BYTES = 50 * 1024 * 1024;

export const DocumentSummary = Type.Object({
  documentation_id: Type.String({ pattern: '^doc_[a-f0-9]{12,}$' }),
  name: Type.String(),
  type: Type.Enum(['file', 'text']),
  size: Nullable(Type.Integer({ description: 'Bytes; files only' })),
  filename: Nullable(Type.String({ description: 'Original filename; files only' })),
  word_count: Nullable(Type.Integer({ description: 'Words extracted, once processed' })),
  processing_status: Type.Enum(['pending', 'processing', 'completed', 'failed']),
  page_count: Nullable(Type.Integer({ description: 'PDF files' })),
  vector_count: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'DocumentSummary' });

export const Document = Type.Object({
  ...DocumentSummary.properties,
  client_id: Type.String(),
  storage_key: Nullable(Type.String()),
  storage_uri: Nullable(Type.String({ description: 'file://... or s3://bucket/key' })),
  content_type: Nullable(Type.String({ description: 'MIME type; files only' })),
  text: Nullable(Type.String({ description: 'Text documents only' })),
  last_processed_at: NullableTimestamp,
  processing_error: Nullable(Type.String({ description: 'Why processing failed' })),
  agent_ids: Type.Array(Type.String(), { description: 'Agents the document is attached to' }),
}, { title: 'Document' });

export const CreatedDocument = Type.Object({
  documentation_id: Type.String(),
  name: Type.String(),
  type: Type.Enum(['file', 'text']),
  message_id: Type.String({ description: 'Id of the queued processing job' }),
}, { title: 'CreatedDocument' });

export const Name = Type.String({ minLength: 1, maxLength: 200 });

export const CreateTextDocumentBody = Type.Object(
  {
    name: Name,
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000_000 })),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { title: 'CreateTextDocumentBody', additionalProperties: false, description: 'JSON for text documents; multipart/form-data (name, file, agent_id) for files' },
);

export const ListDocumentsQuery = Type.Object({
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 30 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Part of the document name' })),
  types: Type.Optional(Type.Array(Type.Enum(['file', 'text']), { maxItems: 2, description: 'May be given several times' })),
  sort_by: Type.Enum(['name', 'created_at', 'updated_at', 'size'], { default: 'created_at' }),
  sort_direction: Type.Enum(['asc', 'desc'], { default: 'desc' }),
});

export const DocumentIdParams = Type.Object({ documentation_id: PathId('doc_ + 16 hex') });

export const SearchBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 2000 }),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Search only this agent's documents" })),
    top_k: Type.Integer({ minimum: 1, maximum: 50, default: 5 }),
  },
  { title: 'SearchBody', additionalProperties: false },
);

export const SearchHit = Type.Object({
  documentation_id: Type.String(),
  name: Type.String(),
  text: Type.String(),
  page: Nullable(Type.Integer()),
  score: Type.Number({ description: 'Reciprocal-rank fusion of vector and full-text ranks; higher is better' }),
}, { title: 'SearchHit' });
