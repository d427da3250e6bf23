/**
 * A test reporter for one shard of `npm test` (scripts/run-tests.ts): writes the run's counts, each
 * file's wall time and each failed test with its error as JSON, so the shards' counts can be added
 * into one summary, the next run can balance its shards by the times measured here, and the run's
 * last lines say why a test failed (a CI log is often read from its end only).
 */
import { inspect } from 'node:util';

type TestEvent = {
  type: string;
  data: {
    file?: string; name?: string; nesting?: number; counts?: Record<string, number>; duration_ms?: number;
    details?: { duration_ms?: number; error?: Error & { failureType?: string; cause?: unknown } };
  };
};

export interface FailedTest {
  file: string;
  name: string;
  error: string;
}

/** Lines of one failure's error kept for the summary: the message, the values compared and the top of the stack. */
const ERROR_LINES = 25;

export default async function* shardSummary(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const fileMs: Record<string, number> = {};
  const failures: FailedTest[] = [];
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
    // A suite that failed only because a test in it failed adds nothing: the test itself is listed.
    const error = data.details?.error;
    if (event.type === 'test:fail' && error && error.failureType !== 'subtestsFailed') {
      // A nested test's event comes before its file's top-level one, so its own file is the one to name.
      const file = data.file?.endsWith('.test.ts') ? data.file : testFile ?? data.file ?? '';
      failures.push({ file, name: data.name ?? '', error: describe(error) });
    }
    // The run's own summary is the one without a file (with --test-isolation=none there is one).
    if (event.type === 'test:summary' && !data.file) counts = { ...data.counts, duration_ms: data.duration_ms ?? 0 };
  }
  yield JSON.stringify({ counts, fileMs, failures });
}

/**
 * The runner wraps what the test threw in `cause`; that is the part worth reading: its message (with
 * an assertion's diff) and the stack frames of the project's own code, not Node's.
 */
function describe(error: Error & { cause?: unknown }): string {
  const thrown = error.cause ?? error;
  const text = thrown instanceof Error && thrown.stack ? thrown.stack : inspect(thrown, { depth: 4, breakLength: 120 });
  const ownLines = text.split('\n').filter((line) => !/^\s+at (?:(?:.*\()?(?:node:|<anonymous>)|async Promise\.all)/.test(line));
  return ownLines.slice(0, ERROR_LINES).join('\n');
}
