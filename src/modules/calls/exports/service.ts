import type { Readable } from 'node:stream';
import { Type, type Static } from 'typebox';
import type { Database } from '../../../db/database.ts';
import type { RequestContext } from '../../../core/context.ts';
import { Errors } from '../../../core/errors.ts';
import { newId } from '../../../core/ids.ts';
import type { Logger } from '../../../core/logger.ts';
import { iso } from '../../../core/schemas.ts';
import type { ObjectStore } from '../../../adapters/storage/object-store.ts';
import { defineJob, jobUnit, type JobInfo, type JobUnit } from '../../../jobs/job.ts';
import type { JobQueue } from '../../../jobs/queue.ts';
import type { AuditService } from '../../audit/service.ts';
import { callFiltersOf, type CallFilterInput } from '../call-filter-queries.ts';
import { CallExportRepository, type CallExportRow } from './repository.ts';
import type { CallExport, CreateCallExportBody, ExportFormat } from './schemas.ts';
import { EXPORT_CONTENT_TYPES, exportStream } from './writer.ts';
import { RecordingLinks, type SignedRecording } from '../recordings/links.ts';
import { clientTransaction } from '../../../db/unit-of-work.ts';

type CallExportView = Static<typeof CallExport>;

/** extensions.md §4: a download link lasts an hour; an export and its file are kept 7 days. */
export const EXPORT_LINK_SECONDS = 3600;
export const EXPORT_KEEP_DAYS = 7;

export const CALL_EXPORT = defineJob({
  name: 'call-export',
  payload: Type.Object({ clientId: Type.String(), exportId: Type.String() }),
  // A million calls take minutes: the job counts as lost (its worker died) only after two hours.
  options: (config) => ({ retryLimit: config.retryLimit, retryDelay: 30, expireInSeconds: 7200 }),
});

/** Hourly: exports past their 7 days go, file first. */
export const CALL_EXPORTS_CLEANUP = defineJob({
  name: 'call-exports-cleanup',
  payload: Type.Object({}),
  options: () => ({ retryLimit: 2, retryDelay: 300, expireInSeconds: 900 }),
  cron: '41 * * * *',
});

export interface CallExportDeps {
  database: Database;
  queue: JobQueue;
  store: ObjectStore;
  linkSecret: Buffer;
  publicBaseUrl: string;
  audit: Pick<AuditService, 'record'>;
  log: Logger;
  /** Attempts after the first before an export is marked failed (the queue's retry limit). */
  retryLimit: number;
}

const filenameOf = (row: Pick<CallExportRow, 'id' | 'format'>) => `calls-${row.id}.${row.format}`;
const keyOf = (orgId: string, id: string, format: string) => `${orgId}/exports/${id}.${format}`;

/**
 * Exports of calls (extensions.md §4): a request stores the filters and queues the job in one
 * transaction; the job streams the file writer.ts writes from the database's rows into the
 * object store; the export's view then carries a signed link valid an hour (presigned on S3, signed
 * for the app's own route on local disk).
 */
export class CallExportService {
  readonly #deps: CallExportDeps;
  readonly #links: RecordingLinks;
  constructor(deps: CallExportDeps) {
    this.#deps = deps;
    this.#links = new RecordingLinks(deps.linkSecret, 'switchboard/export-links/v1');
  }

