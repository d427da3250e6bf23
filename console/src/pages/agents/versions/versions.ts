import { useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../../api/client.ts';
import { useCredentials } from '../../../auth/useCredentials.ts';

export type AgentVersion = Schemas['AgentVersion'];
export type Traffic = NonNullable<Schemas['Agent']['traffic']>;

/** The query key of an agent's versions: a save, a restore or a traffic change refreshes it with the agent. */
export const versionsKey = (orgId: string | null, agentId: string) => [orgId, 'agent', agentId, 'versions'];

/** The agent's versions, newest first (the first 100: the history a person reads). */
export function useAgentVersions(agentId: string) {
  const { orgId } = useCredentials();
  return useQuery({
    queryKey: versionsKey(orgId, agentId),
    queryFn: async () => (await unwrap(api.GET('/api/agents/{agent_id}/versions', { params: { path: { agent_id: agentId }, query: { page_size: 100 } } }))).data,
  });
}

/** The fields whose value differs between two configurations (what a version changed from the one before). */
export function changedFields(before: AgentVersion['config'] | undefined, after: AgentVersion['config']): string[] {
  if (!before) return [];
  const fields = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...fields].filter((field) => JSON.stringify((before as Record<string, unknown>)[field] ?? null) !== JSON.stringify((after as Record<string, unknown>)[field] ?? null)).sort();
}

/** A configuration value as one reads it in a diff: text as it is, the rest as JSON, absent as a dash. */
export function showValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value === '' ? '(empty)' : value;
  return JSON.stringify(value, null, 2);
}

/** Why a traffic split would be refused (extensions.md §12): each version once, integer weights 1-100 summing to 100. */
export function trafficProblems(rows: Array<{ version: number | null; weight: number | string }>, known: Set<number>): string[] {
  const problems: string[] = [];
  if (rows.length === 0) problems.push('Add at least one version, or send every call to the latest version.');
  const versions = rows.map((r) => r.version);
  if (versions.some((v) => v === null)) problems.push('Choose a version on every row.');
  if (versions.some((v) => v !== null && !known.has(v))) problems.push('A row names a version that does not exist.');
  if (new Set(versions).size !== versions.length) problems.push('Each version may appear once.');
  const weights = rows.map((r) => Number(r.weight));
  if (weights.some((w) => !Number.isInteger(w) || w < 1 || w > 100)) problems.push('Each weight is a whole number from 1 to 100.');
  const sum = weights.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  if (rows.length > 0 && sum !== 100) problems.push(`The weights add up to ${sum}, not 100.`);
  return problems;
}
