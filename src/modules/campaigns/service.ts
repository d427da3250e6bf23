import { randomUUID } from 'node:crypto';
import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Static } from 'typebox';
import type { RequestContext } from '../../core/context.ts';
import { decodeCursor, encodeCursor, pageNewestFirst, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { clientOf, type Database, type Db } from '../../db/database.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { AgentService } from '../agents/service.ts';
import type { AuditService } from '../audit/service.ts';
import type { PhoneNumberService } from '../phone-numbers/service.ts';
import { ContactRepository, deleteAbandonedStaging, type BatchOutcome, type NewContact } from './contacts-repository.ts';
import type { ContactInput } from './contacts-import.ts';
import { CampaignDialer } from './dialer.ts';
import { CampaignRepository, type CampaignRow, type NewCampaignRow } from './repository.ts';
import { columns, toCampaignView, toContactView, type CampaignInput } from './views.ts';
import {
  DEFAULTS, MAX_CONTACTS, type Campaign, type CampaignStatus, type CampaignContact, type ContactsUploadResult, type CreateCampaignBody, type RejectionReason, type UpdateCampaignBody,
} from './schemas.ts';
import { transaction, clientTransaction } from '../../db/unit-of-work.ts';

type CampaignView = Static<typeof Campaign>;
type ContactView = Static<typeof CampaignContact>;
type UploadResult = Static<typeof ContactsUploadResult>;


/** Contacts written per transaction while an upload streams in. */
const BATCH = 1000;
/** Rejections listed in an upload's answer (all are counted). */
const MAX_LISTED_REJECTIONS = 100_000;
/** Staged rows untouched this long belong to an upload whose process died (a live one stages every few seconds). */
const ABANDONED_UPLOAD_MS = 60 * 60 * 1000;

const ACTION_VERBS = { started: 'start', paused: 'pause', resumed: 'resume', cancelled: 'cancel' } as const;

const notAllowed = (c: CampaignRow, action: string) =>
  Errors.conflict('invalid_campaign_transition', `A ${c.status} campaign cannot be ${action}`);

export interface CampaignDeps {
  database: Database;
  queue: JobQueue;
  agents: AgentService;
  phoneNumbers: PhoneNumberService;
  /** campaign.* entries, in the transaction of the change. */
  audit: Pick<AuditService, 'record'>;
}

/** The campaign if it still takes contacts (not completed or cancelled). */
function takesContacts<C extends { status: string }>(campaign: C | undefined): C {
  if (!campaign) throw Errors.notFound('Campaign');
  if (campaign.status === 'completed' || campaign.status === 'cancelled') {
    throw Errors.conflict('campaign_finished', `The campaign is ${campaign.status}: it takes no more contacts`);
  }
  return campaign;
}

const audited = (action: string, id: string, fields: string[] = []) => ({ action, resourceType: 'campaign', resourceId: id, changedFields: fields });

/** Campaigns: their definition, contacts and life cycle; the dialer (dialer.ts) calls their contacts. */
export class CampaignService {
  readonly #deps: CampaignDeps;
  readonly #db: Db;
  constructor(deps: CampaignDeps) {
    this.#deps = deps;
    this.#db = deps.database.db;
  }

  async create(ctx: RequestContext, input: Static<typeof CreateCampaignBody>): Promise<CampaignView> {
    const values = columns({ max_concurrency: DEFAULTS.maxConcurrency, calls_per_minute: DEFAULTS.callsPerMinute, retry: {}, ...input } as CampaignInput);
    await this.#checkReferences(ctx.orgId, input.agent_id, input.from_phone_number_id);
    const row = await transaction(this.#db, async (tx) => {
      const created = await new CampaignRepository(tx).insert(ctx.orgId, { ...(values as NewCampaignRow), id: newId('cmp') });
      await this.#deps.audit.record(tx, ctx, audited('campaign.create', created.id, Object.keys(input)));
      return created;
    });
    return toCampaignView(row);
  }

  list(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<CampaignView>> {
    return pageNewestFirst(new CampaignRepository(this.#db), ctx.orgId, query, toCampaignView);
  }

  async get(ctx: RequestContext, id: string): Promise<CampaignView> {
    const row = await new CampaignRepository(this.#db).findById(ctx.orgId, id);
    if (!row) throw Errors.notFound('Campaign');
    return toCampaignView(row);
  }

  /** Only while draft or paused: a running campaign's bounds do not move under the dialer. */
  async update(ctx: RequestContext, id: string, input: Static<typeof UpdateCampaignBody>): Promise<CampaignView> {
    const values = columns(input);
    if (input.agent_id !== undefined || input.from_phone_number_id !== undefined) await this.#checkReferences(ctx.orgId, input.agent_id, input.from_phone_number_id);
    return transaction(this.#db, async (tx) => {
      const campaigns = new CampaignRepository(tx);
      const current = await this.#lock(campaigns, ctx.orgId, id);
      if (current.status !== 'draft' && current.status !== 'paused') throw notAllowed(current, 'changed');
      await this.#deps.audit.record(tx, ctx, audited('campaign.update', id, Object.keys(input)));
      return toCampaignView(await campaigns.update(ctx.orgId, id, values));
    });
  }

  async delete(ctx: RequestContext, id: string): Promise<CampaignView> {
    return transaction(this.#db, async (tx) => {
      const campaigns = new CampaignRepository(tx);
      const current = await this.#lock(campaigns, ctx.orgId, id);
      if (current.status !== 'draft' && current.status !== 'paused') throw notAllowed(current, 'deleted');
      await campaigns.delete(ctx.orgId, id);
      await this.#deps.audit.record(tx, ctx, audited('campaign.delete', id));
      return toCampaignView(current);
    });
  }

  start(ctx: RequestContext, id: string): Promise<CampaignView> {
    return this.#transition(ctx, id, ['draft'], 'started', async (c, tx) => {
      if (c.total === 0) throw Errors.conflict('campaign_has_no_contacts', 'Add contacts before starting the campaign');
      await this.#checkReferences(ctx.orgId, c.agentId, c.fromPhoneNumberId, tx);
    });
  }

  pause(ctx: RequestContext, id: string): Promise<CampaignView> {
    return this.#transition(ctx, id, ['running'], 'paused');
  }

  resume(ctx: RequestContext, id: string): Promise<CampaignView> {
    return this.#transition(ctx, id, ['paused'], 'resumed');
  }

  /** Contacts still waiting are skipped; calls in progress finish and their contacts end completed or failed (no retry). */
  cancel(ctx: RequestContext, id: string): Promise<CampaignView> {
    return this.#transition(ctx, id, ['draft', 'running', 'paused'], 'cancelled');
  }

  async #transition(
    ctx: RequestContext, id: string, from: CampaignStatus[], action: 'started' | 'paused' | 'resumed' | 'cancelled',
    check?: (c: CampaignRow, tx: Db) => Promise<void>,
  ) {
    const to: CampaignStatus = action === 'paused' ? 'paused' : action === 'cancelled' ? 'cancelled' : 'running';
    const row = await clientTransaction(this.#deps.database, async (tx, client) => {
      const campaigns = new CampaignRepository(tx);
      const current = await this.#lock(campaigns, ctx.orgId, id);
      if (!from.includes(current.status as CampaignStatus)) throw notAllowed(current, action);
      await check?.(current, tx);
      if (to === 'cancelled') {
        const skipped = await new ContactRepository(tx).skipWaiting(ctx.orgId, id);
        await campaigns.shift(ctx.orgId, id, { pending: -skipped.pending, retrying: -skipped.retrying, skipped: skipped.pending + skipped.retrying });
      }
      const updated = await campaigns.update(ctx.orgId, id, { status: to });
      await this.#deps.audit.record(tx, ctx, audited(`campaign.${ACTION_VERBS[action]}`, id, ['status']));
      if (to === 'running') await CampaignDialer.schedule(this.#deps.queue, ctx.orgId, id, 0, client);
      return updated;
    });
    return toCampaignView(row);
  }

  /**
   * Adds contacts as they stream in (chunks of rows), all or nothing. Batches of 1,000 are staged as
   * they arrive (campaign_contact_staging, outside the campaign and locking nothing of it); once the
   * whole body has arrived and parsed, one transaction moves them in, batch by batch in row order,
   * with `total` and `pending` (the campaign row locked, so the 100,000 limit holds against
   * concurrent uploads). An upload that fails or is cut short adds nothing and its staged rows are
   * deleted (those of a process that died, by the hourly cleanup). An upload of one batch goes
   * straight in. A number the campaign already has, earlier in the same upload included, is
   * rejected as `duplicate`: the database finds it (the campaign's unique index on the number), so
   * no upload-wide set of numbers is kept here. Nothing is read ahead while a batch is written: the
   * upload's memory is one batch and the rejection report.
   */
  async addContacts(ctx: RequestContext, id: string, chunks: AsyncIterable<ContactInput[]>): Promise<UploadResult> {
    takesContacts(await new CampaignRepository(this.#db).findById(ctx.orgId, id));
    const rejected: UploadResult['rejected'] = [];
    let rejectedCount = 0;
    const reject = (row: number, reason: RejectionReason) => {
      rejectedCount++;
      if (rejected.length < MAX_LISTED_REJECTIONS) rejected.push({ row, reason });
    };
    const uploadId = randomUUID();
    const staging = new ContactRepository(this.#db);
    let staged = 0;
    let batch: NewContact[] = [];
    const stage = async () => {
      const contacts = ContactRepository.batch(batch);
      batch = [];
      await staging.stage(ctx.orgId, id, uploadId, staged++, contacts);
    };
    let outcomes: BatchOutcome[];
    try {
      for await (const chunk of chunks) {
        for (const row of chunk) {
          if ('reason' in row) reject(row.row, row.reason);
          else if (batch.push(row) >= BATCH) await stage();
        }
      }
      if (staged === 0) {
        outcomes = batch.length ? await this.#addBatches(ctx, id, (contacts, room) => contacts.insertBatch(ctx.orgId, id, ContactRepository.batch(batch), room), 1) : [];
      } else {
        if (batch.length) await stage();
        outcomes = await this.#addBatches(ctx, id, (contacts, room, n) => contacts.moveStagedBatch(ctx.orgId, id, uploadId, n, room), staged, uploadId);
      }
    } catch (err) {
      if (staged) await staging.dropStaged(ctx.orgId, uploadId).catch(() => {}); // else the hourly cleanup
      throw err;
    }
    let accepted = 0;
    for (const outcome of outcomes) {
      accepted += outcome.inserted;
      // Row order: the rows within the limit all come before those past it.
      for (const row of outcome.duplicates) reject(row, 'duplicate');
      for (const row of outcome.overLimit) reject(row, 'contact_limit');
    }
    rejected.sort((a, b) => a.row - b.row);
    return { accepted, rejected, rejected_count: rejectedCount };
  }

  /** The upload's batches added in one transaction, each with the room the earlier ones left; its staged rows deleted in it. */
  async #addBatches(
    ctx: RequestContext, id: string, add: (contacts: ContactRepository, room: number, n: number) => Promise<BatchOutcome>, batches: number, uploadId?: string,
  ): Promise<BatchOutcome[]> {
    const { orgId } = ctx;
    return transaction(this.#db, async (tx) => {
      const campaigns = new CampaignRepository(tx);
      const contacts = new ContactRepository(tx);
      const campaign = takesContacts(await campaigns.lockCounts(orgId, id));
      const outcomes: BatchOutcome[] = [];
      let inserted = 0;
      for (let n = 0; n < batches; n++) {
        const outcome = await add(contacts, Math.max(0, MAX_CONTACTS - campaign.total - inserted), n);
        inserted += outcome.inserted;
        outcomes.push(outcome);
      }
      if (uploadId) await contacts.dropStaged(orgId, uploadId);
      if (inserted) {
        await campaigns.countNewContacts(orgId, id, inserted);
        // One entry per upload (an upload that adds nothing changes nothing).
        await this.#deps.audit.record(tx, ctx, audited('campaign.contacts_add', id, ['contacts']));
        // New contacts of a running campaign: its dialer may have been waiting on its last calls.
        if (campaign.status === 'running') await CampaignDialer.schedule(this.#deps.queue, orgId, id, 0, clientOf(tx));
      }
      return outcomes;
    });
  }

  /** The hourly cleanup: staged rows of uploads whose process died mid-upload. Returns how many. */
  deleteAbandonedUploads(now = new Date()): Promise<number> {
    return deleteAbandonedStaging(this.#db, new Date(now.getTime() - ABANDONED_UPLOAD_MS));
  }

  async listContacts(ctx: RequestContext, id: string, query: { status?: string; page_size: number; cursor?: string }): Promise<Page<ContactView>> {
    if (!(await new CampaignRepository(this.#db).findById(ctx.orgId, id))) throw Errors.notFound('Campaign');
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const afterId = after ? Number(after.id) : undefined;
    if (after && (!Number.isSafeInteger(afterId) || afterId! < 0)) throw Errors.invalidCursor();
    const rows = await new ContactRepository(this.#db).list(ctx.orgId, id, { status: query.status, afterId, limit: query.page_size + 1 });
    const hasMore = rows.length > query.page_size;
    const page = rows.slice(0, query.page_size);
    const last = page[page.length - 1];
    return { items: page.map(toContactView), hasMore, nextCursor: hasMore && last ? encodeCursor({ value: null, id: String(last.id) }) : null };
  }

  /**
   * The results as CSV, streamed page by page (csv-stringify): one row per contact in upload order
   * with its variables (one column each, sorted by name), final status, attempts, last call sid,
   * last outcome, and that call's duration and cost.
   */
  async results(ctx: RequestContext, id: string): Promise<{ filename: string; body: Readable }> {
    const campaign = await new CampaignRepository(this.#db).findById(ctx.orgId, id);
    if (!campaign) throw Errors.notFound('Campaign');
    const contacts = new ContactRepository(this.#db);
    const names = await contacts.variableNames(ctx.orgId, id);
    const header = ['phone_number', ...names, 'status', 'attempts', 'last_call_sid', 'last_outcome', 'duration_seconds', 'cost'];
    async function* records() {
      yield header;
      for (let after = 0; ;) {
        const page = await contacts.results(ctx.orgId, id, after, 1000);
        for (const r of page) {
          yield [r.phone_number, ...names.map((n) => r.variables[n] ?? ''), r.status, r.attempts, r.last_call_sid ?? '', r.last_outcome ?? '',
            r.duration_seconds ?? '', r.total_cost === null ? '' : Number(r.total_cost)];
        }
        if (page.length < 1000) return;
        after = page[page.length - 1]!.id;
      }
    }
    const body = stringify();
    pipeline(Readable.from(records()), body, () => {}); // an error (the database) ends the response early, never silently
    return { filename: `${id}-results.csv`, body };
  }

  async #lock(campaigns: CampaignRepository, orgId: string, id: string): Promise<CampaignRow> {
    const row = await campaigns.findById(orgId, id, { forUpdate: true });
    if (!row) throw Errors.notFound('Campaign');
    return row;
  }

  /** `within`: inside a transaction every query goes through it (the embedded database's one session would otherwise wait on itself). */
  async #checkReferences(orgId: string, agentId: string | undefined, phoneNumberId: string | undefined, within?: Db): Promise<void> {
    if (agentId !== undefined) await this.#deps.agents.requireAgent(orgId, agentId, { within });
    if (phoneNumberId !== undefined) await this.#deps.phoneNumbers.requireOutboundNumber(orgId, phoneNumberId, within);
  }
}
