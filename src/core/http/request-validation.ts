import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * How request parts are validated (the compiler behind every route's `schema`).
 *
 * - JSON bodies are taken as sent: no coercion, so `"true"` is not a boolean, `123` not a name and
 *   `["x"]` not a string. Query strings, path parameters and headers arrive as text, so they keep
 *   their coercion (`?page_size=10` is a number) — and so do form bodies, whose values are all text.
 * - At most MAX_REPORTED_ERRORS failing fields are reported, and a violated size limit (`maxItems`,
 *   `maxProperties`, `maxLength`) is reported alone, found before the elements are walked: a body of
 *   200,000 bad items answers one short error, not one entry per item.
 *
 * Each schema is compiled twice: a validator that stops at the first failure (the one valid requests
 * pay for, and the one that meets a size limit first, because Ajv checks an array's size before its
 * items), and one that lists every failure, run only when the first failed on something else.
 *
 * Both are compiled on their route's first request, not at start-up: compiling every route's
 * schemas held about 15 MB of generated code in the idle server, most of it for routes a given
 * process never serves (bench/memory.ts). A schema Ajv cannot compile therefore fails its route's
 * first request (500) instead of the start; test/schemas-compile.test.ts builds the app with every
 * schema compiled at once (`eager`) to prove they all compile.
 */
export const MAX_REPORTED_ERRORS = 20;

const SIZE_LIMITS = new Set(['maxItems', 'maxProperties', 'maxLength']);

interface Issue {
  keyword: string;
}

type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: Issue[] | null; schemaEnv?: unknown };
type Compile = (route: { schema: unknown; httpPart?: string; contentType?: string }) => Validate;
type BuildCompiler = (externalSchemas: Record<string, unknown>, options: { customOptions?: Record<string, unknown> }) => Compile;
type ValidatorFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;

/** The Ajv options every request part shares (coercion and error collection are chosen per part). */
const BASE = { removeAdditional: false, useDefaults: true } as const;

function firstThenAll(compileFirst: () => Validate, compileAll: () => Validate, eager: boolean): Validate {
  let first = eager ? compileFirst() : undefined;
  let all = eager ? compileAll() : undefined; // most schemas never see a failure
  const validate: Validate = (data, context) => {
    first ??= compileFirst();
    if (first(data, context)) {
      validate.errors = null;
      return true;
    }
    const found = first.errors ?? [];
    if (found.length && SIZE_LIMITS.has(found[0]!.keyword)) {
      validate.errors = found.slice(0, 1);
      return false;
    }
    all ??= compileAll();
    all(data, context);
    validate.errors = (all.errors?.length ? all.errors : found).slice(0, MAX_REPORTED_ERRORS);
    return false;
  };
  // Fastify passes the parent object to validators that say they are Ajv's (every one of ours), so
  // Ajv may replace a coerced root value.
  validate.schemaEnv = true;
  return validate;
}

/**
 * Header names are case-insensitive and Node gives them lowercased. Fastify lowercases a headers
 * schema's names itself only for its default compiler, so this one does it too.
 */
function lowerCaseHeaderNames(schema: unknown): unknown {
  const object = schema as { properties?: Record<string, unknown>; required?: unknown };
  if (!object || typeof object !== 'object' || !object.properties) return schema;
  return {
    ...object,
    properties: Object.fromEntries(Object.entries(object.properties).map(([name, value]) => [name.toLowerCase(), value])),
    ...(Array.isArray(object.required) ? { required: object.required.map((name) => String(name).toLowerCase()) } : {}),
  };
}

/** The `schemaController.compilersFactory.buildValidator` of the app; `eager` compiles each schema when its route is registered. */
export function requestValidatorFactory(options: { eager?: boolean } = {}): ValidatorFactory {
  const eager = options.eager ?? false;
  const pool = (AjvCompiler as unknown as () => BuildCompiler)();
  const factory = (externalSchemas: Record<string, unknown>) => {
    const compilers = (coerceTypes: false | 'array') => ({
      first: pool(externalSchemas, { customOptions: { ...BASE, coerceTypes, allErrors: false } }),
      all: pool(externalSchemas, { customOptions: { ...BASE, coerceTypes, allErrors: true } }),
    });
    const asSent = compilers(false);
    const fromText = compilers('array');
    const compile: Compile = (given) => {
      const route = given.httpPart === 'headers' ? { ...given, schema: lowerCaseHeaderNames(given.schema) } : given;
      const json = route.httpPart === 'body' && (route.contentType === undefined || route.contentType.includes('json'));
      const { first, all } = json ? asSent : fromText;
      return firstThenAll(() => first(route), () => all(route), eager);
    };
    return compile;
  };
  return factory as unknown as ValidatorFactory;
}
