/**
 * Knowledge-base benchmark on the embedded default (PGlite in a fresh DATA_DIR, the real server in
 * a child process, the in-process worker, the hashed embedder):
 *  - indexing: a generated 100-page PDF from upload to `completed` (target < 15 s);
 *  - memory: the server's peak RSS growth while a 50 MB file is uploaded (target < 64 MB).
 * Results: bench/results/kb.json.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makePdf } from '../test/helpers/files.ts';
import { writeResult } from './lib.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbkb-'));
const port = 3917;
const base = `http://127.0.0.1:${port}`;
const server = spawn(process.execPath, ['src/server.ts'], { env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: '' }, stdio: ['ignore', 'ignore', 'inherit'] });
const memory = (field: 'VmRSS' | 'VmHWM') => Number(/(\d+) kB/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(field))!)![1]) / 1024;

try {
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${base}/api/ready`)).ok && fs.existsSync(path.join(dataDir, 'bootstrap.json'))) break; } catch { /* starting */ }
    if (i > 300) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const boot = JSON.parse(fs.readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'));
  const headers = { 'x-api-key': boot.api_key.key, 'x-organization-id': boot.organization_id };
  const upload = async (name: string, file: Blob, filename: string) => {
    const form = new FormData();
    form.set('name', name);
    form.set('file', file, filename);
    const res = await fetch(`${base}/api/knowledge-base`, { method: 'POST', headers, body: form });
    if (!res.ok) throw new Error(`upload ${res.status}: ${await res.text()}`);
    return ((await res.json()) as any).data.documentation_id as string;
  };
  const waitDone = async (id: string) => {
    for (;;) {
      const doc = ((await (await fetch(`${base}/api/knowledge-base/${id}`, { headers })).json()) as any).data;
      if (doc.processing_status === 'completed' || doc.processing_status === 'failed') return doc;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  // Warm-up: the first PDF loads pdf.js.
  await waitDone(await upload('warm-up', new Blob([await makePdf(['warm up'])]), 'warm.pdf'));

  const sentence = 'The ferry timetable changes in spring and the harbour office posts notices on the pier each Monday morning. ';
  const pages = Array.from({ length: 100 }, (_, i) => `Page ${i + 1}. ${sentence.repeat(30)}`);
  const pdf = await makePdf(pages);
  const started = performance.now();
  const doc = await waitDone(await upload('100 pages', new Blob([pdf]), 'hundred.pdf'));
  const indexingSeconds = (performance.now() - started) / 1000;

  const bigFile = path.join(dataDir, 'big.txt');
  const line = 'lorem ipsum dolor sit amet consectetur adipiscing elit\n';
  fs.writeFileSync(bigFile, line.repeat(Math.floor((50 * 1024 * 1024 - 1024) / line.length)));
  await new Promise((r) => setTimeout(r, 2000)); // let the indexing above settle
  const rssBefore = memory('VmRSS');
  let rssMax = rssBefore;
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, memory('VmRSS')); }, 10);
  const uploadStarted = performance.now();
  await upload('50 MB', await fs.openAsBlob(bigFile), 'big.txt');
  const uploadSeconds = (performance.now() - uploadStarted) / 1000;
  clearInterval(sampler);

  const result = {
    machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GB`,
    database: 'embedded PGlite (default)',
    indexing_100_page_pdf: {
      pdf_bytes: pdf.length, status: doc.processing_status, page_count: doc.page_count, chunks: doc.vector_count, words: doc.word_count,
      seconds_upload_to_completed: Number(indexingSeconds.toFixed(2)), target_seconds: 15,
    },
    upload_50mb: {
      bytes: fs.statSync(bigFile).size, seconds: Number(uploadSeconds.toFixed(2)),
      rss_before_mb: Math.round(rssBefore), rss_max_during_upload_mb: Math.round(rssMax),
      rss_growth_mb: Math.round(rssMax - rssBefore), target_growth_mb: 64,
      note: 'server VmRSS sampled every 10 ms from the request start to its response (the indexing job runs after)',
    },
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('kb', result)}`);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
