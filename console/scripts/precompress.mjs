// After `vite build`: a brotli (quality 11) and a gzip (level 9) copy beside each built asset of 1 KB or
// more, which the server sends as they are (@fastify/static's preCompressed) instead of compressing
// every answer on the fly at the low quality a live request can afford (brotli 4: no smaller than gzip).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const dist = path.resolve(import.meta.dirname, '../dist');
const COMPRESSIBLE = /\.(?:js|css|svg|json|html|txt|map)$/;
let files = 0;
for (const entry of fs.readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !COMPRESSIBLE.test(entry.name)) continue;
  const file = path.join(entry.parentPath, entry.name);
  const bytes = fs.readFileSync(file);
  if (bytes.length < 1024) continue;
  fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(bytes, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  }));
  fs.writeFileSync(`${file}.gz`, zlib.gzipSync(bytes, { level: 9 }));
  files++;
}
console.log(`precompressed ${files} files (brotli 11, gzip 9)`);
