import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { provisionOrganization } from '../../src/modules/organizations/service.ts';
import { testConfig, testEnv, buildTestApp } from './env.ts';
import { freePort } from './net.ts';
import { keyHeaders, uniqueEmail } from './fixtures.ts';
import { launchChromium, watchProblems } from './browser.ts';

export interface ConsoleSession {
  app: FastifyInstance;
  base: string;
  browser: Browser;
  page: Page;
  org: { orgId: string; key: string; userId: string };
  headers: Record<string, string>;
  email: string;
  /** CSP refusals, page errors, requests elsewhere: none expected. */
  problems: string[];
  close(): Promise<void>;
}

/** The real server on a port, a new organization whose admin signed in to the console by an e-mailed link. */
export async function signedInConsole(name: string, env: Record<string, string> = {}, chromiumArgs: string[] = []): Promise<ConsoleSession> {
  const { database, tmpDir } = await testEnv();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const app = await buildTestApp(testConfig(tmpDir, { PUBLIC_BASE_URL: base, ...env }));
  await app.listen({ host: '127.0.0.1', port });
  const email = uniqueEmail('console');
  const created = await provisionOrganization(database.db, { name, email });
  const org = { orgId: created.organization_id, key: created.api_key.key, userId: created.user_id };
  const browser = await launchChromium(chromiumArgs);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const problems = watchProblems(page, base);
  const asked = await app.inject({ method: 'POST', url: '/api/auth/sign-in-links', payload: { email }, remoteAddress: `203.0.113.${100 + (port % 100)}` });
  assert.equal(asked.statusCode, 200);
  await page.goto(await mailedLink(email));
  await page.waitForURL(`${base}/calls`);
  return {
    app, base, browser, page, org, headers: keyHeaders(org, org.key), email, problems,
    close: async () => { await browser.close(); await app.close(); },
  };
}

/** How many mails went to `email` so far (to wait for the next one with `mailedLink`). */
export async function mailsTo(email: string): Promise<number> {
  const { database } = await testEnv();
  const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM outbox_emails WHERE "to" = $1', [email.toLowerCase()]);
  return rows[0].n as number;
}

/**
 * The link of the latest sign-in mail to `email` (the outbox mailer's table; the mail is sent after
 * the answer), once more than `sentBefore` mails have gone to it: a second link to the same address
 * must not be read before its mail exists, or the first (already used) link is taken.
 */
export async function mailedLink(email: string, sentBefore = 0): Promise<string> {
  const { database } = await testEnv();
  for (let i = 0; i < 200; i++) {
    const { rows } = await database.pool.query('SELECT text, count(*) OVER ()::int AS n FROM outbox_emails WHERE "to" = $1 ORDER BY created_at DESC LIMIT 1', [email.toLowerCase()]);
    const match = rows[0] && rows[0].n > sentBefore && /(https?:\/\/\S+\/sign-in\?token=[A-Za-z0-9_-]+)/.exec(rows[0].text as string);
    if (match) return match[1]!;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no sign-in mail to ${email} after the ${sentBefore} before`);
}
