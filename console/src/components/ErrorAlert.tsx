import { Alert } from '@mantine/core';
import { ApiError } from '../api/client.ts';

/** An API error as the server explained it (`detail`), or any other failure's message. */
export function ErrorAlert({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  if (!error) return null;
  const message = error instanceof ApiError ? error.detail : error instanceof Error ? error.message : String(error);
  return (
    <Alert color="red" title={title} role="alert">
      {message}
    </Alert>
  );
}
