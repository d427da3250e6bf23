import { useState } from 'react';
import { Button, Group, Paper, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';

/** What an agent would find: the matching chunks with their document, page and score. */
export function KnowledgeSearch() {
  const [query, setQuery] = useState('');
  const search = useMutation({ mutationFn: async () => (await unwrap(api.POST('/api/knowledge-base/search', { body: { query, top_k: 5 } }))).data });
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h4" mb="sm">Search</Title>
      <form onSubmit={(e) => { e.preventDefault(); search.mutate(); }}>
        <Group align="flex-end">
          <TextInput label="Search the documents" value={query} onChange={(e) => setQuery(e.currentTarget.value)} required style={{ flex: 1 }} />
          <Button type="submit" loading={search.isPending}>Search</Button>
        </Group>
      </form>
      <ErrorAlert error={search.error} />
      {search.data ? (
        <Stack mt="md" gap="sm" data-testid="search-hits">
          {search.data.length === 0 ? <Text c="dimmed">Nothing found.</Text> : null}
          {search.data.map((hit, i) => (
            <Paper key={i} withBorder p="sm" bg="gray.0">
              <Group justify="space-between">
                <Text fw={600} size="sm">{hit.name}{hit.page !== null ? `, page ${hit.page}` : ''}</Text>
                <Text size="xs" c="dimmed">score {hit.score.toFixed(4)}</Text>
              </Group>
              <Text size="sm" lineClamp={4}>{hit.text}</Text>
            </Paper>
          ))}
        </Stack>
      ) : null}
    </Paper>
  );
}
