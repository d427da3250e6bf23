import { Ajv } from 'ajv';
import { Type } from 'typebox';
import { Errors } from '../../core/errors.ts';
import { Nullable } from '../../core/schemas.ts';

/** The largest structured_data_schema, as JSON (extensions.md §13). */
export const STRUCTURED_DATA_SCHEMA_MAX_BYTES = 16 * 1024;

/** An agent's post-call analysis settings (extensions.md §13): part of its versions like any field. */
export const AnalysisSettings = Type.Object({
  enabled: Type.Boolean(),
  summary_prompt: Type.Optional(Nullable(Type.String({ maxLength: 4000, description: 'How to summarize the call (default: a few sentences)' }))),
  success_criteria: Type.Optional(Nullable(Type.String({ maxLength: 4000, description: 'What makes the call a success, as the model judges it' }))),
  structured_data_schema: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown(), {
    description: `A JSON Schema (draft-07) of type object, at most ${STRUCTURED_DATA_SCHEMA_MAX_BYTES} bytes as JSON: what to extract from the call`,
  }))),
  llm_integration_id: Type.Optional(Nullable(Type.String({ pattern: '^intg_[a-f0-9]{12}$', description: 'The llm integration asked; null: the agent\'s' }))),
}, { title: 'AnalysisSettings', additionalProperties: false });

// One compiler for checking schemas at save: its cache keeps no user schema (each is removed after).
const ajv = new Ajv({ strict: false, allErrors: false });
const PATH = 'body.analysis.structured_data_schema';

/**
 * Refuses (400 naming the field) a structured_data_schema that is too large, not a valid JSON
 * Schema, or not of type object (its top-level keys are what calls are filtered by).
 */
export function checkAnalysisSettings(analysis: { structured_data_schema?: Record<string, unknown> | null } | null | undefined): void {
  const schema = analysis?.structured_data_schema;
  if (schema === undefined || schema === null) return;
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > STRUCTURED_DATA_SCHEMA_MAX_BYTES) {
    throw Errors.validation('structured_data_schema is too large', [{ path: PATH, message: `must be at most ${STRUCTURED_DATA_SCHEMA_MAX_BYTES} bytes as JSON (is ${bytes})` }]);
  }
  if (schema.type !== 'object') throw Errors.validation('structured_data_schema must describe an object', [{ path: PATH, message: 'must have type "object"' }]);
  if (!ajv.validateSchema(schema)) {
    throw Errors.validation('structured_data_schema is not a valid JSON Schema', [{ path: PATH, message: ajv.errorsText(ajv.errors, { dataVar: 'schema' }).slice(0, 500) }]);
  }
  try {
    ajv.compile(schema);
  } catch (err) {
    throw Errors.validation('structured_data_schema cannot be compiled', [{ path: PATH, message: (err as Error).message.slice(0, 500) }]);
  } finally {
    ajv.removeSchema(schema);
  }
}
