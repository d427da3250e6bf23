import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';

/**
 * A stand-in for LiveKit's SIP service (Twirp over JSON, `POST /twirp/livekit.SIP/<Method>`) on
 * 127.0.0.1. Checks the SDK's bearer token (HS256 with the API secret, issuer = API key, SIP admin
 * grant), keeps trunks and dispatch rules in memory, and can be told to fail a method.
 */
export interface LiveKitStandIn {
  url: string;
  apiKey: string;
  apiSecret: string;
  trunks: Map<string, Record<string, any>>;
  rules: Map<string, Record<string, any>>;
  calls: string[];
  /** CreateSIPParticipant requests, as sent (trunk, number, room, identity, attributes). */
  participants: Array<Record<string, any>>;
  /** Methods that answer a Twirp `internal` error until removed. */
  failing: Set<string>;
  close(): Promise<void>;
}

export async function startLiveKitStandIn(): Promise<LiveKitStandIn> {
  const apiKey = 'APIstandin';
  const apiSecret = 'standin-secret-0123456789abcdef0123456789';
  const trunks = new Map<string, Record<string, any>>();
  const rules = new Map<string, Record<string, any>>();
  const calls: string[] = [];
  const failing = new Set<string>();
  const participants: Array<Record<string, any>> = [];
  let next = 1;
  const newId = (prefix: string) => `${prefix}${String(next++).padStart(12, '0')}`;

  const twirpError = (res: http.ServerResponse, status: number, code: string, msg: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code, msg }));
  };

  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const method = /^\/twirp\/livekit\.SIP\/(\w+)$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'POST' || !method) return twirpError(res, 404, 'bad_route', `no handler for ${req.url}`);
    try {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const { payload } = await jwtVerify(token, new TextEncoder().encode(apiSecret), { issuer: apiKey });
      // Placing a call needs the SIP call grant; managing trunks and rules the admin grant.
      const grant = method === 'CreateSIPParticipant' ? 'call' : 'admin';
      if (!(payload as any).sip?.[grant]) return twirpError(res, 403, 'permission_denied', `SIP ${grant} grant required`);
    } catch {
      return twirpError(res, 401, 'unauthenticated', 'invalid token');
    }
    calls.push(method);
    if (failing.has(method)) return twirpError(res, 500, 'internal', `${method} failed (stand-in told to fail)`);
    const body = JSON.parse(raw || '{}');
    const ok = (data: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(data));
    };
    switch (method) {
      case 'CreateSIPInboundTrunk': {
        const trunk = { ...body.trunk, sipTrunkId: newId('ST_'), kind: 'inbound' };
        trunks.set(trunk.sipTrunkId, trunk);
        return ok(trunk);
      }
      case 'CreateSIPOutboundTrunk': {
        const trunk = { ...body.trunk, sipTrunkId: newId('ST_'), kind: 'outbound' };
        trunks.set(trunk.sipTrunkId, trunk);
        return ok(trunk);
      }
      case 'CreateSIPDispatchRule': {
        const rule = { ...body, sipDispatchRuleId: newId('SDR_') };
        rules.set(rule.sipDispatchRuleId, rule);
        return ok(rule);
      }
      case 'DeleteSIPTrunk': {
        const trunk = trunks.get(body.sipTrunkId);
        if (!trunk) return twirpError(res, 404, 'not_found', 'trunk not found');
        trunks.delete(body.sipTrunkId);
        return ok({ sipTrunkId: body.sipTrunkId });
      }
      case 'DeleteSIPDispatchRule': {
        const rule = rules.get(body.sipDispatchRuleId);
        if (!rule) return twirpError(res, 404, 'not_found', 'dispatch rule not found');
        rules.delete(body.sipDispatchRuleId);
        return ok({ sipDispatchRuleId: body.sipDispatchRuleId });
      }
      case 'CreateSIPParticipant': {
        const trunk = trunks.get(body.sipTrunkId);
        if (!trunk || trunk.kind !== 'outbound') return twirpError(res, 404, 'not_found', 'outbound trunk not found');
        if (!/^\+?[0-9]{3,15}$/.test(body.sipCallTo ?? '')) return twirpError(res, 400, 'invalid_argument', `invalid number ${body.sipCallTo}`);
        participants.push(body);
        return ok({ participantId: newId('PA_'), participantIdentity: body.participantIdentity, roomName: body.roomName, sipCallId: newId('SCL_') });
      }
      default:
        return twirpError(res, 404, 'bad_route', `unknown method ${method}`);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey, apiSecret, trunks, rules, calls, participants, failing,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
