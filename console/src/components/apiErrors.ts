import { ApiError } from '../api/client.ts';

/** A field's validation error from the API, for the input's `error` prop; the detail goes to the form's alert. */
export const fieldError = (error: unknown, field: string) => (error instanceof ApiError ? error.fieldError(field) : undefined);
