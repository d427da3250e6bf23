/**
 * The console's screenshots in docs/console/ that README.md and docs/console.md show, made from a real
 * run: the server (with its built-in voice runtime) on an embedded database in a temporary directory,
 * an organization whose admin signs in by link, the provider stand-ins (runtime/test/standins) as its
 * LLM, STT and TTS, and a preview call made in Chromium with its fake microphone saying a question
 * (a WAV of eSpeak NG speech: 7 s of silence for the greeting, however slowly the call starts, the
 * question, then silence).
 *
 *   npm run build -w console
 *   node_modules/.bin/node --import ./src/module-hooks.ts scripts/screenshots.ts
 *
 * Writes, at 1280×800: agent-talk.png (the agent studio after a talk, the transcript and the answer's
 * latency in the panel), call.png (that call's page, its recording played from the answer),
 * onboarding.png (Get started, four of six done), then, with a month of demo calls (src/demo/seed.ts),
 * calls.png, calls-dark.png and analytics.png, and sign-in.png.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { startWorkers } from '../src/workers.ts';
import { seedDemo } from '../src/demo/seed.ts';
import { CreditLedger } from '../src/modules/billing/ledger.ts';
import { buildServices } from '../src/services.ts';
import { encodeWav, pcm16ToSamples } from '../runtime/src/index.ts';
import { OpenAiStandin } from '../runtime/test/standins/openai.ts';
import { DeepgramStandin } from '../runtime/test/standins/stt.ts';
import { ElevenLabsStandin } from '../runtime/test/standins/tts.ts';
import { speechPcm } from '../runtime/test/helpers/speech.ts';
import { CHROMIUM } from '../test/helpers/browser.ts';
import { freePort } from '../test/helpers/net.ts';
import { transaction } from '../src/db/unit-of-work.ts';

const OUT = path.resolve(import.meta.dirname, '../docs/console');
const VIEWPORT = { width: 1280, height: 800 };
const KEY = 'sk-standin-key';
const EMAIL = 'maya@acme-dental.example';
const QUESTION = 'Are you open on Saturday?';
const ANSWER = 'Yes, from nine to one. Would you like to book a visit?';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sbshots-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const config = loadConfig({
  DATA_DIR: path.join(tmp, 'data'), PUBLIC_BASE_URL: base, LOG_LEVEL: 'silent', BOOTSTRAP: 'false',
  JWT_SECRET: 'screenshots-secret-0123456789-0123456789', ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
  ALLOWED_NETWORKS: '127.0.0.1/32', // the stand-ins
});
const database = await openDatabase({ databaseUrl: undefined, dataDir: config.dataDir, poolSize: config.databasePoolSize });
await runMigrations(database);
const services = await buildServices(config, database);
const app = await buildApp(services);
await startWorkers(services);
await app.listen({ port, host: '127.0.0.1' });

const llm = await new OpenAiStandin({ key: KEY, script: [{ text: ANSWER }], firstTokenMs: 250, gapMs: 5 }).start();
const stt = await new DeepgramStandin({ key: KEY, sttFinalMs: 150 }).start();
const tts = await new ElevenLabsStandin({ key: KEY, firstByteMs: 120, chunkMs: 100 }).start();
stt.phrases.say(QUESTION);

const rate = 16000;
const silence = (seconds: number) => Buffer.alloc(rate * 2 * seconds);
const wav = path.join(tmp, 'caller.wav');
fs.writeFileSync(wav, encodeWav({ sampleRate: rate, channels: 1, samples: pcm16ToSamples(Buffer.concat([silence(7), await speechPcm(QUESTION, rate), silence(60)])) }));
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`],
});

try {
  const org = await services.organizations.provision({ name: 'Acme Dental', email: EMAIL });
  await transaction(database.db, (tx) => new CreditLedger(tx).credit(org.organization_id, 'adjustment', 'screenshots', 5000, 'screenshots'));
  const headers = { 'x-api-key': org.api_key.key, 'x-organization-id': org.organization_id };
  const post = async (url: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url, headers, payload });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json().data;
  };
  for (const [provider, url] of [['openai', llm.url], ['deepgram', stt.url], ['elevenlabs', tts.url]] as const) {
    await post('/api/integrations', { name: provider === 'openai' ? 'OpenAI' : provider === 'deepgram' ? 'Deepgram' : 'ElevenLabs', provider, ...(provider === 'openai' ? { category: 'llm' } : {}), credentials: { api_key: KEY, base_url: url } });
  }
  const agent = await post('/api/agents', {
    agent_name: 'Front desk', system_prompt: 'You answer the phone for Acme Dental: opening hours and bookings. Be brief and friendly.',
    first_message: 'Hello, this is Acme Dental. How can I help?', stt_provider: 'deepgram', tts_provider: 'elevenlabs',
    voice_id: 'voice-standin', llm_provider: 'openai', llm_model: 'gpt-test', recording_enabled: true,
  });

  const page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
  await page.goto(await services.sessions.createLink(EMAIL));
  await page.waitForURL(`${base}/calls`);

  // The agent studio with a talk: greeting, the question as recognised, the answer with its latency.
  await page.goto(`${base}/agents/${agent.agent_id}`);
  const panel = page.getByTestId('talk-panel');
  await panel.getByRole('button', { name: 'Talk to agent' }).click();
  await panel.getByTestId('talk-latency').waitFor({ timeout: 30_000 });
  await page.waitForTimeout(500); // the badge back to Listening once the answer has been sent
  await shoot(page, 'agent-talk');
  await panel.getByRole('button', { name: 'End' }).click();
  const link = panel.getByTestId('talk-call-link');
  await link.waitFor({ timeout: 10_000 });
  const callSid = (await link.getAttribute('href'))!.split('/').pop()!;
  for (let i = 0; i < 100; i++) {
    const call = (await app.inject({ url: `/api/calls/${callSid}`, headers })).json().data;
    if (call.status === 'completed') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  // The call's page: the recording played from the answer (its turn highlighted), the transcript
  // with the answer's latency, details and costs. The recording is uploaded after the call ends.
  for (let i = 0; i < 100; i++) {
    if ((await app.inject({ url: `/api/calls/${callSid}/recording/download`, headers })).statusCode === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await page.goto(`${base}/calls/${callSid}`);
  await page.getByText(ANSWER).waitFor();
  await page.getByText('Completed').first().waitFor();
  await page.waitForFunction('document.querySelector("audio")?.readyState >= 1');
  await page.getByRole('button', { name: /^Play from/ }).nth(2).click();
  await page.locator('[data-turn="2"][data-active]').waitFor();
  await page.waitForTimeout(700);
  await page.evaluate('document.querySelector("audio").pause()');
  await shoot(page, 'call');

  // Get started: credits, providers, an agent and a talk done; a phone number and a first call to go.
  await page.goto(`${base}/`);
  await page.locator('[data-testid="step-talk"][data-state="done"]').waitFor({ timeout: 15_000 });
  await shoot(page, 'onboarding');

  // A month of calls as `npm run cli -- demo:seed` makes them (through the SDK: agents, a number, calls
  // with transcripts, costs and recordings), for the calls list, in both themes, and analytics.
  await seedDemo({ url: base, apiKey: org.api_key.key, orgId: org.organization_id, calls: 60 });
  await page.goto(`${base}/calls`);
  await page.locator('[data-testid="calls-table"] tbody tr').nth(10).waitFor();
  await shoot(page, 'calls');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.reload();
  await page.locator('[data-testid="calls-table"] tbody tr').nth(10).waitFor();
  await shoot(page, 'calls-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  const today = new Date();
  const day = (date: Date) => date.toISOString().slice(0, 10);
  await page.goto(`${base}/analytics?tz=UTC&start=${day(new Date(today.getTime() - 29 * 86_400_000))}&end=${day(today)}`);
  await page.getByTestId('analytics-table').waitFor();
  await page.waitForTimeout(500); // the charts' entry animation
  await shoot(page, 'analytics');

  // Signed out: the sign-in page.
  const visitor = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
  await visitor.goto(`${base}/calls`);
  await visitor.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
  await shoot(visitor, 'sign-in');
} finally {
  await browser.close();
  await Promise.all([llm.close(), stt.close(), tts.close()]);
  await app.close();
  await services.close();
  await database.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}

async function shoot(page: import('playwright-core').Page, name: string) {
  await page.mouse.move(0, 0); // no hover state in the picture
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`${path.relative(process.cwd(), file)}: ${(fs.statSync(file).size / 1024).toFixed(0)} KB`);
}
