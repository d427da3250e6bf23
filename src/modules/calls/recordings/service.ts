import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Db } from '../../../db/database.ts';
import type { RequestContext } from '../../../core/context.ts';
import { Errors } from '../../../core/errors.ts';
import { spool, TooLargeError } from '../../../adapters/storage/spool.ts';
import type { ByteRange, ObjectStore } from '../../../adapters/storage/object-store.ts';
import { parseRange } from '../../../adapters/http/range.ts';
import { CallRepository, type CallRow } from '../repository.ts';
import { AUDIO_CONTENT_TYPES, audioProblem, declaredFormat, type AudioFormat } from './audio.ts';
import { RecordingLinks, type SignedRecording } from './links.ts';
import { toCall } from '../service.ts';
import type { AuditService } from '../../audit/service.ts';
import type { EventOutbox } from '../../../platform/outbox.ts';
import { transaction } from '../../../db/unit-of-work.ts';

/** The specification's lifetimes: a stream URL lasts an hour, the download's internal link five minutes. */
export const STREAM_LINK_SECONDS = 3600;
export const DOWNLOAD_LINK_SECONDS = 300;

export interface RecordingBody {
  /** The bytes: a file on this machine (sent through reused buffers) or a stream. */
  source: { file: string } | { stream: Readable };
  /** Bytes of this response (the range's length for a partial one). */
  length: number;
  size: number;
  range: ByteRange | undefined;
  contentType: string;
  filename: string;
}

export interface RecordingDeps {
  db: Db;
  store: ObjectStore;
  linkSecret: Buffer;
  publicBaseUrl: string;
  tmpDir: string;
  maxBytes: number;
  /** Every link issued and every download is recorded (`recording.access`). */
  audit: Pick<AuditService, 'record'>;
  /** recording.ready, in the transaction that switches the call to its new recording. */
  outbox: EventOutbox;
}

function formatOf(contentType: string): AudioFormat {
  return contentType === AUDIO_CONTENT_TYPES.mp3 ? 'mp3' : 'wav';
}

function filenameOf(call: CallRow): string {
  return `recording_${call.toNumber}.${formatOf(call.recordingContentType ?? '')}`;
}

/** Recordings: uploaded by the runtime to the object store, played through signed links, downloaded whole. */
export class RecordingService {
  readonly #deps: RecordingDeps;
  readonly #calls: CallRepository;
  readonly #links: RecordingLinks;
  constructor(deps: RecordingDeps) {
    this.#deps = deps;
    this.#calls = new CallRepository(deps.db);
    this.#links = new RecordingLinks(deps.linkSecret);
  }

  /**
   * Stores an uploaded body as the call's recording (replacing any earlier one). The call and the
   * type are checked before a byte is read; the body streams to disk under the size limit and its
   * header is checked before it reaches the store.
   *
   * Each upload is an object of its own, and the call is switched to it on its locked row: of
   * concurrent uploads the last to finish wins whole, and every object it replaced is deleted.
   */
  async upload(ctx: RequestContext, callSid: string, upload: { contentType: string | undefined; body: Readable }) {
    const format = declaredFormat(upload.contentType);
    if (!format) throw Errors.unsupportedMediaType('A recording is sent as audio/wav or audio/mpeg');
    const call = await this.#calls.findBySid(ctx.orgId, callSid);
    if (!call) throw Errors.notFound('Call');
    if (!call.recordingEnabled) throw Errors.conflict('recording_disabled', "The call's agent has recording turned off");

    let file;
    try {
      file = await spool(upload.body, { dir: this.#deps.tmpDir, maxBytes: this.#deps.maxBytes, keepSource: true });
    } catch (err) {
      if (err instanceof TooLargeError) throw Errors.payloadTooLarge(`A recording is at most ${this.#deps.maxBytes} bytes`);
      throw err;
    }
    try {
      if (file.size === 0) throw Errors.validation('The recording is empty', [{ path: 'body', message: 'is empty' }]);
      const problem = audioProblem(format, file.head);
      if (problem) throw Errors.unsupportedMediaType(`The body is not a valid ${format === 'wav' ? 'WAV' : 'MP3'} file: ${problem}`);
      const contentType = AUDIO_CONTENT_TYPES[format];
      const key = `${ctx.orgId}/recordings/${callSid}/${randomBytes(8).toString('hex')}.${format}`;
      const stored = await this.#deps.store.putFile(key, file.path, contentType);
      let switched;
      try {
        switched = await transaction(this.#deps.db, async (tx) => {
          const calls = new CallRepository(tx);
          const current = await calls.findBySid(ctx.orgId, callSid, { forUpdate: true });
          if (!current) throw Errors.notFound('Call'); // deleted while the body arrived
          const updated = await calls.update(ctx.orgId, callSid, { recordingKey: key, recordingContentType: contentType, recordingBytes: stored.size, recordingDeletedAt: null });
          await this.#deps.audit.record(tx, ctx, { action: 'recording.upload', resourceType: 'recording', resourceId: callSid, changedFields: ['recording'] });
          await this.#deps.outbox.emit(tx, ctx.orgId, 'recording.ready', { call_sid: callSid, content_type: contentType, bytes: stored.size }, { agentId: updated.agentId });
          return { updated, replaced: current.recordingKey };
        });
      } catch (err) {
        await this.#deps.store.delete(key).catch(() => {});
        throw err;
      }
      if (switched.replaced && switched.replaced !== key) await this.#deps.store.delete(switched.replaced);
      return toCall(switched.updated);
    } finally {
      await file.discard();
    }
  }

  #recordAccess(ctx: RequestContext, callSid: string, how: 'stream' | 'download'): Promise<void> {
    return this.#deps.audit.record(this.#deps.db, ctx, { action: 'recording.access', resourceType: 'recording', resourceId: callSid, changedFields: [how] });
  }

