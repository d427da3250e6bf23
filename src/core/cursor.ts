import { Errors } from './errors.ts';
import { unstorableText } from './http/input-guards.ts';
import { isStorableInstant } from './time-zones.ts';

/**
 * Opaque keyset cursors: base64url of the position after which the next page starts
 * (the sort value and the id that breaks ties). Lists never use OFFSET, so pages stay
 * stable while rows are inserted.
 */
export interface KeysetPosition {
  /** The sort column's value of the last row returned (ISO string for timestamps). */
  value: string | number | null;
  id: string;
}

export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([position.value, position.id])).toString('base64url');
}

/** A string a cursor may carry: short, and storable (no NUL, no lone surrogate). */
const cursorText = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length <= max && unstorableText(value) === undefined;

/**
 * Decodes a cursor, or 400 `invalid_cursor`. Cursors come from clients, so what they decode to is
 * checked as strictly as any input: a text value and the id must be storable text, a number finite.
 */
export function decodeCursor(cursor: string): KeysetPosition {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && cursorText(parsed[1], 200)) {
      const [value, id] = parsed as [unknown, string];
      if (value === null || cursorText(value, 1000) || (typeof value === 'number' && Number.isFinite(value))) return { value, id };
    }
  } catch {
    // fall through: any undecodable cursor is the caller's mistake
  }
  throw Errors.invalidCursor();
}

/** Decodes a cursor whose sort value must be a timestamp the database can compare (years 1 to 9999). */
export function decodeTimeCursor(cursor: string): { at: Date; id: string } {
  const { value, id } = decodeCursor(cursor);
  const at = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (!isStorableInstant(at)) throw Errors.invalidCursor();
  return { at, id };
}

/** Decodes a cursor whose sort value must be a whole number of the given range (e.g. a size in bytes). */
export function decodeIntegerCursor(cursor: string, min = 0): { value: number; id: string } {
  const { value, id } = decodeCursor(cursor);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) throw Errors.invalidCursor();
  return { value, id };
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  hasMore: boolean;
  totalCount?: number;
}

/**
 * Turns `limit + 1` fetched rows into a page: the extra row only says whether more exist.
 */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  position: (row: R) => KeysetPosition,
  map: (row: R) => T,
  totalCount?: number,
): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    items: pageRows.map(map),
    nextCursor: hasMore && last ? encodeCursor(position(last)) : null,
    hasMore,
    totalCount,
  };
}

/** A repository whose rows page newest first by (created_at, id). */
export interface NewestFirstSource<R extends { createdAt: Date; id: string }> {
  list(orgId: string, limit: number, before?: { at: Date; id: string }): Promise<R[]>;
  count(orgId: string): Promise<number>;
}

/** One page of a newest-first list, with `total_count`. */
export async function pageNewestFirst<R extends { createdAt: Date; id: string }, T>(
  source: NewestFirstSource<R>,
  orgId: string,
  query: { page_size: number; cursor?: string },
  map: (row: R) => T,
): Promise<Page<T>> {
  const before = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
  const [rows, total] = await Promise.all([source.list(orgId, query.page_size + 1, before), source.count(orgId)]);
  return toPage(rows, query.page_size, (r) => ({ value: r.createdAt.toISOString(), id: r.id }), map, total);
}
