import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../../core/errors.ts';
import { envelope, errorResponses, MessageEnvelope } from '../../core/schemas.ts';
import { RedeemBody, Session, SignInLinkBody } from './schemas.ts';
import { LINK_TTL_MS, SESSION_TTL_MS, type SessionService } from './service.ts';

const tags = ['Sign-in'];
/** The refresh cookie: sent only to /api/auth/session (refresh and sign-out), never readable by scripts. */
export const SESSION_COOKIE = 'switchboard_session';
const COOKIE_PATH = '/api/auth/session';
/** Link requests from one client address per 15 minutes (beyond: 429), on top of the public per-minute limit. */
const LINK_REQUESTS_PER_CLIENT = 10;

/** The session cookie's value; one that is not valid percent-encoding is no session (never a 500). */
function readCookie(request: FastifyRequest): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name !== SESSION_COOKIE) continue;
    try {
      return decodeURIComponent(value.join('='));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function setCookie(reply: FastifyReply, value: string, maxAgeSeconds: number, secure: boolean): void {
  reply.header('set-cookie', [
    `${SESSION_COOKIE}=${encodeURIComponent(value)}`, `Path=${COOKIE_PATH}`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : []),
  ].join('; '));
  // Tokens are never cached by a browser or a proxy.
  reply.header('cache-control', 'no-store');
}

export function sessionRoutes(service: SessionService, options: { publicBaseUrl: string }): FastifyPluginAsyncTypebox {
  const secure = options.publicBaseUrl.startsWith('https:');
  return async (app) => {
    const perClient = app.createRateLimit({ max: LINK_REQUESTS_PER_CLIENT, timeWindow: LINK_TTL_MS, keyGenerator: (req) => `sign-in-link:${req.ip}` });

    app.post('/api/auth/sign-in-links', {
      config: { auth: 'public' },
      schema: { operationId: 'requestSignInLink',
        tags, body: SignInLinkBody,
        summary: 'E-mail a single-use sign-in link (15 minutes) to the address, if it may sign in; always the same answer',
        description: `Public. The link \`{PUBLIC_BASE_URL}/sign-in?token=…\` is mailed to a known user or an invited address (at most 5 per address per 15 minutes); the answer is 200 in every case, so it reveals nothing about the address. A client address may ask ${LINK_REQUESTS_PER_CLIENT} times per 15 minutes (then 429).`,
        response: { 200: MessageEnvelope, ...errorResponses(400, 429, 500) },
      },
    }, async (req) => {
      const counted = await perClient(req);
      if (!counted.isAllowed && counted.isExceeded) throw Errors.rateLimited(Math.max(1, counted.ttlInSeconds));
      await service.requestLink(req.body.email, { ip: req.ip });
      return { success: true, message: 'If the address may sign in, a link is on its way; it works once, within 15 minutes' };
    });

    app.post('/api/auth/session', {
      config: { auth: 'public' },
      schema: { operationId: 'redeemSignInLink',
        tags, body: RedeemBody,
        summary: 'Redeem a sign-in link: a short-lived access token, and the session in an httpOnly SameSite=Strict cookie',
        response: { 200: envelope(Session), ...errorResponses(400, 401, 429, 500) },
      },
    }, async (req, reply) => {
      const { session, refresh } = await service.redeem(req.body.token);
      setCookie(reply, refresh, SESSION_TTL_MS / 1000, secure);
      return { success: true, message: 'Signed in', data: session };
    });

    app.post('/api/auth/session/refresh', {
      config: { auth: 'public' },
      schema: { operationId: 'refreshSession',
        tags, summary: "A new access token for the session in the cookie (the cookie is the credential; 401 session_invalid once it has ended)",
        response: { 200: envelope(Session), ...errorResponses(401, 429, 500) },
      },
    }, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        return { success: true, data: await service.refresh(readCookie(req)) };
      } catch (err) {
        setCookie(reply, '', 0, secure);
        throw err;
      }
    });

    app.delete('/api/auth/session', {
      config: { auth: 'public' },
      schema: { operationId: 'signOut',
        tags, summary: 'Sign out: the session in the cookie ends (its refreshes are refused) and the cookie is cleared',
        response: { 200: MessageEnvelope, ...errorResponses(429, 500) },
      },
    }, async (req, reply) => {
      await service.signOut(readCookie(req));
      setCookie(reply, '', 0, secure);
      return { success: true, message: 'Signed out' };
    });
  };
}
