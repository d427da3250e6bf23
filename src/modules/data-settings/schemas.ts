import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../core/schemas.ts';

const RetentionDays = (what: string) =>
  Nullable(Type.Integer({ minimum: 1, maximum: 3650, description: `Days ${what} is kept after the call; null keeps it` }));

export const DataSettings = Type.Object({
  transcript_retention_days: RetentionDays('a transcript'),
  recording_retention_days: RetentionDays('a recording'),
  redact_pii: Type.Boolean({ description: 'Transcript text is stored with e-mail addresses, phone numbers, card numbers, SSNs and IBANs replaced' }),
  updated_at: Nullable(Timestamp),
}, { title: 'DataSettings' });

export const UpdateDataSettingsBody = Type.Object({
  transcript_retention_days: Type.Optional(RetentionDays('a transcript')),
  recording_retention_days: Type.Optional(RetentionDays('a recording')),
  redact_pii: Type.Optional(Type.Boolean()),
}, { title: 'UpdateDataSettingsBody', additionalProperties: false, minProperties: 1 });
