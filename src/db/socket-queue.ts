/**
 * pglite-socket 0.2.17 serves many connections from one PGlite session, one protocol message at
 * a time. Two flaws of its queue matter under concurrency, and this replaces its scheduling:
 *
 * 1. It keeps a connection's turn only inside a transaction. Outside one, nothing stops another
 *    connection's messages from running between the Parse, Bind, Execute and Sync of an
 *    extended-protocol query on the one shared session. Here a connection keeps its turn from
 *    its first extended-protocol message up to its Sync.
 * 2. A failed message returned without clearing `processing`, stalling every connection.
 */
interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  resolve(bytes: number): void;
  reject(err: unknown): void;
  onData(data: Uint8Array): void;
}

interface QueryQueue {
  queue: QueuedMessage[];
  processing: boolean;
  lastHandlerId: number | null;
  db: {
    isInTransaction(): boolean;
    runExclusive<T>(fn: () => Promise<T>): Promise<T>;
    execProtocolRawStream(message: Uint8Array, options: { onRawData(data: Uint8Array): void }): Promise<unknown>;
  };
  processQueue(): Promise<void>;
  clearQueueForHandler(handlerId: number): void;
}

// Messages after which the same connection must go on: Parse, Bind, Describe, Execute, Close, Flush.
const EXTENDED = new Set(['P', 'B', 'D', 'E', 'C', 'H'].map((c) => c.charCodeAt(0)));

export function fixSocketQueue(server: unknown): void {
  const queue = (server as { queryQueue?: QueryQueue }).queryQueue;
  if (!queue || typeof queue.processQueue !== 'function') throw new Error('pglite-socket internals changed: review src/db/socket-queue.ts');
  let pinned: number | null = null; // a connection in the middle of an extended-protocol exchange

  queue.processQueue = async function processQueue(this: QueryQueue) {
    if (this.processing) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const owner = pinned ?? (this.db.isInTransaction() ? this.lastHandlerId : null);
        const index = owner === null ? 0 : this.queue.findIndex((m) => m.handlerId === owner);
        if (index === -1) break; // wait for the owner's next message
        const [item] = this.queue.splice(index, 1) as [QueuedMessage];
        let bytes = 0;
        try {
          await this.db.runExclusive(() => this.db.execProtocolRawStream(item.message, { onRawData: (data) => { bytes += data.length; item.onData(data); } }));
        } catch (err) {
          pinned = null;
          item.reject(err);
          continue;
        }
        pinned = EXTENDED.has(item.message[0]!) ? item.handlerId : null;
        this.lastHandlerId = item.handlerId;
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  };

  const clear = queue.clearQueueForHandler.bind(queue);
  queue.clearQueueForHandler = (handlerId: number) => {
    clear(handlerId);
    if (pinned === handlerId) pinned = null; // a connection that left mid-exchange releases its turn
    void queue.processQueue();
  };
}
