import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { freePort } from './helpers/net.ts';

const root = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** The server as a newcomer starts it: the embedded database in a fresh DATA_DIR, nothing else. */
function childEnv(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'debug' }; // debug: the arrival of each request is logged (the SIGTERM test waits for it)
  delete env.DATABASE_URL;
  delete env.JWT_SECRET;
  return env;
}

interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

async function startServer(dataDir: string): Promise<Started> {
  const child = spawn(process.execPath, ['src/server.ts'], { cwd: root, env: childEnv(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: a first start runs initdb, which takes seconds alone but a minute on a loaded 2-core machine.
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 120_000);
    const check = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    exited.then(() => { clearTimeout(timer); reject(new Error(`server exited:\n${out}`)); });
  });
  return { child, url, stdout: () => out, exited };
}

async function cli(dataDir: string, ...args: string[]) {
  return run(process.execPath, ['src/cli.ts', ...args], { cwd: root, env: childEnv(dataDir) });
}

describe('the server process on its embedded defaults', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbs-'));
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('first run, CLI beside it, the lock, graceful shutdown, restart', async () => {
    const server = await startServer(dataDir);
    children.push(server.child);

    // First run: "Default" organization and an admin key, printed once and saved 0600.
    const bootstrapFile = path.join(dataDir, 'bootstrap.json');
    assert.equal(fs.statSync(bootstrapFile).mode & 0o777, 0o600);
    const boot = JSON.parse(fs.readFileSync(bootstrapFile, 'utf8'));
    assert.match(boot.organization_id, /^org_[a-f0-9]{12}$/);
    assert.equal(boot.api_key.role, 'admin');
    assert.ok(server.stdout().includes(boot.api_key.key), 'the key is printed on first run');
    const headers = { 'x-api-key': boot.api_key.key, 'x-organization-id': boot.organization_id, 'content-type': 'application/json' };

    // The printed sign-in link signs the admin user (ADMIN_EMAIL, default admin@localhost) in to Default.
    const printed = /Sign in to the console[^:]*: (\S+)/.exec(server.stdout());
    assert.ok(printed, server.stdout());
    const link = new URL(printed[1]!);
    assert.equal(link.pathname, '/sign-in');
    const signedIn: any = await (await fetch(`${server.url}/api/auth/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: link.searchParams.get('token') }),
    })).json();
    const admin: any = await (await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${signedIn.data.access_token}` } })).json();
    assert.equal(admin.data.email, 'admin@localhost');
    assert.deepEqual(admin.data.organizations.map((o: any) => [o.organization_id, o.role]), [[boot.organization_id, 'admin']]);

    // A newcomer creates and revokes a key over HTTP.
    const created: any = await (await fetch(`${server.url}/api/api-keys`, { method: 'POST', headers, body: JSON.stringify({ name: 'curl', role: 'user' }) })).json();
    assert.equal(created.success, true);
    const revoked = await fetch(`${server.url}/api/api-keys/${created.data.key_id}`, { method: 'DELETE', headers });
    assert.equal(revoked.status, 200);
    const refused = await fetch(`${server.url}/api/api-keys`, { headers: { ...headers, 'x-api-key': created.data.key } });
    assert.equal(refused.status, 401);

    // The CLI works while the server owns the data directory (through its socket).
    const org = JSON.parse((await cli(dataDir, 'org:create', '--name', 'Acme', '--email', 'ops@acme.test')).stdout);
    const orgKeys = await fetch(`${server.url}/api/api-keys`, { headers: { 'x-api-key': org.api_key.key, 'x-organization-id': org.organization_id } });
    assert.equal(orgKeys.status, 200);
    const token = (await cli(dataDir, 'auth:token', '--email', 'ops@acme.test')).stdout.trim();
    const cliLink = (await cli(dataDir, 'auth:sign-in-link', '--email', 'ops@acme.test')).stdout.trim();
    assert.match(cliLink, /\/sign-in\?token=[A-Za-z0-9_-]{43}$/);
    const me: any = await (await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } })).json();
    assert.equal(me.data.user_id, org.user_id, 'the token signs in the user org:create made for that email');
    assert.equal(me.data.organizations[0].role, 'admin');

    // Credits adjusted from the command line land on the ledger the API reads; no overdraft.
    const adjusted = JSON.parse((await cli(dataDir, 'credits:adjust', '--org', org.organization_id, '--credits', '250', '--reason', 'Support credit')).stdout);
    assert.equal(adjusted.balance_after, 250);
    const orgHeaders = { 'x-api-key': org.api_key.key, 'x-organization-id': org.organization_id };
    const balance: any = await (await fetch(`${server.url}/api/billing/credits`, { headers: orgHeaders })).json();
    assert.equal(balance.data.balance, 250);
    const overdraft = await cli(dataDir, 'credits:adjust', '--org', org.organization_id, '--credits=-300', '--reason', 'x').catch((e) => e);
    assert.equal(overdraft.code, 2, overdraft.stderr);
    assert.match(overdraft.stderr, /below zero/);

    // A second server on the same directory is refused with a clear message.
    const second = await run(process.execPath, ['src/server.ts'], { cwd: root, env: childEnv(dataDir) }).catch((e) => e);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /in use by process \d+/);

    // SIGTERM: requests the server has received are answered, then it exits 0 and releases the lock.
    const received = () => server.stdout().split('"msg":"incoming request"').length - 1;
    const before = received();
    const inFlight = Array.from({ length: 20 }, () => fetch(`${server.url}/api/api-keys`, { headers }).then((r) => r.status));
    while (received() < before + 20) await new Promise((r) => setTimeout(r, 1));
    server.child.kill('SIGTERM');
    const statuses = await Promise.all(inFlight);
    assert.deepEqual(statuses, Array(20).fill(200));
    assert.equal(await server.exited, 0);
    assert.equal(fs.existsSync(path.join(dataDir, 'switchboard.lock')), false);

    // With no server running, the CLI opens the directory itself.
    const offline = JSON.parse((await cli(dataDir, 'org:create', '--name', 'Offline Co')).stdout);
    assert.match(offline.organization_id, /^org_/);

    // Restart: no second bootstrap, everything kept.
    const again = await startServer(dataDir);
    children.push(again.child);
    assert.ok(!again.stdout().includes('First run'));
    const list: any = await (await fetch(`${again.url}/api/api-keys?page_size=100`, { headers })).json();
    assert.equal(list.data.find((k: any) => k.key_id === created.data.key_id).status, 'revoked');
    const offlineKey = await fetch(`${again.url}/api/auth/me`, { headers: { 'x-api-key': offline.api_key.key } });
    assert.equal(offlineKey.status, 200);
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
  });

  test('the CLI explains its commands and refuses bad usage', async () => {
    const help = await cli(dataDir, '--help');
    assert.match(help.stdout, /auth:token/);
    assert.match(help.stdout, /org:create/);
    assert.match(help.stdout, /migrate/);
    const bad = await cli(dataDir, 'org:create').catch((e) => e);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--name is required/);
    // A token the CLI makes is one the server accepts: --ttl stops at the verifier's maximum (24 h by default).
    const tooLong = await cli(dataDir, 'auth:token', '--email', 'ops@acme.test', '--ttl', '86401').catch((e) => e);
    assert.equal(tooLong.code, 2);
    assert.match(tooLong.stderr, /--ttl must be 1 to 86400 seconds/);
    const longest = (await cli(dataDir, 'auth:token', '--email', 'ops@acme.test', '--ttl', '86400')).stdout.trim();
    const claims = JSON.parse(Buffer.from(longest.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.exp - claims.iat, 86400);
  });
});

