/**
 * The knowledge-base benchmarks' generated corpus and queries (bench/kb-search.ts seeds and measures
 * with them; bench/kb-storage.ts reuses the queries on the same chunks). A 32-bit generator
 * (mulberry32): the previous one multiplied past 2^53 and cycled after about 10,500 draws.
 */
export function mulberry32(state: number): () => number {
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);

/** Chunk texts: words drawn squared-uniform (word i with probability ~ 1/sqrt(i)), so the first words are common. */
export function sentences(seed = 42): (words: number) => string {
  const random = mulberry32(seed);
  const word = () => vocabulary[Math.floor(random() ** 2 * vocabulary.length)]!;
  return (words) => Array.from({ length: words }, word).join(' ');
}

/**
 * The queries, from a generator of their own so they do not depend on whether a run seeded: rare
 * (six random words, which match no chunk together) and common (two different words of the 20 most
 * frequent).
 */
export function benchQueries(): { rare: string[]; common: string[] } {
  const random = mulberry32(7);
  const pick = (among: number) => vocabulary[Math.floor(random() * among)]!;
  const rare = [...new Set(Array.from({ length: 200 }, () => Array.from({ length: 6 }, () => pick(vocabulary.length)).join(' ')))];
  const common = [...new Set(Array.from({ length: 400 }, () => `${pick(20)} ${pick(20)}`))].filter((q) => q.split(' ')[0] !== q.split(' ')[1]);
  return { rare, common };
}
