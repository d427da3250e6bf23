import { createHash } from 'node:crypto';
import { Errors } from '../../core/errors.ts';
import type { TrafficSplit } from './repository.ts';
import { VERSIONED_FIELDS } from './schemas.ts';

/** The versioned fields of a full agent, under their API names: what a version keeps. */
export function configOf(agent: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(VERSIONED_FIELDS.map((field) => [field, agent[field] ?? null]));
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The fields whose value differs between two configurations, in the schema's order, then any
 * field only an older version knew; a field one of them lacks counts as null.
 */
export function diffConfigs(from: Record<string, unknown>, to: Record<string, unknown>): Array<{ field: string; from: unknown; to: unknown }> {
  const known = new Set<string>(VERSIONED_FIELDS);
  const fields = [...VERSIONED_FIELDS, ...Object.keys({ ...from, ...to }).filter((f) => !known.has(f)).sort()];
  return fields.filter((f) => !same(from[f], to[f])).map((field) => ({ field, from: from[field] ?? null, to: to[field] ?? null }));
}

/** A split as given, checked: each version once, existing (1..latest), weights summing to 100. */
export function checkTraffic(traffic: TrafficSplit[] | null, latest: number): TrafficSplit[] | null {
  if (traffic === null) return null;
  const seen = new Set<number>();
  traffic.forEach((entry, i) => {
    if (entry.version > latest) throw Errors.validation('The split names a version that does not exist', [{ path: `body.traffic.${i}.version`, message: `must be at most ${latest}` }]);
    if (seen.has(entry.version)) throw Errors.validation('The split names a version twice', [{ path: `body.traffic.${i}.version`, message: 'must appear once' }]);
    seen.add(entry.version);
  });
  const total = traffic.reduce((sum, entry) => sum + entry.weight, 0);
  if (total !== 100) throw Errors.validation('The weights must sum to 100', [{ path: 'body.traffic', message: `weights sum to ${total}, not 100` }]);
  return traffic.map(({ version, weight }) => ({ version, weight }));
}

/**
 * The version a new call runs. Without a split, the latest. With one, a bucket 0-99 from a hash of
 * the agent, the caller and the split itself: the same caller lands on the same version for as long
 * as the split stands (a changed split reshuffles, as it must to honour new weights), and callers
 * spread over the buckets evenly, so each version takes its weight's share.
 */
export function pickVersion(agent: { id: string; version: number; traffic: TrafficSplit[] | null }, callerKey: string): number {
  const split = agent.traffic;
  if (!split?.length) return agent.version;
  const splitKey = split.map((e) => `${e.version}:${e.weight}`).join(',');
  const digest = createHash('sha256').update(`${agent.id}\n${callerKey}\n${splitKey}`).digest();
  const bucket = digest.readUInt32BE(0) % 100;
  let upTo = 0;
  for (const entry of split) {
    upTo += entry.weight;
    if (bucket < upTo) return entry.version;
  }
  return split[split.length - 1]!.version;
}