describe('npm start under a supervisor', () => {
  test('SIGTERM to the `npm start` process stops the server it started (no orphan keeps the port or the data directory)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbn-'));
    const port = await freePort();
    const npm = spawn('npm', ['start'], { cwd: root, env: { ...childEnv(dataDir), PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout!.on('data', (d) => (out += d));
    npm.stderr!.on('data', (d) => (out += d));
    const npmExited = new Promise((resolve) => npm.once('exit', resolve));
    try {
      const deadline = Date.now() + 120_000;
      while (!/Server listening at/.test(out)) {
        assert.ok(Date.now() < deadline, `the server did not start:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const lock = path.join(dataDir, 'switchboard.lock');
      const serverPid = Number(fs.readFileSync(lock, 'utf8'));
      assert.equal((await fetch(`http://127.0.0.1:${port}/api/health`)).status, 200);
      npm.kill('SIGTERM');
      await npmExited;
      // The server got the signal too: it shuts down gracefully and releases its lock.
      const stopped = Date.now() + 15_000;
      while (fs.existsSync(lock) || isAlive(serverPid)) {
        assert.ok(Date.now() < stopped, `process ${serverPid} is still running after npm stopped`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await assert.rejects(fetch(`http://127.0.0.1:${port}/api/health`), 'the port is closed');
    } finally {
      npm.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
