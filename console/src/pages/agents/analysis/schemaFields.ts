/** The structured-data fields the builder edits, and the JSON Schema (extensions.md §13) they make. */

export const FIELD_TYPES = ['string', 'number', 'boolean', 'enum'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export interface DataField { name: string; type: FieldType; description: string; required: boolean; values: string[] }

export const newField = (): DataField => ({ name: '', type: 'string', description: '', required: false, values: [] });

/** An object schema with one property per field (an enum is a string among its values) and the required ones listed. */
export function schemaOf(fields: DataField[]): Record<string, unknown> | null {
  if (fields.length === 0) return null;
  const properties = Object.fromEntries(fields.map((f) => [f.name.trim(), {
    ...(f.type === 'enum' ? { type: 'string', enum: f.values } : { type: f.type }),
    ...(f.description.trim() ? { description: f.description.trim() } : {}),
  }]));
  const required = fields.filter((f) => f.required).map((f) => f.name.trim());
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

/**
 * The fields of a saved schema, or null when it holds more than the builder makes (nested objects,
 * arrays, integers, patterns…), which is then edited as JSON rather than lost.
 */
export function fieldsOf(schema: Record<string, unknown> | null | undefined): DataField[] | null {
  if (!schema) return [];
  const { type, properties = {}, required = [], ...rest } = schema as { type?: unknown; properties?: Record<string, Record<string, unknown>>; required?: string[] };
  if (type !== 'object' || Object.keys(rest).length > 0 || typeof properties !== 'object' || !Array.isArray(required)) return null;
  const fields: DataField[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const { type: kind, enum: values, description, ...others } = property as { type?: unknown; enum?: unknown; description?: unknown };
    if (Object.keys(others).length > 0 || (description !== undefined && typeof description !== 'string')) return null;
    const base = { name, description: (description as string | undefined) ?? '', required: required.includes(name) };
    if (kind === 'string' && Array.isArray(values) && values.every((v) => typeof v === 'string')) fields.push({ ...base, type: 'enum', values: values as string[] });
    else if ((kind === 'string' || kind === 'number' || kind === 'boolean') && values === undefined) fields.push({ ...base, type: kind, values: [] });
    else return null;
  }
  return fields;
}

/** Why the fields cannot make a schema yet: names present, distinct and simple, enums with values. */
export function fieldProblems(fields: DataField[]): string[] {
  const problems: string[] = [];
  const names = fields.map((f) => f.name.trim());
  if (names.some((n) => n === '')) problems.push('Every field needs a name.');
  if (names.some((n) => n !== '' && !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(n))) problems.push('Names are letters, digits and _ (not starting with a digit), up to 64.');
  if (new Set(names).size !== names.length) problems.push('Each name may be used once.');
  if (fields.some((f) => f.type === 'enum' && f.values.length === 0)) problems.push('A field of type enum needs its values.');
  return problems;
}

/** JSON text with every object's keys sorted: the stored schema comes back in the database's key order, not the builder's. */
export function canonicalJson(value: unknown): string {
  const sorted = (v: unknown): unknown => (Array.isArray(v) ? v.map(sorted)
    : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])])) : v);
  return JSON.stringify(sorted(value));
}
