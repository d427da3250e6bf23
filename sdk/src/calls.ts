import type { FileSource } from './uploads.ts';
import { toStream } from './uploads.ts';
import type { BodyOf, QueryOf, Schemas } from './resources.ts';
import { paginate, type Page } from './pagination.ts';
import { ensureOk, unwrap, type ApiClient } from './transport.ts';

type CallQuery = Partial<Omit<QueryOf<'listCalls'>, 'cursor'>>;

export class Calls {
  private readonly api: ApiClient;
  private readonly send: (request: Request) => Promise<Response>;
  private readonly baseUrl: string;
  constructor(api: ApiClient, send: (request: Request) => Promise<Response>, baseUrl: string) {
    this.api = api;
    this.send = send;
    this.baseUrl = baseUrl;
  }

  /** Reports a new call (the voice runtime does). */
  async create(body: BodyOf<'createCall'>) { return (await unwrap(this.api.POST('/api/calls', { body }))).data; }

  /** Every call matching the filters, newest first, fetched a page (`limit`, default 50) at a time. */
  list(query: CallQuery = {}) {
    return paginate<Schemas['CallSummary']>((cursor) =>
      unwrap(this.api.GET('/api/calls', { params: { query: { ...query, cursor } as never } })) as Promise<Page<Schemas['CallSummary']>>);
  }

  async get(callSid: string) { return (await unwrap(this.api.GET('/api/calls/{call_sid}', { params: { path: { call_sid: callSid } } }))).data; }
  async update(callSid: string, body: BodyOf<'updateCall'>) { return (await unwrap(this.api.PATCH('/api/calls/{call_sid}', { params: { path: { call_sid: callSid } }, body }))).data; }
  /** Analyzes the call again (§13), with its own agent version's settings unless `agent_version` names another; the result arrives as `analysis` and `call.analyzed`. */
  async analyze(callSid: string, body: BodyOf<'analyzeCall'> = {}) { return (await unwrap(this.api.POST('/api/calls/{call_sid}/analyze', { params: { path: { call_sid: callSid } }, body }))).data; }
  /** Analyzes again every call the list's filters match, as a job (§13); follow it with `analysisJob`. */
  async analyzeMatching(body: BodyOf<'analyzeCalls'> = {}) { return (await unwrap(this.api.POST('/api/calls/analyze', { body }))).data; }
  /** A bulk analysis job's progress: calls gathered, analyses completed, failed and pending. */
  async analysisJob(jobId: string) { return (await unwrap(this.api.GET('/api/calls/analyze/{job_id}', { params: { path: { job_id: jobId } } }))).data; }

  /** Streams a WAV or MP3 file as the call's recording; it is not read into memory, and not retried (a stream is sent once). */
  async uploadRecording(callSid: string, file: FileSource, contentType: 'audio/wav' | 'audio/mpeg' = 'audio/wav') {
    const request = new Request(`${this.baseUrl}/api/calls/${encodeURIComponent(callSid)}/recording`, {
      method: 'PUT', body: toStream(file), headers: { 'content-type': contentType, 'x-switchboard-stream': '1' }, duplex: 'half',
    } as RequestInit);
    const response = await ensureOk(await this.send(request));
    return ((await response.json()) as Schemas['CallResponse']).data;
  }

  /** A URL that plays the recording (with seeking) for an hour, without credentials. */
  async recordingLink(callSid: string) { return (await unwrap(this.api.GET('/api/calls/{call_sid}/recording/stream', { params: { path: { call_sid: callSid } } }))).data; }

  /** The whole recording as a stream (`response.body`), with its content type and file name in the headers. */
  async downloadRecording(callSid: string): Promise<Response> {
    return ensureOk(await this.send(new Request(`${this.baseUrl}/api/calls/${encodeURIComponent(callSid)}/recording/download`)));
  }
}
