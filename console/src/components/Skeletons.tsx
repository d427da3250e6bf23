import { Skeleton, Stack, VisuallyHidden } from '@mantine/core';

/** A list's rows while they load: the table's shape rather than a spinner, so the page does not jump. */
export function TableSkeleton({ label, rows = 5 }: { label: string; rows?: number }) {
  return (
    <Stack gap="xs" role="status" aria-busy="true" data-testid="skeleton">
      <VisuallyHidden>{label}</VisuallyHidden>
      <Skeleton height={34} />
      {Array.from({ length: rows }, (_, i) => <Skeleton key={i} height={28} opacity={1 - i * 0.12} />)}
    </Stack>
  );
}

/** A page while its code loads. */
export function PageSkeleton() {
  return (
    <Stack gap="md" role="status" aria-busy="true">
      <VisuallyHidden>Loading the page</VisuallyHidden>
      <Skeleton height={36} width={240} />
      <TableSkeleton label="" rows={4} />
    </Stack>
  );
}
