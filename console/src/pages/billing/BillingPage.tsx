import { useEffect, useState } from 'react';
import { Button, Group, NumberInput, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client.ts';
import { useCredentials } from '../../auth/useCredentials.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';
import { atLeast, useMe } from '../../hooks/useMe.ts';
import { formatCredits, formatDateTime, humanize } from '../../format.ts';

/** The balance, the ledger, and buying credits through the payment provider's checkout (and back here). */
export function BillingPage() {
  const { orgId } = useCredentials();
  const { role } = useMe();
  const [params, setParams] = useSearchParams();
  const credits = useQuery({ queryKey: [orgId, 'credits'], queryFn: async () => (await unwrap(api.GET('/api/billing/credits'))).data });
  const ledger = useInfiniteQuery({
    queryKey: [orgId, 'transactions'],
    queryFn: ({ pageParam }) => unwrap(api.GET('/api/billing/transactions', { params: { query: { page_size: 50, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    initialPageParam: '',
    getNextPageParam: (page) => (page.pagination.has_more ? page.pagination.next_cursor ?? undefined : undefined),
  });

  // Back from the checkout: say how it went, once.
  const result = params.get('checkout');
  useEffect(() => {
    if (!result) return;
    notifications.show(result === 'success'
      ? { title: 'Payment complete', message: 'The credits are in your balance as soon as the payment is confirmed.', color: 'green' }
      : { title: 'Checkout cancelled', message: 'Nothing was charged.' });
    setParams({}, { replace: true });
  }, [result, setParams]);

  const rows = ledger.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <Stack>
      <Title order={1}>Billing</Title>
      <Group align="stretch">
        <Paper withBorder p="md" miw={220}>
          <Text size="sm" c="dimmed">Balance</Text>
          <Text size="xl" fw={700} data-testid="balance">{credits.data ? `${formatCredits(credits.data.balance)} credits` : '…'}</Text>
          {credits.data ? <Text size="xs" c="dimmed">{credits.data.credits_per_dollar} credits per dollar</Text> : null}
        </Paper>
        {atLeast(role, 'admin') ? <BuyCredits perDollar={credits.data?.credits_per_dollar} /> : null}
      </Group>
      <ErrorAlert error={credits.error ?? ledger.error} />
      <Title order={2} size="h3">Ledger</Title>
      {rows.length === 0 && ledger.isSuccess ? <Text c="dimmed">No credits moved yet.</Text> : (
        <Table.ScrollContainer minWidth={700}>
          <Table striped aria-label="Ledger" data-testid="ledger">
            <Table.Thead>
              <Table.Tr><Table.Th>When</Table.Th><Table.Th>Kind</Table.Th><Table.Th>Description</Table.Th><Table.Th ta="right">Amount (credits)</Table.Th><Table.Th ta="right">Balance after (credits)</Table.Th></Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((t) => (
                <Table.Tr key={t.transaction_id}>
                  <Table.Td>{formatDateTime(t.created_at)}</Table.Td><Table.Td>{humanize(t.kind)}</Table.Td><Table.Td>{t.description}</Table.Td>
                  <Table.Td ta="right">{t.amount > 0 ? '+' : ''}{formatCredits(t.amount)}</Table.Td><Table.Td ta="right">{formatCredits(t.balance_after)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {ledger.hasNextPage ? <Button variant="subtle" onClick={() => void ledger.fetchNextPage()} loading={ledger.isFetchingNextPage}>Load more</Button> : null}
    </Stack>
  );
}

// The API's limits (whole dollars); said before sending, and the API's answer shown if it differs.
const MIN_DOLLARS = 5;
const MAX_DOLLARS = 10_000;

/** What is wrong with an amount, in words; never corrected silently (a clamped amount is not what was asked). */
function amountProblem(amount: number | string): string | undefined {
  if (amount === '' || !Number.isFinite(Number(amount))) return 'Enter an amount in whole dollars';
  const dollars = Number(amount);
  if (!Number.isInteger(dollars)) return 'Use whole dollars';
  if (dollars < MIN_DOLLARS) return `The minimum purchase is $${MIN_DOLLARS}`;
  if (dollars > MAX_DOLLARS) return `The maximum purchase is $${MAX_DOLLARS.toLocaleString()}`;
  return undefined;
}

function BuyCredits({ perDollar }: { perDollar: number | undefined }) {
  const [amount, setAmount] = useState<number | string>(20);
  const [tried, setTried] = useState(false);
  const problem = amountProblem(amount);
  const purchase = useMutation({
    mutationFn: async () => unwrap(api.POST('/api/billing/credits/purchase', { body: { amount: Number(amount) } })),
    onSuccess: (session) => window.location.assign(session.checkout_url),
  });
  const error = (tried || amount !== 20) && problem ? problem : fieldError(purchase.error, 'amount');
  return (
    <Paper withBorder p="md" component="form" noValidate onSubmit={(e: React.FormEvent) => { e.preventDefault(); setTried(true); if (!problem) purchase.mutate(); }}>
      <Group align="flex-start">
        <NumberInput label="Amount (dollars)" clampBehavior="none" allowDecimal={false} allowNegative={false} value={amount} onChange={setAmount} w={200}
          error={error} description={perDollar && !problem ? `${(Number(amount) * perDollar).toLocaleString()} credits` : `$${MIN_DOLLARS} to $${MAX_DOLLARS.toLocaleString()}`} />
        <Button type="submit" mt={25} loading={purchase.isPending}>Buy credits</Button>
      </Group>
      {purchase.error && !fieldError(purchase.error, 'amount') ? <ErrorAlert error={purchase.error} /> : null}
    </Paper>
  );
}
