import type { FastifyInstance } from 'fastify';
import { Errors, type FieldError } from '../errors.ts';

/**
 * Text PostgreSQL cannot store, refused for every field of every request before validation: a NUL
 * character (refused in text and JSONB) or a lone UTF-16 surrogate (not UTF-8 at all). And numbers a
 * query cannot use (Infinity, NaN), refused after the validator coerced query strings to numbers.
 */
export function unstorableText(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain a NUL character';
  if (!value.isWellFormed()) return 'must be valid Unicode (no lone surrogate)';
  return undefined;
}

const MAX_DEPTH = 32;

function walk(value: unknown, path: string, found: FieldError[], check: (value: unknown) => string | undefined, depth = 0): void {
  if (found.length >= 20 || depth > MAX_DEPTH) return;
  const problem = check(value);
  if (problem) {
    found.push({ path, message: problem });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => walk(item, `${path}.${i}`, found, check, depth + 1));
  } else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value) && typeof (value as { pipe?: unknown }).pipe !== 'function') {
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = unstorableText(key);
      if (keyProblem) found.push({ path: `${path}.${key.replace(/[\u0000\uD800-\uDFFF]/g, '?')}`, message: `name ${keyProblem}` });
      else walk(item, `${path}.${key}`, found, check, depth + 1);
    }
  }
}

const textProblem = (value: unknown) => (typeof value === 'string' ? unstorableText(value) : undefined);
const numberProblem = (value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? 'must be a finite number' : undefined);

function refuse(found: FieldError[]): void {
  if (found.length) throw Errors.validation('Request validation failed', found);
}

export function registerInputGuards(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const found: FieldError[] = [];
    walk(request.params, 'params', found, textProblem);
    walk(request.query, 'querystring', found, textProblem);
    walk(request.body, 'body', found, textProblem);
    refuse(found);
  });
  app.addHook('preHandler', async (request) => {
    const found: FieldError[] = [];
    walk(request.query, 'querystring', found, numberProblem);
    walk(request.body, 'body', found, numberProblem);
    refuse(found);
  });
}
