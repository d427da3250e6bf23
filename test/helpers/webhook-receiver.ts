import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** A request the receiver got, and what verifying it with each known secret gave. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The event, when some secret verified the signature (as a customer's receiver would). */
  event: any;
  /** Which of the secrets verified it. */
  verifiedWith: string[];
  path: string;
}

/** What the receiver answers a request: a status and body, after an optional delay; `hang` never answers. */
export type Answer = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

/**
 * A customer's webhook receiver on 127.0.0.2 (the tests' allowed network): it verifies every
 * request with the `standardwebhooks` library against the secrets it was given.
 */
export async function startReceiver(options: { host?: string; answer?: (req: Received, n: number) => Answer } = {}) {
  const received: Received[] = [];
  const secrets: string[] = [];
  const waiters: Array<{ until: (r: Received[]) => boolean; resolve: () => void }> = [];
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const verifiedWith: string[] = [];
    let event: any;
    for (const secret of secrets) {
      try {
        event = new Webhook(secret).verify(body, req.headers as Record<string, string>);
        verifiedWith.push(secret);
      } catch {
        // not this secret
      }
    }
    const entry: Received = { headers: req.headers, body, event, verifiedWith, path: req.url ?? '/' };
    received.push(entry);
    for (const w of [...waiters]) if (w.until(received)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(); }
    const answer = options.answer?.(entry, received.length) ?? { status: 200, body: 'ok' };
    if (answer === 'hang') return; // the connection stays open with no answer
    const send = () => { res.writeHead(answer.status, answer.headers ?? {}); res.end(answer.body ?? ''); };
    if (answer.delayMs) setTimeout(send, answer.delayMs); else send();
  });
  const host = options.host ?? '127.0.0.2';
  await new Promise<void>((r) => server.listen(0, host, r));
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    secrets,
    /** Resolves once `until` holds for the requests received so far (or rejects after `timeoutMs`). */
    waitFor(until: (r: Received[]) => boolean, timeoutMs = 30_000): Promise<void> {
      if (until(received)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} requests)`)), timeoutMs);
        waiters.push({ until, resolve: () => { clearTimeout(timer); resolve(); } });
      });
    },
    ofType: (type: string) => received.filter((r) => r.event?.type === type),
    close: () => { server.closeAllConnections(); return new Promise((r) => server.close(r)); },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
