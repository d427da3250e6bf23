import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { asRole, createOrg, uniquePhoneNumber, type TestOrg } from './helpers/fixtures.ts';
import { startLiveKitStandIn, type LiveKitStandIn } from './helpers/livekit-standin.ts';

async function appWith(overrides: Record<string, string>): Promise<FastifyInstance> {
  const { database, tmpDir } = await testEnv();
  return buildTestApp(testConfig(tmpDir, overrides));
}

describe('phone numbers: carrier_a against the carrier stand-in', () => {
  let carrier: CarrierStandIn;
  let app: FastifyInstance;
  const voiceUrl = 'https://voice.example.test/inbound';
  before(async () => {
    carrier = await startCarrierStandIn();
    // Short, so a hanging account fails within the test's 3 s; 300 ms was missed by a healthy stand-in at load 12.
    app = await appWith({ CARRIER_A_API_URL: carrier.url, CARRIER_A_TIMEOUT_MS: '1000', CARRIER_A_VOICE_URL: voiceUrl });
  });
  after(async () => {
    await app?.close();
    await carrier?.close();
  });

  async function integration(org: TestOrg, credentials = { account_sid: carrier.account.sid, auth_token: carrier.account.token }) {
    const res = await app.inject({
      method: 'POST', url: '/api/integrations', headers: asRole(org, 'admin'),
      payload: { name: 'Carrier', provider: 'carrier_a', category: 'telephony', credentials },
    });
    return res.json().data.integration_id as string;
  }
  const importCarrier = (org: TestOrg, integrationId: string, phoneNumber: string) => app.inject({
    method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'agent_manager'),
    payload: { phone_number: phoneNumber, provider: 'carrier_a', integration_id: integrationId, supports_inbound: true },
  });

  test('import looks the number up in the account and points its voice URL at the platform', async () => {
    const org = await createOrg();
    const intg = await integration(org);
    const phoneNumber = uniquePhoneNumber();
    const sid = carrier.addNumber(phoneNumber);
    const res = await importCarrier(org, intg, phoneNumber);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.json().message, /carrier_a/);
    const data = res.json().data;
    assert.equal(data.status, 'free');
    assert.equal(data.provider, 'carrier_a');
    assert.equal(data.integration_id, intg);
    assert.equal(data.supports_inbound, true);
    assert.equal(data.supports_outbound, false);
    assert.equal(data.sip, null);
    assert.deepEqual(carrier.numbers.get(phoneNumber), { sid, voiceUrl, voiceMethod: 'POST', statusCallback: 'http://127.0.0.1:3000/api/telephony/carrier_a/status' });
    const lookup = carrier.requests.find((r) => r.url.includes('IncomingPhoneNumbers.json?PhoneNumber='));
    assert.ok(lookup?.url.includes(encodeURIComponent(phoneNumber)), lookup?.url);

    const again = await importCarrier(org, intg, phoneNumber);
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'phone_number_exists');
    const inUse = await app.inject({ method: 'DELETE', url: `/api/integrations/${intg}`, headers: asRole(org, 'admin') });
    assert.equal(inUse.statusCode, 409);
  });

  test("another organization's integration → 403; a number not in the account → 400", async () => {
    const [org, other] = [await createOrg(), await createOrg()];
    const theirs = await integration(other);
    const phoneNumber = uniquePhoneNumber();
    carrier.addNumber(phoneNumber);
    const foreign = await importCarrier(org, theirs, phoneNumber);
    assert.equal(foreign.statusCode, 403, foreign.body);
    assert.equal(foreign.json().code, 'forbidden');
    const missing = await importCarrier(org, await integration(org), uniquePhoneNumber());
    assert.equal(missing.statusCode, 400, missing.body);
    assert.match(missing.json().detail, /has no number/);
  });

  test('rejected credentials → 409 integration_invalid; a carrier that hangs → 502 in bounded time; nothing is written', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    const phoneNumber = uniquePhoneNumber();
    carrier.addNumber(phoneNumber);
    const rejected = await importCarrier(org, await integration(org, { account_sid: carrier.account.sid, auth_token: 'wrong' }), phoneNumber);
    assert.equal(rejected.statusCode, 409, rejected.body);
    assert.equal(rejected.json().code, 'integration_invalid');
    const started = Date.now();
    const hanging = await importCarrier(org, await integration(org, { account_sid: 'AChang0000', auth_token: 'x' }), phoneNumber);
    assert.equal(hanging.statusCode, 502, hanging.body);
    assert.equal(hanging.json().code, 'carrier_unavailable');
    assert.ok(Date.now() - started < 3000);
    assert.equal((await database.pool.query('SELECT 1 FROM phone_numbers WHERE phone_number = $1', [phoneNumber])).rowCount, 0);
  });
});

