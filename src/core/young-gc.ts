import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Runs V8's young-generation collection (a scavenge: a millisecond or less when little survives).
 *
 * For code that moves far more bytes than it allocates objects: Node reads every socket chunk into a
 * new buffer, and V8 frees a dead buffer only at its next collection. A process whose JavaScript
 * allocates little (a COPY streamed as bytes) fills its young generation slowly (the worker's is
 * 64 MB once started), so its dead buffers wait for a scavenge or for the external-memory limit,
 * 64 MB above the last full collection: a 1M-call export grew the worker's RSS by 60-78 MB that way
 * (array buffers peaking at 45-65 MB), and by 12-15 MB with a scavenge every 4 MiB streamed. Node
 * has no API for it: the function is V8's `gc`, exposed by setting its flag when first needed (the
 * flag only adds `gc` to contexts created afterwards; nothing else changes).
 */
let scavenge: (() => void) | undefined;

export function collectYoungGarbage(): void {
  if (!scavenge) {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as (options: { type: 'minor' }) => void;
    scavenge = () => gc({ type: 'minor' });
  }
  scavenge();
}
