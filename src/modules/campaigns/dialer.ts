import type pg from 'pg';
import { newCallSid } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import { type Database, type Db, type Executor } from '../../db/database.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { AgentService } from '../agents/service.ts';
import type { CallPlacer, CallService, Placement } from '../calls/service.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import type { PhoneNumberService } from '../phone-numbers/service.ts';
import { ContactRepository } from './contacts-repository.ts';
import { CAMPAIGN_PLACE_CALL, CAMPAIGN_TICK } from './jobs.ts';
import { completeCampaign, nothingLeft } from './progress.ts';
import { CampaignRepository, type CampaignRow } from './repository.ts';
import { hasEnded, isOpen, nextOpening, type Schedule } from './schedule.ts';
import { transaction, clientTransaction } from '../../db/unit-of-work.ts';

/** How many more calls the organization may have active now (its concurrency limit), in the caller's transaction. */
export interface OrgCallCapacity {
  available(within: Executor, orgId: string): Promise<number>;
}

export interface DialerDeps {
  database: Database;
  queue: JobQueue;
  calls: CallService;
  agents: AgentService;
  phoneNumbers: PhoneNumberService;
  placer: CallPlacer;
  capacity: OrgCallCapacity;
  /** The balance as the caller's transaction sees it: a campaign waits while it is not positive. */
  balance(within: Executor, orgId: string): Promise<number>;
  /** campaign.completed, in the transaction that completes the campaign. */
  outbox: EventOutbox;
  log: Logger;
  /** The dialer's clock (tests move it; nothing here sleeps). */
  now: () => Date;
}

/** Longest wait between two ticks of a running campaign: what a change (a call that ended, a resume) waits at most. */
const MAX_WAIT_S = 60;
/** Wait while the campaign is at a capacity bound that only an ending call frees. */
const BUSY_WAIT_S = 2;
/** Calls started by one tick at most (one transaction stays short). */
const MAX_PER_TICK = 50;
const PACE_WINDOW_MS = 60_000;

export function scheduleOf(c: CampaignRow): Schedule {
  return { timezone: c.timezone, windows: c.windows, startAt: c.startAt, endAt: c.endAt };
}

const seconds = (ms: number) => Math.min(MAX_WAIT_S, Math.max(1, Math.ceil(ms / 1000)));

export interface TickResult {
  dialed: number;
  /** Seconds until the next tick; null when the campaign no longer runs. */
  next: number | null;
  reason: string;
}

/**
 * The dialer. Each tick, under the campaign's row lock, decides how many contacts to call now
 * within every bound (schedule, max_concurrency, calls_per_minute, the organization's limit and
 * credits), claims them, and creates their calls and placement jobs in the same transaction.
 */
export class CampaignDialer {
  readonly #deps: DialerDeps;
  readonly #db: Db;
  constructor(deps: DialerDeps) {
    this.#deps = deps;
    this.#db = deps.database.db;
  }

  /** Sends the campaign's next tick (in the caller's transaction when it gives its client). */
  static schedule(queue: JobQueue, orgId: string, campaignId: string, delaySeconds: number, within?: pg.PoolClient): Promise<boolean> {
    return queue.send(CAMPAIGN_TICK, { clientId: orgId, campaignId }, { within, singletonKey: campaignId, startAfterSeconds: delaySeconds, dedupe: true });
  }

  async tick(orgId: string, campaignId: string): Promise<TickResult> {
    return clientTransaction(this.#deps.database, async (tx, client) => {
      const campaign = await new CampaignRepository(tx).findById(orgId, campaignId, { forUpdate: true });
      if (!campaign || campaign.status !== 'running') return { dialed: 0, next: null, reason: 'not running' };
      const result = await this.#decide(tx, campaign, client);
      if (result.next !== null) await CampaignDialer.schedule(this.#deps.queue, orgId, campaignId, result.next, client);
      return result;
    });
  }

