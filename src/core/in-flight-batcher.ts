/**
 * Group commit for small writes: the first item goes at once, alone; items that arrive while a batch
 * is in flight wait for it and then go together, as one statement. An idle system pays no delay, and
 * a busy one pays the statement's fixed cost (a round trip, a parse, a commit and its WAL flush) once
 * per batch instead of once per item, which is most of what a one-row write costs.
 *
 * A failed batch of several items is retried one item at a time, so one bad item (a constraint it
 * breaks) fails its own caller only, and a transient failure reaches each caller as its own error.
 */
export class InFlightBatcher<I, O> {
  readonly #run: (items: I[]) => Promise<O[]>;
  readonly #maxBatch: number;
  #waiting: Array<{ item: I; resolve: (out: O) => void; reject: (err: unknown) => void }> = [];
  #inFlight = false;

  /** `run` answers each item, in the order given. */
  constructor(run: (items: I[]) => Promise<O[]>, options: { maxBatch?: number } = {}) {
    this.#run = run;
    this.#maxBatch = options.maxBatch ?? 64;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      if (!this.#inFlight) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#inFlight = true;
    while (this.#waiting.length) {
      const batch = this.#waiting.splice(0, this.#maxBatch);
      try {
        const out = await this.#run(batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(out[i]!));
      } catch (err) {
        if (batch.length === 1) {
          batch[0]!.reject(err);
          continue;
        }
        for (const w of batch) {
          try {
            w.resolve((await this.#run([w.item]))[0]!);
          } catch (alone) {
            w.reject(alone);
          }
        }
      }
    }
    this.#inFlight = false;
  }
}
