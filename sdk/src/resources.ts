import type { components, operations } from './schema.ts';
import { paginate, type Page } from './pagination.ts';
import { unwrap, type ApiClient } from './transport.ts';

export type Schemas = components['schemas'];
/** The JSON body of an operation. */
export type BodyOf<O extends keyof operations> = operations[O] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The query of an operation. */
export type QueryOf<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;
/** A list's query without its cursor (the iterator keeps it); fields with a server default may be left out. */
type ListQuery<O extends keyof operations> = Partial<Omit<QueryOf<O>, 'cursor'>>;

/** A namespace of the client: the typed client it sends through. */
export class Resource {
  protected readonly api: ApiClient;
  constructor(api: ApiClient) {
    this.api = api;
  }
}

/** Every item of a list operation whose query pages with `cursor`. */
const listing = <T>(fetch: (cursor: string | undefined) => Promise<unknown>) => paginate<T>((cursor) => fetch(cursor) as Promise<Page<T>>);

export class Agents extends Resource {
  async create(body: BodyOf<'createAgent'>) { return (await unwrap(this.api.POST('/api/agents', { body }))).data; }
  list(query: ListQuery<'listAgents'> = {}) { return listing<Schemas['AgentSummary']>((cursor) => unwrap(this.api.GET('/api/agents', { params: { query: { ...query, cursor } as never } }))); }
  async get(agentId: string) { return (await unwrap(this.api.GET('/api/agents/{agent_id}', { params: { path: { agent_id: agentId } } }))).data; }
  async update(agentId: string, body: BodyOf<'updateAgent'>) { return (await unwrap(this.api.PATCH('/api/agents/{agent_id}', { params: { path: { agent_id: agentId } }, body }))).data; }
  async delete(agentId: string) { await unwrap(this.api.DELETE('/api/agents/{agent_id}', { params: { path: { agent_id: agentId } } })); }
  /** The agent's versions, newest first (§12). */
  versions(agentId: string, query: ListQuery<'listAgentVersions'> = {}) {
    return listing<Schemas['AgentVersion']>((cursor) => unwrap(this.api.GET('/api/agents/{agent_id}/versions', { params: { path: { agent_id: agentId }, query: { ...query, cursor } as never } })));
  }
  async version(agentId: string, version: number) { return (await unwrap(this.api.GET('/api/agents/{agent_id}/versions/{version}', { params: { path: { agent_id: agentId, version: String(version) } } }))).data; }
  async diffVersions(agentId: string, version: number, against: number) {
    return (await unwrap(this.api.GET('/api/agents/{agent_id}/versions/{version}/diff', { params: { path: { agent_id: agentId, version: String(version) }, query: { against } } }))).data;
  }
  /** Makes a new version with the old one's settings; the agent answers with them from then on. */
  async restoreVersion(agentId: string, version: number) {
    return (await unwrap(this.api.POST('/api/agents/{agent_id}/versions/{version}/restore', { params: { path: { agent_id: agentId, version: String(version) } }, headers: { 'content-type': 'application/json' } }))).data;
  }
}

/**
 * What a voice runtime reads and calls for one call, acting with that call's token
 * (`new Switchboard({ baseUrl, token: callToken, organizationId })`, extensions.md §10).
 */
export class Runtime extends Resource {
  /** The call with its agent at its version, variables, provider credentials and tools as functions. */
  async call(callSid: string) { return (await unwrap(this.api.GET('/api/runtime/calls/{call_sid}', { params: { path: { call_sid: callSid } } }))).data; }
  /** Calls one of the agent's webhook tools for the call (under the outbound address rule). */
  async callTool(callSid: string, toolName: string, args: Record<string, unknown>) {
    return (await unwrap(this.api.POST('/api/runtime/calls/{call_sid}/tools/{tool_name}', { params: { path: { call_sid: callSid, tool_name: toolName } }, body: { arguments: args } }))).data;
  }
}

export class Tools extends Resource {
  async create(body: BodyOf<'createTool'>) { return (await unwrap(this.api.POST('/api/tools', { body }))).data; }
  list(query: ListQuery<'listTools'> = {}) { return listing<Schemas['Tool']>((cursor) => unwrap(this.api.GET('/api/tools', { params: { query: { ...query, cursor } as never } }))); }
  async get(toolId: string) { return (await unwrap(this.api.GET('/api/tools/{tool_id}', { params: { path: { tool_id: toolId } } }))).data; }
  async update(toolId: string, body: BodyOf<'updateTool'>) { return (await unwrap(this.api.PATCH('/api/tools/{tool_id}', { params: { path: { tool_id: toolId } }, body }))).data; }
  async delete(toolId: string) { await unwrap(this.api.DELETE('/api/tools/{tool_id}', { params: { path: { tool_id: toolId } } })); }
  /** Calls the tool's webhook once with sample arguments. */
  async test(toolId: string, body: BodyOf<'testTool'> = {}) { return (await unwrap(this.api.POST('/api/tools/{tool_id}/test', { params: { path: { tool_id: toolId } }, body }))).data; }
}