describe('phone numbers: SIP on the LiveKit backend against a Twirp stand-in', () => {
  let livekit: LiveKitStandIn;
  let app: FastifyInstance;
  before(async () => {
    livekit = await startLiveKitStandIn();
    app = await appWith({ SIP_BACKEND: 'livekit', LIVEKIT_URL: livekit.url, LIVEKIT_API_KEY: livekit.apiKey, LIVEKIT_API_SECRET: livekit.apiSecret });
  });
  after(async () => {
    await app?.close();
    await livekit?.close();
  });

  const body = (overrides: Record<string, unknown> = {}) => ({
    phone_number: uniquePhoneNumber(), provider: 'sip', supports_inbound: true, supports_outbound: true,
    sip_trunk_name: 'Office', sip_username: 'office', sip_password: 'office-pass', sip_server_address: 'sip.example.net',
    inbound_room_name: 'office-', inbound_pin: '2468', media_encryption: 'require', ...overrides,
  });

  test('import creates both trunks and the dispatch rule in LiveKit; delete removes them', async () => {
    const org = await createOrg();
    const payload = body();
    const res = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'admin'), payload });
    assert.equal(res.statusCode, 200, res.body);
    const { sip } = res.json().data;
    const inbound = livekit.trunks.get(sip.inbound_trunk_id)!;
    assert.deepEqual(inbound.numbers, [payload.phone_number]);
    assert.equal(inbound.authUsername, 'office');
    assert.equal(inbound.authPassword, 'office-pass');
    assert.equal(inbound.mediaEncryption, 'SIP_MEDIA_ENCRYPT_REQUIRE');
    assert.equal(JSON.parse(inbound.metadata).client_id, org.orgId);
    assert.equal(livekit.trunks.get(sip.outbound_trunk_id)!.address, 'sip.example.net');
    const rule = livekit.rules.get(sip.dispatch_rule_id)!;
    assert.deepEqual(rule.trunkIds, [sip.inbound_trunk_id]);
    assert.deepEqual(rule.rule.dispatchRuleIndividual, { roomPrefix: 'office-', pin: '2468' });

    const deleted = await app.inject({ method: 'DELETE', url: `/api/phone-numbers/${res.json().data.phone_number_id}`, headers: asRole(org, 'admin') });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.ok(!livekit.trunks.has(sip.inbound_trunk_id) && !livekit.trunks.has(sip.outbound_trunk_id) && !livekit.rules.has(sip.dispatch_rule_id));
  });

  test('a dispatch rule that fails leaves no number and no orphan trunk', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    const trunksBefore = livekit.trunks.size;
    livekit.failing.add('CreateSIPDispatchRule');
    try {
      const payload = body();
      const res = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'admin'), payload });
      assert.equal(res.statusCode, 502, res.body);
      assert.equal(res.json().code, 'sip_provider_error');
      assert.match(res.json().detail, /dispatch rule/);
      assert.equal(livekit.trunks.size, trunksBefore);
      assert.equal((await database.pool.query('SELECT 1 FROM phone_numbers WHERE phone_number = $1', [payload.phone_number])).rowCount, 0);
      assert.deepEqual(livekit.calls.slice(-5), ['CreateSIPInboundTrunk', 'CreateSIPOutboundTrunk', 'CreateSIPDispatchRule', 'DeleteSIPTrunk', 'DeleteSIPTrunk']);
    } finally {
      livekit.failing.delete('CreateSIPDispatchRule');
    }
  });
});
