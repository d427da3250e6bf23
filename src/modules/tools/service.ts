import type { Static } from 'typebox';
import { checkHostAddresses, DestinationRefusedError, type AllowedNetworks } from '../../adapters/http/outbound-addresses.ts';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { RequestContext } from '../../core/context.ts';
import { pageNewestFirst, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import { ToolRepository, type NewToolRow, type ToolParameter, type ToolRow } from './repository.ts';

// A tool's parameters, for the modules that hand them on (the voice runtime's function schemas).
export type { ToolParameter } from './repository.ts';
import type { CreateToolBody, Tool, UpdateToolBody } from './schemas.ts';
import { runWebhookTest, type ToolTestResult } from './webhook-test.ts';
import type { AuditService } from '../audit/service.ts';

type ToolView = Static<typeof Tool>;

export function toToolView(row: ToolRow): ToolView {
  return {
    tool_id: row.id,
    client_id: row.clientId,
    tool_name: row.toolName,
    tool_description: row.toolDescription,
    webhook_url: row.webhookUrl,
    http_method: row.httpMethod,
    headers: row.headers,
    parameters: row.parameters,
    timeout_seconds: row.timeoutSeconds,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/**
 * The webhook URL must be one a request can be made to: the schema checks its shape, the URL parser
 * what the shape lets through (a port past 65535, an unclosed IPv6 bracket, a bad escape in the host).
 */
function checkWebhookUrl(value: string | undefined): void {
  if (value === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw Errors.validation('Invalid webhook_url', [{ path: 'body.webhook_url', message: 'is not a valid http or https URL' }]);
  }
}

/** A JSON answer as its value (what a language model reads best), any other text as it came. */
function parsedBody(body: string | null): unknown {
  if (body === null) return null;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

function checkParameters(parameters: ToolParameter[] | undefined): void {
  const seen = new Set<string>();
  for (const [i, p] of (parameters ?? []).entries()) {
    if (seen.has(p.name)) {
      throw Errors.validation('Parameter names must be unique', [{ path: `body.parameters.${i}.name`, message: `duplicate parameter ${p.name}` }]);
    }
    seen.add(p.name);
  }
}

const nameTaken = (name: string) => Errors.conflict('tool_name_taken', `A tool named ${name} already exists in this organization`);

function columns(input: Partial<Static<typeof CreateToolBody>>): Partial<NewToolRow> {
  const out: Partial<NewToolRow> = {};
  if (input.tool_name !== undefined) out.toolName = input.tool_name;
  if (input.tool_description !== undefined) out.toolDescription = input.tool_description;
  if (input.webhook_url !== undefined) out.webhookUrl = input.webhook_url;
  if (input.http_method !== undefined) out.httpMethod = input.http_method;
  if (input.headers !== undefined) out.headers = input.headers;
  if (input.parameters !== undefined) out.parameters = input.parameters as ToolParameter[];
  if (input.timeout_seconds !== undefined) out.timeoutSeconds = input.timeout_seconds;
  return out;
}

const audited = (action: string, toolId: string, input: object) => ({ action, resourceType: 'tool', resourceId: toolId, changedFields: Object.keys(input) });

export class ToolService {
  readonly #db: Db;
  readonly #allowedNetworks: AllowedNetworks;
  readonly #audit: Pick<AuditService, 'change'>;
  /** `allowedNetworks`: non-public networks the operator lets webhooks reach (ALLOWED_NETWORKS). */
  constructor(deps: { db: Db; allowedNetworks: AllowedNetworks; audit: Pick<AuditService, 'change'> }) {
    this.#db = deps.db;
    this.#allowedNetworks = deps.allowedNetworks;
    this.#audit = deps.audit;
  }

  /**
   * An agent never holds a tool it cannot call: the URL must pass the outbound address rule of the
   * calls themselves when it is saved. A name that does not resolve yet is accepted; each call checks
   * the addresses it connects to.
   */
  async #checkDestination(webhookUrl: string | undefined): Promise<void> {
    checkWebhookUrl(webhookUrl);
    if (webhookUrl === undefined) return;
    try {
      await checkHostAddresses(new URL(webhookUrl), this.#allowedNetworks, 'accept');
    } catch (err) {
      if (err instanceof DestinationRefusedError) throw Errors.destinationRefused(err.message, 'body.webhook_url');
      throw err;
    }
  }

  async create(ctx: RequestContext, input: Static<typeof CreateToolBody>): Promise<ToolView> {
    await this.#checkDestination(input.webhook_url);
    checkParameters(input.parameters as ToolParameter[] | undefined);
    const row = await this.#audit.change(ctx, async (tx) => {
      const created = await new ToolRepository(tx).insert(ctx.orgId, {
        headers: {}, parameters: [], ...(columns(input) as NewToolRow), id: newId('tool'),
      });
      if (!created) throw nameTaken(input.tool_name);
      return created;
    }, (created) => audited('tool.create', created.id, input));
    return toToolView(row);
  }

  async list(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<ToolView>> {
    return pageNewestFirst(new ToolRepository(this.#db), ctx.orgId, query, toToolView);
  }

  async get(ctx: RequestContext, toolId: string): Promise<ToolView> {
    return toToolView(await this.#find(ctx, toolId));
  }

  /** Only the fields given change; a tool of another organization is 403, as the specification says. */
  async update(ctx: RequestContext, toolId: string, input: Static<typeof UpdateToolBody>): Promise<ToolView> {
    await this.#checkDestination(input.webhook_url);
    checkParameters(input.parameters as ToolParameter[] | undefined);
    const row = await this.#audit.change(ctx, async (tx) => {
      const repo = new ToolRepository(tx);
      let updated: ToolRow | undefined;
      try {
        updated = await repo.update(ctx.orgId, toolId, columns(input));
      } catch (err) {
        if (isUniqueViolation(err, 'tools_client_name_key')) throw nameTaken(input.tool_name!);
        throw err;
      }
      if (updated) return updated;
      if (await repo.existsElsewhere(ctx.orgId, toolId)) throw Errors.forbidden('The tool belongs to another organization');
      throw Errors.notFound('Tool');
    }, () => audited('tool.update', toolId, input));
    return toToolView(row);
  }

  async delete(ctx: RequestContext, toolId: string): Promise<void> {
    await this.#audit.change(ctx, async (tx) => {
      if (!(await new ToolRepository(tx).delete(ctx.orgId, toolId))) throw Errors.notFound('Tool');
    }, () => audited('tool.delete', toolId, {}));
  }

  /** Calls the webhook once, outside any transaction, and reports what came back. */
  async test(ctx: RequestContext, toolId: string, args: Record<string, unknown> | undefined): Promise<ToolTestResult> {
    const tool = await this.#find(ctx, toolId);
    return runWebhookTest(tool, args, this.#allowedNetworks);
  }

  /**
   * A tool call of a voice runtime (extensions.md §10): the tool named, if it is one of `toolIds`
   * (the agent's), called with its method, headers and timeout under the outbound address rule.
   */
  async invokeForAgent(orgId: string, toolIds: readonly string[], toolName: string, args: Record<string, unknown>):
    Promise<{ status: number | null; body: unknown; duration_ms: number; error: string | null }> {
    const tool = await new ToolRepository(this.#db).findByName(orgId, toolName);
    if (!tool || !toolIds.includes(tool.id)) throw Errors.notFound(`Tool ${toolName} of the call's agent`);
    const result = await runWebhookTest(tool, args, this.#allowedNetworks);
    return { status: result.status_code, body: parsedBody(result.body), duration_ms: result.latency_ms, error: result.error };
  }

  async #find(ctx: RequestContext, toolId: string): Promise<ToolRow> {
    const row = await new ToolRepository(this.#db).findById(ctx.orgId, toolId);
    if (!row) throw Errors.notFound('Tool');
    return row;
  }
}