  async create(ctx: RequestContext, input: Static<typeof CreateCallExportBody>): Promise<CallExportView> {
    const { format, include_transcript: includeTranscript, ...filterFields } = input;
    callFiltersOf(filterFields as CallFilterInput, 'body'); // refused now (400), not in the job
    const id = newId('exp');
    const now = new Date();
    const row = await clientTransaction(this.#deps.database, async (tx, client) => {
      const created = await new CallExportRepository(tx).insert(ctx.orgId, {
        id, format, includeTranscript: includeTranscript ?? false, filters: filterFields,
        createdAt: now, expiresAt: new Date(now.getTime() + EXPORT_KEEP_DAYS * 86_400_000),
      });
      await this.#deps.queue.send(CALL_EXPORT, { clientId: ctx.orgId, exportId: id }, { within: client });
      await this.#deps.audit.record(tx, ctx, { action: 'call_export.create', resourceType: 'call_export', resourceId: id, changedFields: Object.keys(input).sort() });
      return created;
    });
    return this.#view(row);
  }

  async get(ctx: RequestContext, id: string): Promise<CallExportView> {
    const row = await new CallExportRepository(this.#deps.database.db).find(ctx.orgId, id);
    if (!row || row.expiresAt <= new Date()) throw Errors.notFound('Export');
    return this.#view(row);
  }

  /**
   * The job: claims the export, streams the file to the store under the export's own key (a retry
   * writes it again whole), then records its row count and size. A failure is retried; the last
   * attempt marks the export failed.
   */
  async run(payload: { clientId: string; exportId: string }, job: JobInfo): Promise<void> {
    const { clientId: orgId, exportId } = payload;
    const exports = new CallExportRepository(this.#deps.database.db);
    const row = await exports.claim(orgId, exportId);
    if (!row) return; // completed, failed or expired already
    try {
      const request = { orgId, filters: callFiltersOf(row.filters as CallFilterInput, 'body'), includeTranscript: row.includeTranscript };
      const format = row.format as ExportFormat;
      const { body, counts } = exportStream(this.#deps.database, request, format);
      const key = keyOf(orgId, exportId, format);
      const stored = await this.#deps.store.putStream(key, body, EXPORT_CONTENT_TYPES[format]);
      await exports.complete(orgId, exportId, { rowCount: counts.rows, bytes: stored.size, objectKey: key });
    } catch (err) {
      this.#deps.log.error({ err, export_id: exportId, attempt: job.retryCount }, 'call export failed');
      if (job.retryCount < this.#deps.retryLimit) throw err;
      await exports.fail(orgId, exportId, 'The export could not be written; create it again');
    }
  }

  /** Deletes exports past their 7 days: the file, then the row (a cleanup that dies between them finishes next hour). */
  async cleanup(now = new Date()): Promise<number> {
    const exports = new CallExportRepository(this.#deps.database.db);
    let deleted = 0;
    for (;;) {
      const expired = await exports.expired(now, 200);
      for (const row of expired) {
        if (row.objectKey) await this.#deps.store.delete(row.objectKey);
        await exports.delete(row.clientId, row.id);
      }
      deleted += expired.length;
      if (expired.length < 200) return deleted;
    }
  }

  /** A signed link of the local store: the file as an attachment; 403 for a bad or expired signature, 404 once it is gone. */
  async openSigned(link: { orgId: string; exportId: string; expires: string }, sig: string): Promise<{ body: Readable; size: number; contentType: string; filename: string }> {
    const signed: SignedRecording = { orgId: link.orgId, callSid: link.exportId, expires: link.expires };
    this.#links.verify(signed, sig);
    const row = await new CallExportRepository(this.#deps.database.db).find(link.orgId, link.exportId);
    if (!row || row.status !== 'completed' || !row.objectKey || row.expiresAt <= new Date()) throw Errors.notFound('Export');
    const format = row.format as ExportFormat;
    return { body: await this.#deps.store.read(row.objectKey), size: row.bytes ?? 0, contentType: EXPORT_CONTENT_TYPES[format], filename: filenameOf(row) };
  }

  async #downloadUrl(row: CallExportRow): Promise<string | null> {
    if (row.status !== 'completed' || !row.objectKey) return null;
    const store = this.#deps.store;
    if (store.signedReadUrl) {
      const format = row.format as ExportFormat;
      return store.signedReadUrl(row.objectKey, EXPORT_LINK_SECONDS, { contentType: EXPORT_CONTENT_TYPES[format], contentDisposition: `attachment; filename="${filenameOf(row)}"` });
    }
    const link = this.#links.sign(row.clientId, row.id, EXPORT_LINK_SECONDS);
    const query = new URLSearchParams({ org: link.orgId, expires: link.expires, sig: link.sig });
    return `${this.#deps.publicBaseUrl.replace(/\/$/, '')}/api/exports/${encodeURIComponent(row.id)}?${query}`;
  }

  async #view(row: CallExportRow): Promise<CallExportView> {
    return {
      export_id: row.id, status: row.status as CallExportView['status'], format: row.format as ExportFormat, include_transcript: row.includeTranscript,
      row_count: row.rowCount, bytes: row.bytes, download_url: await this.#downloadUrl(row), error: row.error,
      created_at: iso(row.createdAt), completed_at: iso(row.completedAt), expires_at: iso(row.expiresAt),
    };
  }
}

export function callExportJobs(service: CallExportService): JobUnit[] {
  return [
    jobUnit(CALL_EXPORT, (payload, job) => service.run(payload, job)),
    jobUnit(CALL_EXPORTS_CLEANUP, async () => {
      await service.cleanup();
    }),
  ];
}
