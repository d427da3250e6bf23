import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { RequestContext } from '../../core/context.ts';
import { pageNewestFirst, type Page } from '../../core/cursor.ts';
import { Errors, type FieldError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import type { SecretBox } from '../../core/secret-box.ts';
import type { CarrierClient } from '../../adapters/carrier/carrier-client.ts';
import type { MediaEncryption, SipTrunks } from '../../adapters/sip/sip-trunks.ts';
import type { AgentService } from '../agents/service.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import type { AuditService } from '../audit/service.ts';
import type { IntegrationService } from '../integrations/service.ts';
import { PhoneNumberRepository, type NewPhoneNumberRow, type PhoneNumberRow } from './repository.ts';
import { connectCarrierNumber, createSipTrunks, releaseSipTrunks, type SipTrunkIds } from './provisioning.ts';
import type { ImportPhoneNumberBody, PhoneNumber, UpdatePhoneNumberBody } from './schemas.ts';
import { transaction } from '../../db/unit-of-work.ts';

type ImportInput = Static<typeof ImportPhoneNumberBody>;
type PhoneNumberView = Static<typeof PhoneNumber>;

const PROVIDER_NAMES = { carrier_a: 'carrier_a (hosted carrier)', sip: 'SIP' } as const;
const SIP_FIELDS = ['sip_trunk_name', 'sip_username', 'sip_password', 'sip_server_address', 'inbound_room_name', 'inbound_pin', 'media_encryption'] as const;

export function toPhoneNumberView(row: PhoneNumberRow): PhoneNumberView {
  return {
    phone_number_id: row.id,
    phone_number: row.phoneNumber,
    provider: row.provider as PhoneNumberView['provider'],
    status: row.agentId ? 'assigned' : 'free',
    supports_inbound: row.supportsInbound,
    supports_outbound: row.supportsOutbound,
    integration_id: row.integrationId,
    agent_id: row.agentId,
    client_id: row.clientId,
    sip: row.provider === 'sip' ? {
      trunk_name: row.sipTrunkName ?? '',
      username: row.sipUsername ?? '',
      server_address: row.sipServerAddress,
      inbound_room_name: row.inboundRoomName ?? '',
      media_encryption: row.mediaEncryption ?? 'allow',
      has_inbound_pin: row.inboundPinEncrypted !== null,
      inbound_trunk_id: row.sipInboundTrunkId ?? '',
      outbound_trunk_id: row.sipOutboundTrunkId,
      dispatch_rule_id: row.sipDispatchRuleId ?? '',
    } : null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The rules of the import body that depend on the provider: 400 with every failing field. */
function checkProviderFields(input: ImportInput): void {
  const errors: FieldError[] = [];
  const need = (field: keyof ImportInput, why: string) => {
    if (input[field] === undefined) errors.push({ path: `body.${field}`, message: why });
  };
  if (input.provider === 'carrier_a') {
    need('integration_id', 'required for carrier_a numbers');
    for (const field of SIP_FIELDS) {
      if (input[field] !== undefined && field !== 'media_encryption') errors.push({ path: `body.${field}`, message: 'only for sip numbers' });
    }
  } else {
    for (const field of ['sip_trunk_name', 'sip_username', 'sip_password', 'inbound_room_name'] as const) need(field, 'required for sip numbers');
    if (input.supports_outbound) need('sip_server_address', 'required for outbound sip numbers');
    if (input.integration_id !== undefined) errors.push({ path: 'body.integration_id', message: 'only for carrier_a numbers' });
  }
  if (errors.length) throw Errors.validation(`Missing or misplaced fields for a ${input.provider} number`, errors);
}

const numberTaken = (phoneNumber: string) => Errors.conflict('phone_number_exists', `The phone number ${phoneNumber} already exists`);

export interface PhoneNumberDeps {
  db: Db;
  secrets: SecretBox;
  carrier: CarrierClient;
  /** Where imported carrier numbers send inbound calls. */
  voiceUrl: string;
  /** Where the carrier reports the progress of the number's calls (StatusCallback). */
  statusUrl?: string;
  sip: SipTrunks;
  integrations: IntegrationService;
  agents: AgentService;
  /** phone_number.imported / deleted, in the row's transaction. */
  outbox: EventOutbox;
  /** phone_number.import / update / delete entries, in the same transaction. */
  audit: Pick<AuditService, 'record'>;
}

const audited = (action: string, id: string, input: object) => ({ action, resourceType: 'phone_number', resourceId: id, changedFields: Object.keys(input) });

export class PhoneNumberService {
  readonly #db: Db;
  readonly #secrets: SecretBox;
  readonly #carrier: CarrierClient;
  readonly #voiceUrl: string;
  readonly #statusUrl: string | undefined;
  readonly #sip: SipTrunks;
  readonly #integrations: IntegrationService;
  readonly #agents: AgentService;
  readonly #outbox: EventOutbox;
  readonly #audit: Pick<AuditService, 'record'>;
  constructor(deps: PhoneNumberDeps) {
    this.#agents = deps.agents;
    this.#outbox = deps.outbox;
    this.#audit = deps.audit;
    this.#db = deps.db;
    this.#secrets = deps.secrets;
    this.#carrier = deps.carrier;
    this.#voiceUrl = deps.voiceUrl;
    this.#statusUrl = deps.statusUrl;
    this.#sip = deps.sip;
    this.#integrations = deps.integrations;
  }

  /** Provider work first (outside any transaction), then the row; the provider work is undone if the row cannot be written. */
  async import(ctx: RequestContext, input: ImportInput): Promise<{ message: string; data: PhoneNumberView }> {
    checkProviderFields(input);
    const repo = new PhoneNumberRepository(this.#db);
    if (await repo.numberTaken(input.phone_number)) throw numberTaken(input.phone_number);
    const base: NewPhoneNumberRow = {
      id: newId('phon'),
      phoneNumber: input.phone_number,
      provider: input.provider,
      supportsInbound: input.supports_inbound,
      supportsOutbound: input.supports_outbound,
    };
    const row = input.provider === 'carrier_a' ? await this.#importCarrierNumber(ctx, input, base) : await this.#importSipNumber(ctx, input, base);
    return { message: `Phone number ${row.phoneNumber} imported from ${PROVIDER_NAMES[input.provider]}`, data: toPhoneNumberView(row) };
  }

  async list(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<PhoneNumberView>> {
    return pageNewestFirst(new PhoneNumberRepository(this.#db), ctx.orgId, query, toPhoneNumberView);
  }

  /** A number of the organization that can place outbound calls (dial, campaigns): 404 when unknown, 403 when another organization's, 409 `outbound_not_supported`. */
  async requireOutboundNumber(orgId: string, id: string, within?: Executor): Promise<PhoneNumberRow> {
    const repo = new PhoneNumberRepository(within ?? this.#db);
    const row = await repo.findById(orgId, id);
    if (!row) {
      if (await repo.existsElsewhere(orgId, id)) throw Errors.forbidden('The phone number belongs to another organization');
      throw Errors.notFound('Phone number');
    }
    if (!row.supportsOutbound) throw Errors.conflict('outbound_not_supported', `The number ${row.phoneNumber} does not support outbound calls`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<PhoneNumberView> {
    const row = await new PhoneNumberRepository(this.#db).findById(ctx.orgId, id);
    if (!row) throw Errors.notFound('Phone number');
    return toPhoneNumberView(row);
  }

  /** `agent_id` assigns (the agent row is locked so a concurrent agent delete cannot slip by), `null` unassigns. */
  async update(ctx: RequestContext, id: string, input: Static<typeof UpdatePhoneNumberBody>): Promise<PhoneNumberView> {
    return transaction(this.#db, async (tx) => {
      const repo = new PhoneNumberRepository(tx);
      if (!(await repo.findById(ctx.orgId, id, { forUpdate: true }))) throw Errors.notFound('Phone number');
      if (input.agent_id) await this.#agents.requireAgent(ctx.orgId, input.agent_id, { within: tx, lock: true });
      const row = await repo.update(ctx.orgId, id, {
        ...(input.agent_id === undefined ? {} : { agentId: input.agent_id }),
        ...(input.supports_inbound === undefined ? {} : { supportsInbound: input.supports_inbound }),
        ...(input.supports_outbound === undefined ? {} : { supportsOutbound: input.supports_outbound }),
      });
      await this.#audit.record(tx, ctx, audited('phone_number.update', id, input));
      return toPhoneNumberView(row!);
    });
  }

  /** Refused while assigned; another organization's number is 403. SIP trunks are removed after the row. */
  async delete(ctx: RequestContext, id: string): Promise<PhoneNumberView> {
    const row = await transaction(this.#db, async (tx) => {
      const repo = new PhoneNumberRepository(tx);
      const found = await repo.findById(ctx.orgId, id, { forUpdate: true });
      if (!found) {
        if (await repo.existsElsewhere(ctx.orgId, id)) throw Errors.forbidden('The phone number belongs to another organization');
        throw Errors.notFound('Phone number');
      }
      if (found.agentId) throw Errors.conflict('phone_number_assigned', 'The phone number is assigned to an agent; unassign it first');
      const deleted = (await repo.deleteUnassigned(ctx.orgId, id))!;
      await this.#audit.record(tx, ctx, audited('phone_number.delete', id, {}));
      await this.#outbox.emit(tx, ctx.orgId, 'phone_number.deleted', toPhoneNumberView(deleted));
      return deleted;
    });
    const trunks = sipTrunkIdsOf(row);
    if (trunks) await releaseSipTrunks(this.#sip, ctx.orgId, trunks);
    return toPhoneNumberView(row);
  }

  async #importCarrierNumber(ctx: RequestContext, input: ImportInput, base: NewPhoneNumberRow): Promise<PhoneNumberRow> {
    const { integration, credentials } = await this.#integrations.findForUse(ctx, input.integration_id!);
    if (integration.provider !== 'carrier_a') throw Errors.validation('The integration is not a carrier_a integration', [{ path: 'body.integration_id', message: 'not a carrier_a integration' }]);
    const carrierNumberSid = await connectCarrierNumber(this.#carrier, credentials, input.phone_number, this.#voiceUrl, this.#statusUrl);
    return this.#insert(ctx, { ...base, integrationId: integration.id, carrierNumberSid }, input);
  }

  async #importSipNumber(ctx: RequestContext, input: ImportInput, base: NewPhoneNumberRow): Promise<PhoneNumberRow> {
    const mediaEncryption = (input.media_encryption ?? 'allow') as MediaEncryption;
    const trunks = await createSipTrunks(this.#sip, ctx.orgId, {
      phoneNumber: input.phone_number,
      trunkName: input.sip_trunk_name!,
      username: input.sip_username!,
      password: input.sip_password!,
      serverAddress: input.sip_server_address,
      roomPrefix: input.inbound_room_name!,
      pin: input.inbound_pin,
      mediaEncryption,
    });
    try {
      return await this.#insert(ctx, {
        ...base,
        sipTrunkName: input.sip_trunk_name,
        sipUsername: input.sip_username,
        sipPasswordEncrypted: this.#secrets.seal(input.sip_password!),
        sipServerAddress: input.sip_server_address ?? null,
        inboundRoomName: input.inbound_room_name,
        inboundPinEncrypted: input.inbound_pin === undefined ? null : this.#secrets.seal(input.inbound_pin),
        mediaEncryption,
        sipInboundTrunkId: trunks.inboundTrunkId,
        sipOutboundTrunkId: trunks.outboundTrunkId,
        sipDispatchRuleId: trunks.dispatchRuleId,
      }, input);
    } catch (err) {
      await releaseSipTrunks(this.#sip, ctx.orgId, trunks);
      throw err;
    }
  }

  /** Records the names of the import's fields (a SIP password's value never reaches the log). */
  async #insert(ctx: RequestContext, row: NewPhoneNumberRow, input: ImportInput): Promise<PhoneNumberRow> {
    try {
      return await transaction(this.#db, async (tx) => {
        const inserted = await new PhoneNumberRepository(tx).insert(ctx.orgId, row);
        await this.#audit.record(tx, ctx, audited('phone_number.import', inserted.id, input));
        await this.#outbox.emit(tx, ctx.orgId, 'phone_number.imported', toPhoneNumberView(inserted));
        return inserted;
      });
    } catch (err) {
      if (isUniqueViolation(err, 'phone_numbers_number_key')) throw numberTaken(row.phoneNumber);
      throw err;
    }
  }
}

function sipTrunkIdsOf(row: PhoneNumberRow): SipTrunkIds | undefined {
  if (row.provider !== 'sip' || !row.sipInboundTrunkId || !row.sipDispatchRuleId) return undefined;
  return { inboundTrunkId: row.sipInboundTrunkId, outboundTrunkId: row.sipOutboundTrunkId, dispatchRuleId: row.sipDispatchRuleId };
}
