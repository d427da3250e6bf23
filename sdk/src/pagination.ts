/** A page of a list, as the API returns it. */
export interface Page<T> {
  data: T[];
  pagination: { next_cursor: string | null; has_more: boolean; page_size: number; total_count?: number };
}

/**
 * Every item of a list, fetching pages as the loop needs them (keyset cursors: items created while
 * the loop runs do not shift the pages). `for await (const call of sb.calls.list()) ...`
 */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.pagination.has_more && page.pagination.next_cursor ? page.pagination.next_cursor : undefined;
  } while (cursor);
}
