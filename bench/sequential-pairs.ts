import fs from 'node:fs';
import http from 'node:http';
import { databaseBackendPids } from './lib.ts';

/**
 * A second way to price a layer, for costs of a few percent that 3-second slices under concurrent
 * load cannot resolve on a shared two-core machine (there, two slices of the very same request differ
 * by up to ±9 %). One request at a time over one kept-alive connection, in short slices that alternate
 * between the two sides (A B, then B A, ...), each slice's CPU read in nanoseconds from the kernel's
 * schedstat (the server's threads and the database's PostgreSQL backends) instead of /proc's 10 ms
 * ticks. The cost is the median over many pairs of 1 - A/B; the same request on both sides gives the
 * method's own floor, which bench/layers.ts records next to it.
 */

/** Nanoseconds on CPU so far of every thread of `pid` and of the PostgreSQL backends serving `database`. */
export function cpuNs(pid: number, database: string): number {
  let total = 0;
  const add = (file: string) => {
    try {
      total += Number(fs.readFileSync(file, 'utf8').split(' ')[0]);
    } catch {
      // a thread or backend that ended meanwhile
    }
  };
  for (const thread of fs.readdirSync(`/proc/${pid}/task`)) add(`/proc/${pid}/task/${thread}/schedstat`);
  for (const backend of databaseBackendPids(database)) add(`/proc/${backend}/schedstat`);
  return total;
}

export interface SequentialRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends requests one at a time over one kept-alive connection; each resolves with its status. */
export function sequentialClient(base: string): { send(request: SequentialRequest): Promise<number>; close(): void } {
  const url = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    send: (request) => new Promise((resolve, reject) => {
      const req = http.request({
        host: url.hostname, port: url.port, path: request.path, method: request.method, agent,
        headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end(request.body);
    }),
    close: () => agent.destroy(),
  };
}

export interface PairsResult {
  pairs: number;
  requests_per_slice: number;
  /** Medians of the slices' CPU per request (server and PostgreSQL), µs. */
  a_cpu_us: number;
  b_cpu_us: number;
  /** Median over the pairs of 1 - (A's CPU per request) / (B's), with its quartiles. */
  cost: number;
  cost_quartiles: [number, number];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round3 = (n: number) => Number(n.toFixed(3));

/**
 * Alternating slices of `perSlice` requests of each side, A without the layer and B with it;
 * `request(side)` makes each request (a fresh one per call); `beforeSlice` sets the server up for a
 * side (its CPU is not counted).
 */
export async function sequentialPairs(options: {
  base: string; pid: number; database: string; pairs: number; perSlice: number;
  request: (side: 'a' | 'b') => SequentialRequest;
  beforeSlice?: (side: 'a' | 'b') => Promise<void>;
}): Promise<PairsResult> {
  const client = sequentialClient(options.base);
  const slice = async (side: 'a' | 'b') => {
    await options.beforeSlice?.(side);
    const before = cpuNs(options.pid, options.database);
    for (let i = 0; i < options.perSlice; i++) {
      const status = await client.send(options.request(side));
      if (status >= 300) throw new Error(`side ${side} answered ${status}`);
    }
    return (cpuNs(options.pid, options.database) - before) / options.perSlice / 1000;
  };
  try {
    for (let i = 0; i < options.perSlice; i++) await slice(i % 2 ? 'a' : 'b'); // warm both paths
    const a: number[] = [];
    const b: number[] = [];
    for (let pair = 0; pair < options.pairs; pair++) {
      if (pair % 2 === 0) {
        a.push(await slice('a'));
        b.push(await slice('b'));
      } else {
        b.push(await slice('b'));
        a.push(await slice('a'));
      }
    }
    const costs = a.map((cpu, i) => 1 - cpu / b[i]!).sort((x, y) => x - y);
    return {
      pairs: options.pairs, requests_per_slice: options.perSlice,
      a_cpu_us: Math.round(median(a)), b_cpu_us: Math.round(median(b)),
      cost: round3(median(costs)),
      cost_quartiles: [round3(costs[Math.floor(costs.length / 4)]!), round3(costs[Math.floor((3 * costs.length) / 4)]!)],
    };
  } finally {
    client.close();
  }
}
