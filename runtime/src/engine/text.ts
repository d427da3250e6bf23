/** Text rules of the conversation: `{{variable}}` substitution and sentence splitting for speech. */

/** Replaces `{{ name }}` with the call's variable; an unknown name is left as written (so a prompt author sees it). */
export function substituteVariables(template: string, variables: Record<string, string>): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (whole, name: string) => variables[name] ?? whole);
}

/** Words ending in a period that do not end a sentence. */
const ABBREVIATIONS = new Set([
  'dr', 'mr', 'mrs', 'ms', 'prof', 'sr', 'jr', 'st', 'mt', 'vs', 'etc', 'inc', 'ltd', 'co', 'corp', 'no', 'approx',
  'dept', 'est', 'fig', 'ave', 'blvd', 'rd', 'e.g', 'i.e', 'a.m', 'p.m', 'u.s', 'jan', 'feb', 'mar', 'apr', 'jun',
  'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec',
]);

/**
 * Splits streamed text into sentences as it arrives, so the first sentence is spoken before the
 * answer is complete. A sentence ends at . ! ? (or a newline) followed by white space, except after
 * an abbreviation ("Dr.") or inside a number ("3.5"); the rest waits for more text or `end()`.
 */
export class SentenceSplitter {
  #buffer = '';

  push(text: string): string[] {
    this.#buffer += text;
    const sentences: string[] = [];
    let start = 0;
    for (let i = 0; i < this.#buffer.length; i++) {
      const char = this.#buffer[i]!;
      const next = this.#buffer[i + 1];
      if (char === '\n') {
        this.#take(sentences, start, i + 1);
        start = i + 1;
        continue;
      }
      if (char !== '.' && char !== '!' && char !== '?') continue;
      if (next === undefined) break; // the end of a sentence is only known once the next character is
      if (!/\s/.test(next)) continue; // "3.5", "example.com", "?!"
      if (char === '.' && this.#isAbbreviation(start, i)) continue;
      this.#take(sentences, start, i + 1);
      start = i + 1;
    }
    this.#buffer = this.#buffer.slice(start);
    return sentences;
  }

  /** Whatever is left once the stream ended. */
  end(): string[] {
    const rest = this.#buffer.trim();
    this.#buffer = '';
    return rest ? [rest] : [];
  }

  #isAbbreviation(start: number, dot: number): boolean {
    const word = /([A-Za-z.]+)$/.exec(this.#buffer.slice(start, dot))?.[1]?.toLowerCase();
    if (!word) return false;
    return ABBREVIATIONS.has(word) || /^[a-z]$/.test(word); // "J. Smith"
  }

  #take(sentences: string[], from: number, to: number) {
    const sentence = this.#buffer.slice(from, to).trim();
    if (sentence) sentences.push(sentence);
  }
}

/** The words of `text` that fit in `fraction` (0-1) of it, by character count: the played part of a cut sentence. */
export function playedPrefix(text: string, fraction: number): string {
  if (fraction >= 1) return text;
  if (fraction <= 0) return '';
  const limit = Math.floor(text.length * fraction);
  const words = text.split(/(\s+)/);
  let out = '';
  for (const word of words) {
    if ((out + word).length > limit) break;
    out += word;
  }
  return out.trim();
}
