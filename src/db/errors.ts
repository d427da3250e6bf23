/** True when the database refused a write for a unique constraint (Drizzle wraps the pg error). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const pgError = (err as { cause?: { code?: string; constraint?: string } })?.cause ?? (err as { code?: string; constraint?: string });
  return pgError?.code === '23505' && (constraint === undefined || pgError.constraint === constraint);
}
