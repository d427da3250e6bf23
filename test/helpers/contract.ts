import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/*
 * A response validator over the suite's own traffic: every answer the test apps send is checked
 * against the OpenAPI document they serve (/api/openapi.json), as a validating proxy would. An answer
 * whose status the operation does not document, whose JSON body breaks the documented schema, whose
 * media type is not documented, or that lacks a header the document marks required, is a violation.
 * The global teardown (test/setup.ts) fails the run if any was collected.
 */

type Schema = Record<string, unknown>;
interface Header { $ref?: string; required?: boolean }
interface Response { content?: Record<string, { schema?: Schema }>; headers?: Record<string, Header> }
interface Operation { responses?: Record<string, Response> }
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema>; headers?: Record<string, Header> };
}

export interface Answer {
  method: string;
  /** The route's pattern as Fastify has it: /api/agents/:agent_id. */
  route: string;
  status: number;
  headers: Record<string, unknown>;
  /** The body as sent, when it is text (a stream is not read). */
  body: string | undefined;
}

const BASE = 'https://switchboard.invalid/components/schemas/';

function rewriteRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rewriteRefs);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [
    key,
    key === '$ref' && typeof value === 'string' ? value.replace('#/components/schemas/', BASE) : rewriteRefs(value),
  ]));
}

const essence = (contentType: unknown) => String(contentType ?? '').split(';')[0]!.trim().toLowerCase();

/** Checks answers against one document; validators are compiled on first use and kept. */
export class ContractChecker {
  private readonly ajv = new Ajv({ strict: false, allErrors: false, formats: { binary: true } });
  private readonly validators = new Map<string, ValidateFunction>();

  private readonly document: OpenApiDocument;

  constructor(document: OpenApiDocument) {
    this.document = document;
    addFormats.default(this.ajv);
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
      this.ajv.addSchema({ ...(rewriteRefs(schema) as Schema), $id: BASE + name });
    }
  }

  private operation(method: string, route: string): Operation | undefined {
    const path = route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    return this.document.paths[path]?.[method.toLowerCase()];
  }

  private header(header: Header): Header {
    return header.$ref ? (this.document.components?.headers?.[header.$ref.split('/').pop()!] ?? header) : header;
  }

  /** The violations of one answer (none for an answer of no documented operation, e.g. a 404 route). */
  check(answer: Answer): string[] {
    const operation = this.operation(answer.method, answer.route);
    if (!operation) return [];
    const where = `${answer.method} ${answer.route} ${answer.status}`;
    const response = operation.responses?.[String(answer.status)] ?? operation.responses?.default;
    if (!response) return [`${where}: status not documented (${answer.body?.slice(0, 200)})`];
    const problems: string[] = [];
    for (const [name, given] of Object.entries(response.headers ?? {})) {
      if (this.header(given).required && answer.headers[name.toLowerCase()] === undefined) problems.push(`${where}: required header ${name} missing`);
    }
    if (answer.body === undefined || answer.body === '') return problems;
    const mediaType = essence(answer.headers['content-type']);
    const media = response.content?.[mediaType];
    if (!media) return [...problems, `${where}: media type ${mediaType} not documented (${Object.keys(response.content ?? {}).join(', ') || 'no body'})`];
    if (!mediaType.includes('json') || !media.schema) return problems;
    const key = `${answer.method} ${answer.route} ${answer.status} ${mediaType}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(rewriteRefs(media.schema) as Schema);
      this.validators.set(key, validate);
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [...problems, `${where}: the body is not JSON`];
    }
    if (!validate(body)) problems.push(`${where}: body breaks the schema: ${this.ajv.errorsText(validate.errors)} (${answer.body.slice(0, 200)})`);
    return problems;
  }
}

/** Every violation seen in this process (the suite runs its files in one process). */
export const contractViolations: string[] = [];

function text(payload: unknown): string | undefined {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined;
}

/**
 * Installs the check on an app before its routes (buildApp's `instrument`): every answer that goes
 * through onSend is checked against the app's own document, read once on first use.
 */
export function checkAnswersAgainstDocument(app: FastifyInstance): void {
  let checker: ContractChecker | undefined;
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    try {
      checker ??= new ContractChecker(app.swagger() as unknown as OpenApiDocument);
      const problems = checker.check({
        method: request.method,
        route: request.routeOptions.url ?? '',
        status: reply.statusCode,
        headers: reply.getHeaders(),
        body: request.method === 'HEAD' ? undefined : text(payload),
      });
      contractViolations.push(...problems);
    } catch (err) {
      contractViolations.push(`${request.method} ${request.url}: the check failed: ${(err as Error).message}`);
    }
    return payload;
  });
}
