/** A one-line progress bar on a terminal; a line every tenth of the way otherwise (logs, CI). */
export class ProgressBar {
  readonly #total: number;
  readonly #label: string;
  readonly #out: NodeJS.WriteStream;
  #done = 0;
  #lastTenth = -1;
  constructor(label: string, total: number, out: NodeJS.WriteStream = process.stderr) {
    this.#label = label;
    this.#total = Math.max(total, 1);
    this.#out = out;
  }

  tick(): void {
    this.#done += 1;
    const ratio = this.#done / this.#total;
    if (this.#out.isTTY) {
      const width = 30;
      const filled = Math.round(ratio * width);
      this.#out.write(`\r${this.#label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${this.#done}/${this.#total}`);
      if (this.#done >= this.#total) this.#out.write('\n');
      return;
    }
    const tenth = Math.floor(ratio * 10);
    if (tenth !== this.#lastTenth) {
      this.#lastTenth = tenth;
      this.#out.write(`${this.#label}: ${this.#done}/${this.#total}\n`);
    }
  }
}
