import { Alert, List, Text } from '@mantine/core';
import { ApiError } from '../api/client.ts';
import { allFieldMessages, DESTINATION_REFUSED_HELP } from '../api/fieldMessages.ts';
import { humanize } from '../format.ts';

/**
 * An API error as the server explained it (`detail`), or any other failure's message. A validation
 * error names each field with its message in words (the form shows the same next to the field);
 * an address the outbound rule refused says what to do about it.
 */
export function ErrorAlert({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  if (!error) return null;
  if (error instanceof ApiError && error.errors.length > 0) {
    return (
      <Alert color="red" title={title} role="alert">
        <Text size="sm">Some values need fixing:</Text>
        <List size="sm" data-testid="field-errors">
          {allFieldMessages(error.errors).map(({ field, message }) => <List.Item key={field}>{field ? `${humanize(field)}: ` : ''}{message}</List.Item>)}
        </List>
      </Alert>
    );
  }
  const message = error instanceof ApiError ? error.detail : error instanceof Error ? error.message : String(error);
  return (
    <Alert color="red" title={title} role="alert">
      {message}
      {error instanceof ApiError && error.code === 'destination_refused' ? <Text size="sm" mt="xs">{DESTINATION_REFUSED_HELP}</Text> : null}
    </Alert>
  );
}
