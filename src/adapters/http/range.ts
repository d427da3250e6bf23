import type { ByteRange } from '../storage/object-store.ts';

/**
 * Reads a `Range` header against a resource of `size` bytes (RFC 9110 §14): one `bytes=` range,
 * `a-b`, `a-` or the suffix `-n`. Returns the range, `unsatisfiable` (answer 416), or undefined
 * to send the whole resource (no header, or a form we do not serve partially such as several ranges).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined;
  const [, first, last] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (start >= size) return 'unsatisfiable';
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (end < start) return undefined; // an invalid range is ignored (RFC 9110 §14.1.1)
  return { start, end };
}
