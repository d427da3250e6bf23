import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { testEnv } from './env.ts';
import { asRole, type TestOrg } from './fixtures.ts';

/** A multipart/form-data body, built by hand so tests control every byte. */
export function multipart(fields: Record<string, string>, file?: { name: string; content: Buffer | string; type?: string; field?: string }) {
  const boundary = `----sbtest${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.name}"\r\nContent-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`));
    parts.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function uploadFile(org: TestOrg, name: string, file: { name: string; content: Buffer | string }, extra: Record<string, string> = {}, app?: FastifyInstance) {
  const target = app ?? (await testEnv()).app;
  const body = multipart({ name, ...extra }, file);
  return target.inject({ method: 'POST', url: '/api/knowledge-base', headers: asRole(org, 'agent_manager', { 'content-type': body.contentType }), payload: body.payload });
}

export async function createTextDocument(org: TestOrg, name: string, text: string, extra: Record<string, unknown> = {}) {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'POST', url: '/api/knowledge-base', headers: asRole(org, 'agent_manager'), payload: { name, text, ...extra } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { documentation_id: string; name: string; type: string; message_id: string };
}

/** Polls the document until it leaves pending/processing (the in-process worker indexes it). */
export async function waitForProcessing(org: TestOrg, documentId: string, timeoutMs = 20_000, app?: FastifyInstance) {
  const target = app ?? (await testEnv()).app;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await target.inject({ url: `/api/knowledge-base/${documentId}`, headers: asRole(org, 'user') });
    const doc = res.json().data;
    if (doc && (doc.processing_status === 'completed' || doc.processing_status === 'failed')) return doc;
    if (Date.now() > deadline) throw new Error(`document ${documentId} still ${doc?.processing_status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function search(org: TestOrg, query: string, extra: Record<string, unknown> = {}) {
  const { app } = await testEnv();
  return app.inject({ method: 'POST', url: '/api/knowledge-base/search', headers: asRole(org, 'user'), payload: { query, ...extra } });
}