export class Integrations extends Resource {
  async create(body: BodyOf<'createIntegration'>) { return (await unwrap(this.api.POST('/api/integrations', { body }))).data; }
  list(query: ListQuery<'listIntegrations'> = {}) { return listing<Schemas['IntegrationSummary']>((cursor) => unwrap(this.api.GET('/api/integrations', { params: { query: { ...query, cursor } as never } }))); }
  async get(id: string) { return (await unwrap(this.api.GET('/api/integrations/{integration_id}', { params: { path: { integration_id: id } } }))).data; }
  async update(id: string, body: BodyOf<'updateIntegration'>) { return (await unwrap(this.api.PATCH('/api/integrations/{integration_id}', { params: { path: { integration_id: id } }, body }))).data; }
  async delete(id: string) { await unwrap(this.api.DELETE('/api/integrations/{integration_id}', { params: { path: { integration_id: id } } })); }
  /** Checks the credentials with the provider; the integration becomes `active` or `invalid`. */
  async validate(id: string) { return unwrap(this.api.POST('/api/integrations/{integration_id}/validate', { params: { path: { integration_id: id } }, headers: { 'content-type': 'application/json' } })); }
}

export class PhoneNumbers extends Resource {
  async import(body: BodyOf<'importPhoneNumber'>) { return (await unwrap(this.api.POST('/api/phone-numbers', { body }))).data; }
  list(query: ListQuery<'listPhoneNumbers'> = {}) { return listing<Schemas['PhoneNumber']>((cursor) => unwrap(this.api.GET('/api/phone-numbers', { params: { query: { ...query, cursor } as never } }))); }
  async get(id: string) { return (await unwrap(this.api.GET('/api/phone-numbers/{phone_number_id}', { params: { path: { phone_number_id: id } } }))).data; }
  async update(id: string, body: BodyOf<'updatePhoneNumber'>) { return (await unwrap(this.api.PATCH('/api/phone-numbers/{phone_number_id}', { params: { path: { phone_number_id: id } }, body }))).data; }
  async delete(id: string) { return (await unwrap(this.api.DELETE('/api/phone-numbers/{phone_number_id}', { params: { path: { phone_number_id: id } } }))).data; }
}

export class ApiKeys extends Resource {
  /** The full key is in the answer (`key`), and only there. */
  async create(body: BodyOf<'createApiKey'>) { return (await unwrap(this.api.POST('/api/api-keys', { body }))).data; }
  list(query: ListQuery<'listApiKeys'> = {}) { return listing<Schemas['ApiKey']>((cursor) => unwrap(this.api.GET('/api/api-keys', { params: { query: { ...query, cursor } as never } }))); }
  async get(keyId: string) { return (await unwrap(this.api.GET('/api/api-keys/{key_id}', { params: { path: { key_id: keyId } } }))).data; }
  async revoke(keyId: string) { return (await unwrap(this.api.DELETE('/api/api-keys/{key_id}', { params: { path: { key_id: keyId } } }))).data; }
}

export class Billing extends Resource {
  async credits() { return (await unwrap(this.api.GET('/api/billing/credits'))).data; }
  transactions(query: ListQuery<'listTransactions'> = {}) { return listing<Schemas['Transaction']>((cursor) => unwrap(this.api.GET('/api/billing/transactions', { params: { query: { ...query, cursor } as never } }))); }
  /** A hosted checkout for `amount` dollars; the same `idempotencyKey` gives back the same session. */
  async purchase(amount: number, options: { idempotencyKey?: string } = {}) {
    return unwrap(this.api.POST('/api/billing/credits/purchase', { body: { amount }, headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {} }));
  }
}

export class Analytics extends Resource {
  /** Calls, cost and duration per day (dates) or per minute (times), zero-filled. */
  async daily(query: Partial<QueryOf<'getDailyCallAnalytics'>> = {}) { return (await unwrap(this.api.GET('/api/analytics/calls/daily', { params: { query: query as QueryOf<'getDailyCallAnalytics'> } }))).data; }
}

export class Team extends Resource {
  members(query: ListQuery<'listMembers'> = {}) { return listing<Schemas['Member']>((cursor) => unwrap(this.api.GET('/api/auth/organizations/members', { params: { query: { ...query, cursor } as never } }))); }
  async updateMember(userId: string, body: BodyOf<'updateMember'>) { return (await unwrap(this.api.PATCH('/api/auth/organizations/members/{user_id}', { params: { path: { user_id: userId } }, body }))).data; }
  async removeMember(userId: string) { return (await unwrap(this.api.DELETE('/api/auth/organizations/members/{user_id}', { params: { path: { user_id: userId } } }))).data; }
  async invitations() { return (await unwrap(this.api.GET('/api/auth/organizations/invitations'))).invitations; }
  async invite(body: BodyOf<'createInvitation'>) { return (await unwrap(this.api.POST('/api/auth/organizations/invitations', { body }))).data; }
  async cancelInvitation(inviteId: string) { return (await unwrap(this.api.DELETE('/api/auth/organizations/invitations/{invite_id}', { params: { path: { invite_id: inviteId } } }))).data; }
  /** Accepted by the invited person, signed in with a token carrying the invited address. */
  async acceptInvitation(inviteId: string) { return (await unwrap(this.api.POST('/api/auth/invitations/{invite_id}/accept', { params: { path: { invite_id: inviteId } } }))).data; }
}
