/** Longest snippet, in characters (code points), extensions.md §4. */
export const SNIPPET_MAX = 200;
/** Characters of the turn kept before its first matched word, so the match reads in context. */
export const SNIPPET_LEAD = 60;

const MARKS = /[\u0002\u0003]/gu;

/**
 * At most 200 characters of the best matching turn, from `ts_headline` text whose matched words are
 * between \u0002 and \u0003: the turn itself when it is short enough, otherwise a window that starts
 * shortly before the first match, at a word's start. Without a turn (no transcript) it is empty.
 */
export function snippetOf(marked: string | null): string {
  if (!marked) return '';
  const firstMark = marked.indexOf('\u0002');
  const characters = Array.from(marked.replace(MARKS, ''));
  if (characters.length <= SNIPPET_MAX) return characters.join('').trim();
  const matchAt = firstMark < 0 ? 0 : Array.from(marked.slice(0, firstMark).replace(MARKS, '')).length;
  let start = Math.max(0, Math.min(matchAt - SNIPPET_LEAD, characters.length - SNIPPET_MAX));
  // Begin at a word's start: move forward past the partial word (never beyond the match itself).
  while (start > 0 && start < matchAt && !/\s/u.test(characters[start - 1]!)) start++;
  return characters.slice(start, start + SNIPPET_MAX).join('').trim();
}
