import { Type } from 'typebox';
import { Nullable, NullableTimestamp, PathId, Timestamp } from '../../../core/schemas.ts';
import { CallFilterFields, metadataFilterOptions } from '../schemas.ts';

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export const EXPORT_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** extensions.md §4: the format, the list's filters (the same names, `metadata.<key>` included) and whether transcripts go along. */
export const CreateCallExportBody = Type.Object(
  {
    format: Type.Enum([...EXPORT_FORMATS], { description: 'csv (RFC 4180, UTF-8, header row) or jsonl (one JSON object a line)' }),
    include_transcript: Type.Boolean({ default: false, description: 'Add each call\'s transcript (CSV: its turns as JSON text in one column)' }),
    ...CallFilterFields,
  },
  { title: 'CreateCallExportBody', additionalProperties: false, ...metadataFilterOptions(2 + Object.keys(CallFilterFields).length) },
);

export const CallExport = Type.Object({
  export_id: Type.String({ description: '`exp_` + 12 hex' }),
  status: Type.Enum([...EXPORT_STATUSES]),
  format: Type.Enum([...EXPORT_FORMATS]),
  include_transcript: Type.Boolean(),
  row_count: Nullable(Type.Integer({ description: 'Calls in the file, once completed' })),
  bytes: Nullable(Type.Integer({ description: 'Size of the file, once completed' })),
  download_url: Nullable(Type.String({ description: 'Once completed: a signed link to the file, valid 1 hour from this response' })),
  error: Nullable(Type.String()),
  created_at: Timestamp,
  completed_at: NullableTimestamp,
  expires_at: { ...Timestamp, description: 'When the export and its file are deleted (7 days after creation)' },
}, { title: 'CallExport' });

export const ExportIdParams = Type.Object({ export_id: PathId('exp_ + 12 hex') });

export const SignedExportQuery = Type.Object({
  org: Type.String({ minLength: 1, maxLength: 64 }),
  expires: Type.String({ pattern: '^[1-9][0-9]{0,12}$', description: 'Unix seconds, exactly as in the signed link' }),
  sig: Type.String({ pattern: '^[A-Za-z0-9_-]{16,128}$' }),
});
