/**
 * An example for a schema of the OpenAPI document that has none of its own: every value valid for
 * its schema (enum, pattern, bounds, required fields), plausible where the property's name says what
 * it is. Schemas whose meaning an example should show are better given one where they are defined.
 */
type Schema = Record<string, unknown>;

const AT = '2026-11-22T10:15:00.000Z';

/** Text that says what a property is, by its name. */
const BY_NAME: Array<[RegExp, string]> = [
  [/email/, 'ada@example.com'], [/(^|_)url$|webhook/, 'https://example.com/hooks/lookup'], [/number$/, '+14155550100'],
  [/agent_name/, 'Front desk'], [/tool_name/, 'lookup_order'], [/description|summary/, 'Looks up an order by its number'],
  [/system_prompt/, 'You are the front desk of Acme Dental. Be brief.'], [/first_message/, 'Hello, how can I help?'],
  [/prompt|text|detail|message/, 'Our opening hours are 8 to 18 on weekdays.'], [/query/, 'opening hours'], [/name/, 'Acme'],
  [/timezone/, 'Europe/Berlin'], [/language/, 'EN'], [/model/, 'gpt-4o-mini'], [/reason/, 'Support credit'],
  [/date$/, '2026-11-22'], [/_time$|_at$/, AT], [/cursor/, 'WyIyMDI2LTExLTIyVDEwOjE1OjAwLjAwMFoiLCJhZ2VudF9hMWIyYzNkNGU1ZjYiXQ'],
];

/** Strings tried, in order, against a pattern the name did not satisfy. */
function candidates(pattern: string): string[] {
  const prefix = /^\^([a-z]+)_/.exec(pattern)?.[1];
  const ids = prefix ? [`${prefix}_a1b2c3d4e5f6`, `${prefix}_a1b2c3d4e5f6a7b8`, `${prefix}_CA9f8e7d6c5b4a3F2e1D0c`] : [];
  return [...ids, '+14155550100', AT, '2026-11-22', 'EN', 'https://example.com/hooks/lookup', 'lookup_order', '1795349400', 'a1B2c3D4e5F6g7H8i9J0k1L2'];
}

function stringExample(schema: Schema, property: string): string | undefined {
  if (schema.format === 'date-time') return AT;
  if (schema.format === 'email') return 'ada@example.com';
  if (schema.format === 'binary') return '';
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Infinity);
  const fits = (v: string) => v.length >= min && v.length <= max && (typeof schema.pattern !== 'string' || new RegExp(schema.pattern).test(v));
  const named = BY_NAME.find(([re]) => re.test(property))?.[1];
  for (const value of [named, ...(typeof schema.pattern === 'string' ? candidates(schema.pattern) : []), 'example'.padEnd(min, 'x').slice(0, max)]) {
    if (value !== undefined && fits(value)) return value;
  }
  return undefined;
}

function numberExample(schema: Schema, integer: boolean): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  let value = min ?? (max !== undefined ? Math.min(1, max) : 1);
  if (min !== undefined && max !== undefined && max - min >= 10) value = min + (integer ? Math.round((max - min) / 10) : (max - min) / 10);
  return integer ? Math.ceil(value) : Number(value.toFixed(4));
}

export function exampleOf(schema: Schema, resolve: (ref: string) => Schema | undefined, property = '', depth = 0): unknown {
  if (depth > 8) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (typeof schema.$ref === 'string') {
    const target = resolve(schema.$ref);
    return target ? exampleOf(target, resolve, property, depth + 1) : undefined;
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) {
      const branch = (branches as Schema[]).find((b) => b.type !== 'null') ?? (branches as Schema[])[0]!;
      return exampleOf(branch, resolve, property, depth + 1);
    }
  }
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') ?? 'null' : schema.type;
  switch (type) {
    case 'string': return stringExample(schema, property);
    case 'integer': return numberExample(schema, true);
    case 'number': return numberExample(schema, false);
    case 'boolean': return true;
    case 'null': return null;
    case 'array': {
      const item = schema.items && typeof schema.items === 'object' ? exampleOf(schema.items as Schema, resolve, property, depth + 1) : undefined;
      return item === undefined ? [] : [item];
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        const example = exampleOf(value, resolve, key, depth + 1);
        if (example === undefined) {
          if ((schema.required as string[] | undefined)?.includes(key)) return undefined;
          continue;
        }
        out[key] = example;
      }
      return out;
    }
    default:
      return schema.properties ? exampleOf({ ...schema, type: 'object' }, resolve, property, depth + 1) : undefined;
  }
}
