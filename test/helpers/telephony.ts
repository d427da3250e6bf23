import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { asRole, createAgent, uniquePhoneNumber, type TestOrg } from './fixtures.ts';
import type { CarrierStandIn } from './carrier-standin.ts';

/**
 * X-Twilio-Signature as the carrier's documentation describes it, written here independently of
 * the server's code: base64 of HMAC-SHA1 (key: the auth token) over the full URL followed by each
 * POST parameter's name and value, parameters sorted by name.
 */
export function signCarrierRequest(authToken: string, url: string, params: Record<string, string>): string {
  const names = Object.keys(params).sort();
  let data = url;
  for (const name of names) data += name + params[name];
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/** Posts a form to a carrier webhook of `app`, signed for `baseUrl` (the URL the carrier was given) unless `signature` is given. */
export function postCarrierForm(
  app: FastifyInstance, path: string, baseUrl: string, token: string, params: Record<string, string>, signature?: string | null,
) {
  const query = path.includes('?') ? path.slice(path.indexOf('?')) : '';
  const sig = signature === undefined ? signCarrierRequest(token, baseUrl + query, params) : signature;
  return app.inject({
    method: 'POST', url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(sig === null ? {} : { 'x-twilio-signature': sig }) },
    payload: new URLSearchParams(params).toString(),
  });
}

/** The little of a DOM node the tests read. */
export interface XmlNode {
  nodeName: string;
  nodeType: number;
  textContent: string | null;
  childNodes: { length: number; [index: number]: XmlNode };
  getAttribute(name: string): string | null;
  documentElement: XmlNode;
}

// Loaded untyped: @xmldom/xmldom's type declarations bring the DOM library's globals into the whole program.
const { DOMParser } = createRequire(import.meta.url)('@xmldom/xmldom') as { DOMParser: new (options: object) => { parseFromString(text: string, type: string): any } };

/** Parses TwiML strictly: a document that is not well-formed XML fails the test. */
export function parseTwiml(text: string): XmlNode {
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: { warning: (m: string) => problems.push(m), error: (m: string) => problems.push(m), fatalError: (m: string) => problems.push(m) },
  }).parseFromString(text, 'text/xml');
  assert.deepEqual(problems, [], `TwiML is not well-formed: ${text}`);
  assert.equal(doc.documentElement?.nodeName, 'Response', text);
  return doc as XmlNode;
}

/** The element children of an element, by name. */
export function children(node: XmlNode, name?: string): XmlNode[] {
  const out: XmlNode[] = [];
  const list = node.childNodes;
  for (let i = 0; i < list.length; i++) {
    const child = list[i]!;
    if (child.nodeType === 1 && (!name || child.nodeName === name)) out.push(child);
  }
  return out;
}

/** A carrier_a integration of the stand-in's account and an imported number assigned to a new agent. */
export async function carrierNumber(app: FastifyInstance, carrier: CarrierStandIn, org: TestOrg, options: { agent?: boolean; outbound?: boolean } = {}) {
  const integration = await app.inject({
    method: 'POST', url: '/api/integrations', headers: asRole(org, 'admin'),
    payload: { name: 'Carrier', provider: 'carrier_a', category: 'telephony', credentials: { account_sid: carrier.account.sid, auth_token: carrier.account.token } },
  });
  assert.equal(integration.statusCode, 200, integration.body);
  const phoneNumber = uniquePhoneNumber();
  carrier.addNumber(phoneNumber);
  const imported = await app.inject({
    method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'agent_manager'),
    payload: { phone_number: phoneNumber, provider: 'carrier_a', integration_id: integration.json().data.integration_id, supports_inbound: true, supports_outbound: options.outbound ?? false },
  });
  assert.equal(imported.statusCode, 200, imported.body);
  const phoneNumberId = imported.json().data.phone_number_id as string;
  let agentId: string | undefined;
  if (options.agent ?? true) {
    agentId = (await createAgent(org, { agent_name: 'Front desk' })).agent_id;
    const assigned = await app.inject({ method: 'PATCH', url: `/api/phone-numbers/${phoneNumberId}`, headers: asRole(org, 'agent_manager'), payload: { agent_id: agentId } });
    assert.equal(assigned.statusCode, 200, assigned.body);
  }
  return { phoneNumber, phoneNumberId, agentId };
}

let nextCarrierSid = 0;
/** A carrier call sid (CA + 32 hex) no other test uses. */
export function carrierCallSid(): string {
  return `CA${Date.now().toString(16).padStart(16, '0')}${(++nextCarrierSid).toString(16).padStart(16, '0')}`;
}
