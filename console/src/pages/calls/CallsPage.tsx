import { useEffect, useRef } from 'react';
import { Anchor, Button, Group, Stack, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { TableSkeleton } from '../../components/Skeletons.tsx';
import { CallFilters } from './CallFilters.tsx';
import { CallsTable } from './CallsTable.tsx';
import { ExportButton } from './ExportButton.tsx';
import { queryFromParams, type CallQuery } from './filters.ts';

const PAGE_SIZE = 50;

/** Every call of the organization, newest first, filtered by the address bar's parameters, a page at a time as one scrolls. */
export function CallsPage() {
  const [params, setParams] = useSearchParams();
  const { orgId } = useCredentials();
  const filters = queryFromParams(params);
  const calls = useInfiniteQuery({
    queryKey: [orgId, 'calls', filters],
    queryFn: ({ pageParam }) =>
      unwrap(api.GET('/api/calls', { params: { query: { ...filters, limit: PAGE_SIZE, ...(pageParam ? { cursor: pageParam } : {}) } as CallQuery } })),
    initialPageParam: '',
    getNextPageParam: (page) => (page.pagination.has_more ? page.pagination.next_cursor ?? undefined : undefined),
    // Live while only the first page is shown (refreshing many pages would cost more than it tells).
    refetchInterval: (query) => ((query.state.data?.pages.length ?? 0) <= 1 ? 15_000 : false),
  });

  const sentinel = useRef<HTMLDivElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = calls;
  useEffect(() => {
    const element = sentinel.current;
    if (!element || !hasNextPage) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !isFetchingNextPage) void fetchNextPage();
    }, { rootMargin: '400px' });
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  const filtered = Object.values(filters).some((v) => v !== undefined && v !== '');
  const rows = calls.data?.pages.flatMap((page) => page.data) ?? [];
  // When the first rows are on screen, for bench/console.ts (navigation to calls table).
  const shown = rows.length > 0;
  useEffect(() => { if (shown && performance.getEntriesByName('calls-table-rendered').length === 0) performance.mark('calls-table-rendered'); }, [shown]);
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Calls</Title>
        <Group gap="xs">
          <ExportButton filters={filters} />
          <Button variant="default" size="xs" onClick={() => void calls.refetch()} loading={calls.isRefetching}>Refresh</Button>
        </Group>
      </Group>
      <CallFilters params={params} onChange={setParams} />
      <ErrorAlert error={calls.error} title="The calls could not be loaded" />
      {calls.isPending ? <TableSkeleton label="Loading calls" rows={8} /> : filtered || rows.length > 0 ? <CallsTable calls={rows} searching={Boolean(filters.q)} /> : null}
      {calls.isSuccess && rows.length === 0 ? (filtered ? <Text c="dimmed">No call matches.</Text> : (
        <EmptyState title="No calls yet">
          Calls appear here as soon as an agent answers or places one, with their transcripts, recordings and costs.
          Route a number to an agent on the <Anchor component={Link} to="/phone-numbers" underline="always">Phone numbers</Anchor> page,
          or follow the steps on <Anchor component={Link} to="/" underline="always">Get started</Anchor>.
        </EmptyState>
      )) : null}
      <div ref={sentinel} />
      {hasNextPage ? (
        <Button variant="subtle" onClick={() => void fetchNextPage()} loading={isFetchingNextPage}>Load more calls</Button>
      ) : rows.length > 0 ? <Text size="sm" c="dimmed">{rows.length} calls, all shown.</Text> : null}
    </Stack>
  );
}