  async #decide(tx: Db, c: CampaignRow, client: pg.PoolClient): Promise<TickResult> {
    const { clientId: orgId, id } = c;
    const now = this.#deps.now();
    const schedule = scheduleOf(c);
    const contacts = new ContactRepository(tx);
    const campaigns = new CampaignRepository(tx);
    if (hasEnded(schedule, now) && c.pending + c.retrying > 0) {
      const skipped = await contacts.skipWaiting(orgId, id);
      c = await campaigns.shift(orgId, id, { pending: -skipped.pending, retrying: -skipped.retrying, skipped: skipped.pending + skipped.retrying });
    }
    if (nothingLeft(c)) {
      await completeCampaign(tx, c, this.#deps.outbox);
      return { dialed: 0, next: null, reason: 'completed' };
    }
    if (c.pending + c.retrying === 0) return { dialed: 0, next: BUSY_WAIT_S, reason: 'last calls in progress' };
    if (!isOpen(schedule, now)) {
      const opens = nextOpening(schedule, now);
      return { dialed: 0, next: opens ? seconds(opens.getTime() - now.getTime()) : MAX_WAIT_S, reason: 'outside the schedule' };
    }
    const recent = c.recentDials.filter((t) => t > now.getTime() - PACE_WINDOW_MS);
    const paceRoom = c.callsPerMinute - recent.length;
    if (paceRoom <= 0) return { dialed: 0, next: seconds(recent[0]! + PACE_WINDOW_MS - now.getTime()), reason: 'calls_per_minute' };
    const concurrencyRoom = c.maxConcurrency - c.inProgress;
    if (concurrencyRoom <= 0) return { dialed: 0, next: BUSY_WAIT_S, reason: 'max_concurrency' };
    if ((await this.#deps.balance(tx, orgId)) <= 0) return { dialed: 0, next: MAX_WAIT_S / 2, reason: 'no credits' };
    const orgRoom = await this.#deps.capacity.available(tx, orgId);
    if (orgRoom <= 0) return { dialed: 0, next: BUSY_WAIT_S, reason: 'organization concurrency limit' };

    const claimed = await contacts.claimDue(orgId, id, now, Math.min(paceRoom, concurrencyRoom, orgRoom, MAX_PER_TICK));
    if (!claimed.length) {
      const due = await contacts.nextRetryAt(orgId, id);
      return { dialed: 0, next: due ? seconds(due.getTime() - now.getTime()) : BUSY_WAIT_S, reason: 'waiting for retries' };
    }
    const from = await this.#deps.phoneNumbers.requireOutboundNumber(orgId, c.fromPhoneNumberId, tx).catch(() => undefined);
    const agent = await this.#deps.agents.requireAgent(orgId, c.agentId, { within: tx }).catch(() => undefined);
    if (!from || !agent) {
      // The number or the agent went away (or the number stopped supporting outbound) since the
      // start: the campaign waits, paused, for a person to fix it; its claimed contacts stay pending.
      await campaigns.update(orgId, id, { status: 'paused' });
      this.#deps.log.warn({ campaign_id: id, phone_number_id: c.fromPhoneNumberId, agent_id: c.agentId }, 'campaign paused: its number or agent cannot place calls');
      return { dialed: 0, next: null, reason: 'number or agent unavailable' };
    }
    let retried = 0;
    for (const contact of claimed) {
      if (contact.status === 'retrying') retried++;
      const callSid = newCallSid();
      await this.#deps.calls.createCampaignCall(tx, orgId, { callSid, agentId: c.agentId, toNumber: contact.phoneNumber, fromNumber: from.phoneNumber, campaignId: id });
      await contacts.startAttempt(orgId, contact.id, callSid);
      await this.#deps.queue.send(CAMPAIGN_PLACE_CALL, { clientId: orgId, campaignId: id, contactId: contact.id, callSid }, { within: client });
    }
    await campaigns.shift(orgId, id, { pending: -(claimed.length - retried), retrying: -retried, inProgress: claimed.length });
    await campaigns.update(orgId, id, { recentDials: [...recent, ...claimed.map(() => now.getTime())] });
    return { dialed: claimed.length, next: 1, reason: 'dialed' };
  }

  /**
   * Places one call. The contact records `placing` before the network call, in its own committed
   * transaction: a job that finds `placing` already there ran before on a worker that stopped
   * mid-placement, so the outcome is unknown and the attempt ends `failed` (the retry rule then
   * decides) rather than dialling the same attempt a second time.
   */
  async place(p: { clientId: string; campaignId: string; contactId: number; callSid: string }): Promise<void> {
    const step = await transaction(this.#db, async (tx) => {
      const contacts = new ContactRepository(tx);
      const contact = await contacts.findById(p.clientId, p.campaignId, p.contactId, { forUpdate: true });
      if (!contact || contact.currentCallSid !== p.callSid) return 'stale';
      if (contact.placement === 'placing') return 'unknown';
      if (contact.placement !== 'queued') return 'stale';
      await contacts.update(p.clientId, contact.id, { placement: 'placing' });
      return 'place';
    });
    if (step === 'unknown') return this.giveUp(p, 'its worker stopped while placing the call');
    if (step !== 'place') return;
    const call = await this.#placement(p);
    try {
      await this.#deps.placer.place(p.clientId, call);
    } catch (err) {
      this.#deps.log.warn({ err, call_sid: p.callSid, campaign_id: p.campaignId }, 'campaign call not placed: the attempt ends failed');
      await this.#deps.calls.endUnconnected(p.clientId, p.callSid, 'failed');
      return;
    }
    await new ContactRepository(this.#db).markPlaced(p.clientId, p.contactId, p.callSid);
  }

  /** Ends an attempt whose placement cannot be known or finished: the call fails and the retry rule decides. */
  async giveUp(p: { clientId: string; callSid: string; campaignId: string }, why = 'its placement job ran out of retries'): Promise<void> {
    this.#deps.log.warn({ call_sid: p.callSid, campaign_id: p.campaignId }, `campaign call ended failed: ${why}`);
    await this.#deps.calls.endUnconnected(p.clientId, p.callSid, 'failed');
  }

  async #placement(p: { clientId: string; campaignId: string; callSid: string }): Promise<Placement> {
    const found = await new CampaignRepository(this.#db).placement(p.clientId, p.campaignId, p.callSid);
    if (!found) throw new Error(`campaign call ${p.callSid} not found`);
    return { callSid: p.callSid, ...found };
  }

  /** Restarts the tick chain of every running campaign (one waiting tick per campaign at most: duplicates are dropped). */
  async sweep(): Promise<void> {
    for (const { id, clientId } of await new CampaignRepository(this.#db).running()) {
      await CampaignDialer.schedule(this.#deps.queue, clientId, id, 0);
    }
  }
}