  async #withRecording(orgId: string, callSid: string): Promise<CallRow & { recordingKey: string; recordingContentType: string }> {
    const call = await this.#calls.findBySid(orgId, callSid);
    if (!call) throw Errors.notFound('Call');
    if (call.recordingDeletedAt) throw Errors.recordingDeleted();
    if (!call.recordingKey || !call.recordingContentType) throw Errors.notFound('Recording');
    return call as CallRow & { recordingKey: string; recordingContentType: string };
  }

  /** A URL valid an hour that plays and seeks: presigned on S3, signed for the app's own file route locally. */
  async streamLink(ctx: RequestContext, callSid: string) {
    const call = await this.#withRecording(ctx.orgId, callSid);
    await this.#recordAccess(ctx, callSid, 'stream');
    const filename = filenameOf(call);
    const store = this.#deps.store;
    const url = store.signedReadUrl
      ? await store.signedReadUrl(call.recordingKey, STREAM_LINK_SECONDS, { contentType: call.recordingContentType, contentDisposition: `inline; filename="${filename}"` })
      : this.#links.url(this.#deps.publicBaseUrl, this.#links.sign(ctx.orgId, callSid, STREAM_LINK_SECONDS));
    return { url, expires_in: STREAM_LINK_SECONDS, content_type: call.recordingContentType, filename };
  }

  /** Serves a signed link of the local store, honouring Range; 403 for a bad or expired signature. */
  async openSigned(link: SignedRecording, sig: string, rangeHeader: string | undefined): Promise<RecordingBody> {
    this.#links.verify(link, sig);
    return this.#open(await this.#withRecording(link.orgId, link.callSid), rangeHeader);
  }

  async #open(call: CallRow & { recordingKey: string; recordingContentType: string }, rangeHeader: string | undefined): Promise<RecordingBody> {
    const size = call.recordingBytes ?? (await this.#deps.store.size(call.recordingKey)) ?? 0;
    const range = parseRange(rangeHeader, size);
    if (range === 'unsatisfiable') throw Errors.rangeNotSatisfiable(size);
    const store = this.#deps.store;
    const source = store.filePath ? { file: store.filePath(call.recordingKey) } : { stream: await store.read(call.recordingKey, range) };
    const length = range ? range.end - range.start + 1 : size;
    return { source, length, size, range, contentType: call.recordingContentType, filename: filenameOf(call) };
  }

  /**
   * The whole recording, fetched through an internal link valid five minutes (a presigned GET on
   * S3, a signed link of the local store otherwise) and streamed, never held in memory.
   */
  async download(ctx: RequestContext, callSid: string): Promise<RecordingBody> {
    const call = await this.#withRecording(ctx.orgId, callSid);
    await this.#recordAccess(ctx, callSid, 'download');
    const filename = filenameOf(call);
    const store = this.#deps.store;
    if (!store.signedReadUrl) {
      // The internal link is checked like any other, then the call already loaded is served.
      const link = this.#links.sign(ctx.orgId, callSid, DOWNLOAD_LINK_SECONDS);
      this.#links.verify(link, link.sig);
      return this.#open(call, undefined);
    }
    const url = await store.signedReadUrl(call.recordingKey, DOWNLOAD_LINK_SECONDS, { contentType: call.recordingContentType, contentDisposition: `attachment; filename="${filename}"` });
    let failure: unknown;
    const response = await fetch(url).catch((err: unknown) => { failure = err; return undefined; });
    if (!response?.ok || !response.body) {
      await response?.body?.cancel();
      const cause = failure ?? new Error(`The object store answered ${response?.status}`);
      throw Errors.upstream('storage_unavailable', 'The object store did not return the recording', { cause });
    }
    const size = Number(response.headers.get('content-length'));
    const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
    return { source: { stream }, length: size, size, range: undefined, contentType: call.recordingContentType, filename };
  }
}
