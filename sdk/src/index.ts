import { Agents, Analytics, ApiKeys, Billing, Integrations, PhoneNumbers, Runtime, Team, Tools, type BodyOf } from './resources.ts';
import { Calls } from './calls.ts';
import { KnowledgeBase } from './knowledge-base.ts';
import { Events, Webhooks } from './events.ts';
import { createTransport, unwrap, type ApiClient, type SwitchboardOptions } from './transport.ts';

export { SwitchboardError, type SwitchboardOptions } from './transport.ts';
export { Webhooks, WebhookVerificationError } from './events.ts';
export type { Page } from './pagination.ts';
export type { FileSource } from './uploads.ts';
export type { Schemas, BodyOf, QueryOf } from './resources.ts';
export type { components, operations, paths } from './schema.ts';

/**
 * The Switchboard API, typed from its OpenAPI document.
 *
 *     const sb = new Switchboard({ baseUrl: 'http://localhost:3000', apiKey, organizationId });
 *     const agent = await sb.agents.create({ agent_name: 'Front desk' });
 *     for await (const call of sb.calls.list({ agent_id: agent.agent_id })) console.log(call.call_sid);
 */
export class Switchboard {
  readonly agents: Agents;
  readonly tools: Tools;
  readonly integrations: Integrations;
  readonly phoneNumbers: PhoneNumbers;
  readonly knowledgeBase: KnowledgeBase;
  readonly calls: Calls;
  readonly analytics: Analytics;
  readonly billing: Billing;
  readonly apiKeys: ApiKeys;
  readonly team: Team;
  readonly events: Events;
  readonly webhooks: Webhooks;
  /** A voice runtime's routes, with a call token. */
  readonly runtime: Runtime;
  /** The typed openapi-fetch client underneath, for anything the namespaces do not cover. */
  readonly api: ApiClient;

  readonly #options: SwitchboardOptions;

  constructor(options: SwitchboardOptions) {
    this.#options = options;
    const { client, send } = createTransport(options);
    const baseUrl = options.baseUrl.replace(/\/$/, '');
    this.api = client;
    this.agents = new Agents(client);
    this.tools = new Tools(client);
    this.integrations = new Integrations(client);
    this.phoneNumbers = new PhoneNumbers(client);
    this.knowledgeBase = new KnowledgeBase(client, send, baseUrl);
    this.calls = new Calls(client, send, baseUrl);
    this.analytics = new Analytics(client);
    this.billing = new Billing(client);
    this.apiKeys = new ApiKeys(client);
    this.team = new Team(client);
    this.events = new Events(client);
    this.webhooks = new Webhooks(client);
    this.runtime = new Runtime(client);
  }

  /**
   * The same client with other request options: `sb.withOptions({ signal }).calls.get(sid)` ends when
   * `signal` aborts; `sb.withOptions({ timeoutMs: 5000 })` allows 5 s an attempt; `{ organizationId }` acts elsewhere.
   */
  withOptions(options: Partial<Pick<SwitchboardOptions, 'signal' | 'timeoutMs' | 'maxRetries' | 'organizationId'>>): Switchboard {
    return new Switchboard({ ...this.#options, ...options });
  }

  /** The caller: user, memberships, and the key used. */
  async me() { return (await unwrap(this.api.GET('/api/auth/me'))).data; }

  /** A new organization with the signed-in user as its admin (needs a user token, not an API key). */
  async createOrganization(body: BodyOf<'createOrganization'>) { return (await unwrap(this.api.POST('/api/auth/organizations', { body }))).data; }
}
