import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

/** A server or worker process of the cluster, restartable under the same settings (as a supervisor would). */
export class Member {
  child!: ChildProcess;
  output = '';
  readonly name: string;
  readonly #args: string[];
  readonly #env: Record<string, string>;
  constructor(name: string, args: string[], env: Record<string, string>) {
    this.name = name;
    this.#args = args;
    this.#env = env;
  }

  start(): this {
    this.child = spawn(process.execPath, ['--import', './src/module-hooks.ts', ...this.#args], {
      cwd: root, env: { ...process.env, ...this.#env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => { this.output = (this.output + d).slice(-20_000); };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    return this;
  }

  kill(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

/** Polls `GET {url}/api/ready` until it answers 200; the milliseconds it took. */
export async function untilReady(url: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    try {
      const res = await fetch(`${url}/api/ready`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) return performance.now() - started;
    } catch { /* not up yet */ }
    if (performance.now() - started > timeoutMs) throw new Error(`${url} not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A round-robin reverse proxy over the servers, as a load balancer without health checks: a
 * backend that refuses the connection answers 502, which the load counts as an error.
 */
export async function startProxy(backends: string[], port = 0): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const server = http.createServer((req, res) => {
    const target = new URL(backends[next++ % backends.length]!);
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'backend unavailable', code: 'bad_gateway' }));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => { server.closeAllConnections(); return new Promise((r) => server.close(() => r())); },
  };
}

/** Requests and failures of the load, with when each failure happened (ms since the run started). */
export class Tally {
  requests = 0;
  readonly failures: Array<{ at: number; what: string }> = [];
  readonly startedAt: number;
  constructor(startedAt: number) {
    this.startedAt = startedAt;
  }

  /** A request's outcome: true when it answered below 500 (a 4xx is an answer, not an outage). */
  async send(what: string, request: () => Promise<Response>): Promise<Response | undefined> {
    this.requests++;
    try {
      const res = await request();
      if (res.status < 500) return res;
      this.failures.push({ at: performance.now() - this.startedAt, what: `${what}: ${res.status} ${(await res.text()).slice(0, 120)}` });
    } catch (err) {
      this.failures.push({ at: performance.now() - this.startedAt, what: `${what}: ${(err as Error).message}` });
    }
    return undefined;
  }

  failuresBetween(fromMs: number, toMs: number): number {
    return this.failures.filter((f) => f.at >= fromMs && f.at < toMs).length;
  }
}
