import { useQueries } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';

export interface OnboardingStep {
  key: string;
  title: string;
  /** What to do, said as the next action. */
  action: string;
  /** Where it is done. */
  to: string;
  done: boolean | undefined;
  /** The organization's state could not be read (a role without that permission, a failure). */
  unknown: boolean;
}

/** How often the checklist asks again while shown: it follows what is done elsewhere (the API, the CLI). */
const REFRESH_MS = 5_000;

/**
 * The first-run checklist, read from the organization's real state (nothing is stored about the
 * checklist itself): credits → an integration → an agent → a talk with it (a `preview` call) →
 * a phone number → the first phone call.
 */
export function useOnboarding(live: boolean): { steps: OnboardingStep[]; doneCount: number; pending: boolean } {
  const { orgId } = useCredentials();
  const options = { refetchInterval: live ? REFRESH_MS : false as const, staleTime: live ? 0 : 30_000 };
  const [credits, integrations, agents, previews, numbers, inbound, outbound] = useQueries({
    queries: [
      { queryKey: [orgId, 'onboarding', 'credits'], queryFn: async () => (await unwrap(api.GET('/api/billing/credits'))).data.balance > 0, ...options },
      { queryKey: [orgId, 'onboarding', 'integrations'], queryFn: async () => (await unwrap(api.GET('/api/integrations', { params: { query: { page_size: 1 } } }))).data.length > 0, ...options },
      { queryKey: [orgId, 'onboarding', 'agents'], queryFn: async () => (await unwrap(api.GET('/api/agents', { params: { query: { page_size: 1 } } }))).data[0]?.agent_id ?? null, ...options },
      { queryKey: [orgId, 'onboarding', 'preview'], queryFn: async () => (await unwrap(api.GET('/api/calls', { params: { query: { call_type: 'preview', limit: 1 } } }))).data.length > 0, ...options },
      { queryKey: [orgId, 'onboarding', 'numbers'], queryFn: async () => (await unwrap(api.GET('/api/phone-numbers', { params: { query: { page_size: 1 } } }))).data.length > 0, ...options },
      { queryKey: [orgId, 'onboarding', 'inbound'], queryFn: async () => (await unwrap(api.GET('/api/calls', { params: { query: { call_type: 'inbound', limit: 1 } } }))).data.length > 0, ...options },
      { queryKey: [orgId, 'onboarding', 'outbound'], queryFn: async () => (await unwrap(api.GET('/api/calls', { params: { query: { call_type: 'outbound', limit: 1 } } }))).data.length > 0, ...options },
    ],
  });
  const agentId = agents.data ?? null;
  const phoneCall = inbound.data === undefined && outbound.data === undefined ? undefined : Boolean(inbound.data || outbound.data);
  const steps: OnboardingStep[] = [
    { key: 'credits', title: 'Add credits', action: 'Buy credits', to: '/billing', done: credits.data, unknown: credits.isError },
    { key: 'integration', title: 'Connect a provider', action: 'Add an integration', to: '/integrations', done: integrations.data, unknown: integrations.isError },
    { key: 'agent', title: 'Create an agent', action: 'Create an agent', to: '/agents/new', done: agents.data === undefined ? undefined : agentId !== null, unknown: agents.isError },
    { key: 'talk', title: 'Talk to your agent', action: agentId ? 'Open the agent' : 'Create an agent first', to: agentId ? `/agents/${agentId}` : '/agents/new', done: previews.data, unknown: previews.isError },
    { key: 'number', title: 'Get a phone number', action: 'Add a phone number', to: '/phone-numbers', done: numbers.data, unknown: numbers.isError },
    { key: 'call', title: 'Take or place the first call', action: 'See the calls', to: '/calls', done: phoneCall, unknown: inbound.isError && outbound.isError },
  ];
  const pending = [credits, integrations, agents, previews, numbers, inbound, outbound].some((q) => q.isPending);
  return { steps, doneCount: steps.filter((s) => s.done).length, pending };
}
