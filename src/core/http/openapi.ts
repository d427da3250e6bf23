/**
 * The OpenAPI document made for machines (SDK generators, reference pages, linters): every request
 * and response body a named component, and every component an example. Route schemas stay written
 * where the routes are (so the document cannot drift from the validation); a schema with a `title`
 * is lifted into `components.schemas` under that name and referred to by `$ref`.
 */
import { exampleOf } from './openapi-examples.ts';

type Schema = Record<string, unknown>;
interface Document {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}
interface MediaType {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Operation {
  parameters?: Array<{ required?: boolean; schema?: Schema }>;
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { content?: Record<string, MediaType> }>;
}

/**
 * Lifts a body's schema, keeping the example @fastify/swagger moved from the schema to the media
 * type (where OpenAPI puts examples of a body) as the component's own example too.
 */
function liftBody(body: MediaType, components: Record<string, Schema>): void {
  const example = body.example ?? Object.values(body.examples ?? {})[0]?.value;
  const schema = example !== undefined && body.schema && !body.schema.examples ? { ...body.schema, examples: [example] } : body.schema;
  body.schema = lift(schema, components) as Schema;
}

const NESTED = ['items', 'additionalProperties', 'not'] as const;
const LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;

/** Replaces every titled schema under `schema` (itself included) by a reference to its component. */
function lift(schema: unknown, components: Record<string, Schema>): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const copy: Schema = { ...(schema as Schema) };
  if (copy.properties && typeof copy.properties === 'object') {
    copy.properties = Object.fromEntries(Object.entries(copy.properties as Schema).map(([k, v]) => [k, lift(v, components)]));
  }
  for (const key of NESTED) if (copy[key] && typeof copy[key] === 'object') copy[key] = lift(copy[key], components);
  for (const key of LISTS) if (Array.isArray(copy[key])) copy[key] = (copy[key] as unknown[]).map((s) => lift(s, components));
  // A field with a default may be left out (the server fills it in): the document says it is optional.
  if (Array.isArray(copy.required) && copy.properties) {
    const properties = copy.properties as Record<string, Schema>;
    copy.required = (copy.required as string[]).filter((key) => properties[key]?.default === undefined);
    if ((copy.required as string[]).length === 0) delete copy.required;
  }
  const name = copy.title;
  if (typeof name !== 'string' || copy.$ref) return copy;
  const existing = components[name];
  if (existing && JSON.stringify(existing) !== JSON.stringify(copy)) {
    throw new Error(`Two different schemas are named ${name} in the OpenAPI document`);
  }
  components[name] = copy;
  return { $ref: `#/components/schemas/${name}` };
}

export function nameSchemas<D extends Document>(document: D): D {
  const components: Record<string, Schema> = { ...(document.components?.schemas ?? {}) };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) if (parameter.schema?.default !== undefined) parameter.required = false;
      for (const body of Object.values(operation.requestBody?.content ?? {})) liftBody(body, components);
      for (const response of Object.values(operation.responses ?? {})) {
        for (const body of Object.values(response.content ?? {})) liftBody(body, components);
      }
    }
  }
  const resolve = (ref: string) => components[ref.replace('#/components/schemas/', '')];
  for (const [name, schema] of Object.entries(components)) {
    if (Array.isArray(schema.examples)) continue;
    const example = exampleOf(schema, resolve);
    if (example === undefined) throw new Error(`No example can be made for the schema ${name}: give it one`);
    components[name] = { ...schema, examples: [example] };
  }
  return { ...document, components: { ...document.components, schemas: components } };
}
