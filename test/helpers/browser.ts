import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run, which sets REQUIRE_BROWSER=1 so a missing browser fails there). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const browserAvailable = fs.existsSync(CHROMIUM);
if (!browserAvailable && process.env.REQUIRE_BROWSER) throw new Error(`REQUIRE_BROWSER is set but there is no browser at ${CHROMIUM}`);
export const skipWithoutBrowser = browserAvailable ? false : `no browser at ${CHROMIUM} (apt-get install chromium)`;

/** `extraArgs`: e.g. the fake microphone of the "Talk to agent" test (`--use-file-for-fake-audio-capture`). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required',
      // The console honours reduced motion (its theme's respectReducedMotion): no transition is
      // waited for before axe reads colors, and no frame is painted for one, on a CPU-bound CI run.
      '--force-prefers-reduced-motion', ...extraArgs,
    ],
  });
}

/** Every run writes a picture of each page it visits here (git-ignored; issue 31). */
export const SCREENSHOTS = path.resolve(import.meta.dirname, '../screenshots');

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

/** axe-core on the page as it is: no violation of serious or critical impact. */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  // Colors are checked as they end: a dialog still fading in has the contrast of half its opacity
  // (a busy machine runs transitions late). Endless animations (loaders) are not waited for.
  await waitForExpression(page, 'document.getAnimations().every((a) => a.playState !== "running" || a.effect?.getComputedTiming().iterations === Infinity)');
  const results = await new AxeBuilder({ page }).options({ resultTypes: ['violations'] }).analyze();
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`),
    [],
    `accessibility of ${name}`,
  );
}

/** The browser's console errors and refused resources (CSP): collected to assert there are none. */
export function watchProblems(page: Page, base: string): string[] {
  const problems: string[] = [];
  page.on('console', (message) => { if (/Content Security Policy|Refused to/.test(message.text())) problems.push(message.text()); });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => { if (!request.url().startsWith(base) && !request.url().startsWith('blob:') && !request.url().startsWith('data:')) problems.push(`request elsewhere: ${request.url()}`); });
  return problems;
}

/**
 * Waits until an expression is true in the page. (Playwright's waitForFunction evaluates its string
 * with eval inside the page, which the strict CSP rightly refuses; evaluate goes through the debugger.)
 */
export async function waitForExpression(page: Page, expression: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${expression}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
