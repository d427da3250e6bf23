/**
 * A test reporter for one shard of `npm test` (scripts/run-tests.ts): writes the run's counts and
 * each file's wall time as JSON, so the shards' counts can be added into one summary and the next
 * run can balance its shards by the times measured here.
 */
type TestEvent = { type: string; data: { file?: string; nesting?: number; details?: { duration_ms?: number }; counts?: Record<string, number>; duration_ms?: number } };

export default async function* shardSummary(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const fileMs: Record<string, number> = {};
  let counts: Record<string, number> | undefined;
  // A suite declared by a helper (the auth matrix) carries the helper's file: it is counted to the
  // test file whose top-level test ran last, which is the file that called the helper, or its neighbour.
  let testFile: string | undefined;
  for await (const event of source) {
    const { data } = event;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && data.nesting === 0 && data.file) {
      if (data.file.endsWith('.test.ts')) testFile = data.file;
      const file = testFile ?? data.file;
      fileMs[file] = (fileMs[file] ?? 0) + (data.details?.duration_ms ?? 0);
    }
    // The run's own summary is the one without a file (with --test-isolation=none there is one).
    if (event.type === 'test:summary' && !data.file) counts = { ...data.counts, duration_ms: data.duration_ms ?? 0 };
  }
  yield JSON.stringify({ counts, fileMs });
}
