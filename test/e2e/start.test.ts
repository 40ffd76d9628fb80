import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedEngine } from '../../infra/local/engine.js';
import { closedPortEndpoint } from '../helpers/faults.js';

/**
 * `npm start` as a user meets it, as its own process: bad variables and files, ports in use, the
 * first seconds while it seeds, a store that comes back, and every way of stopping it.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs the start script (`npm run start` with `viaNpm`, else the same command npm runs); an undefined variable is unset. */
function start(env: Record<string, string | undefined>, viaNpm = false): Run {
  const child = viaNpm
    ? spawn('npm', ['run', '-s', 'start'], { cwd: ROOT, env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], {
        cwd: ROOT,
        env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitFor(run: Run, text: string | RegExp, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (typeof text === 'string' ? !run.output().includes(text) : !text.test(run.output())) {
    if (run.child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not print ${String(text)}:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `npm run token -- --tenant T` for a stack started with `env` (the same issuer key folder and PORT). */
function tokenFor(tenant: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', 'infra/local/token-cli.ts', '--tenant', tenant], { cwd: ROOT, env: { ...process.env, ...env } }, (e, out) => (e ? reject(e) : resolve(out.trim()))),
  );
}

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  return Number(new URL(await closedPortEndpoint()).port);
}

function portIsOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const base = async (): Promise<Record<string, string>> => ({ LOCAL_DIR: join(await mkdtemp(join(tmpdir(), 'start-')), 'local'), PRIVATE_PORT: '0', DYNAMODB_PORT: '0', PORT: '0' });

// Each test runs its own `npm start` on its own ports and folders: the tests of a group run at the same time.
describe.concurrent('E2E: npm start refuses a bad start with one sentence', () => {
  it.for([
    ['PORT=abc', { PORT: 'abc' }, 'npm start: Invalid configuration: PORT: must be a port number from 0 to 65535'],
    ['PRIVATE_PORT=70000', { PRIVATE_PORT: '70000' }, 'npm start: Invalid configuration: PRIVATE_PORT: must be a port number from 0 to 65535'],
    // A relative path is taken from the folder the user ran `npm start` in (INIT_CWD), and shown resolved.
    ['SEED=bogus', { SEED: 'bogus', INIT_CWD: '/home/user/fleets' }, 'npm start: SEED: there is no fleet file at /home/user/fleets/bogus (SEED is demo, none, or the path of a fleet file).'],
    ['SEED_LIVE=yes', { SEED_LIVE: 'yes' }, 'npm start: SEED_LIVE must be true or false, not "yes".'],
  ] as const)('%s', { timeout: 120_000 }, async ([, env, message], { expect }) => {
    const run = start({ ...(await base()), ...env });

    expect(await run.exited).toBe(2);
    expect(run.output().trim()).toBe(message);
  });

  it('names the file, the place and the rule of an invalid fleet, and of a file that is not JSON', async ({ expect }) => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-'));
    const invalid = join(dir, 'invalid.json');
    const notJson = join(dir, 'broken.json');
    await writeFile(invalid, JSON.stringify({ tenants: [{ tenant_id: 't', agents: [{ agent_id: 'a', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }, { agent_id: 'b', hostname: 'h', os: 'linux', version: '1' }] }] }));
    await writeFile(notJson, '{"tenants": [');

    const first = start({ ...(await base()), SEED: invalid });
    const second = start({ ...(await base()), SEED: notJson });

    expect(await first.exited).toBe(2);
    expect(first.output().trim()).toBe(`npm start: SEED: the fleet file ${invalid} is not a valid fleet: tenants[0].agents[1].arch: required (SEED is demo, none, or the path of a fleet file).`);
    expect(await second.exited).toBe(2);
    expect(second.output()).toMatch(new RegExp(`^npm start: SEED: the fleet file ${notJson.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not JSON \\(`));
  }, 120_000);

  it('says which port is taken and which variable moves it', async ({ expect }) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = start({ ...(await base()), PORT: String(port), SEED: 'none' });

      expect(await run.exited).toBe(2);
      expect(run.output().trim()).toBe(`npm start: port ${port} (PORT, the public listener) is in use by another program; stop it, or set PORT to a free port.`);
    } finally {
      taken.close();
    }
  }, 120_000);

  it('names every port in use in one sentence, and says so when it is its own stack that holds them', async ({ expect }) => {
    const [port, privatePort, dynamoPort] = [await freePort(), await freePort(), await freePort()];
    const ports = { PORT: String(port), PRIVATE_PORT: String(privatePort), DYNAMODB_PORT: String(dynamoPort), SEED: 'none' };
    const first = start({ ...(await base()), ...ports });
    await waitFor(first, 'Stop with Ctrl-C');
    try {
      const second = start({ ...(await base()), ...ports });

      expect(await second.exited).toBe(2);
      expect(second.output().trim()).toBe(
        `npm start: ports ${port} (PORT, the public listener) and ${privatePort} (PRIVATE_PORT, the private listener) are in use by this project's own local stack (another \`npm start\` still running), ` +
          `and port ${dynamoPort} (DYNAMODB_PORT, the embedded DynamoDB engine) by a DynamoDB-compatible engine (another \`npm start\` of this project, or DynamoDB Local); ` +
          `stop that \`npm start\` (Ctrl-C in its terminal), or set PORT, PRIVATE_PORT and DYNAMODB_PORT to free ports, or use that engine with DYNAMODB_ENDPOINT=http://127.0.0.1:${dynamoPort}.`,
      );
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  }, 120_000);
});

describe.concurrent('E2E: the terminal of npm start', () => {
  it('shows the banner first, then one short line per request: method, path, status, time and the request id of the answer, and no log records unless asked', async ({ expect }) => {
    const port = await freePort();
    const fleet = join(await mkdtemp(join(tmpdir(), 'fleet-')), 'fleet.json');
    await writeFile(fleet, JSON.stringify({ tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] }] }));
    // The user's default: POWERTOOLS_LOG_LEVEL unset (the handlers' JSON records would be INFO).
    const env = { ...(await base()), PORT: String(port), SEED: fleet };
    const token = await tokenFor('acme', env); // first: it also makes the issuer key the stack will then use
    const run = start({ ...env, POWERTOOLS_LOG_LEVEL: undefined });
    await waitFor(run, 'Stop with Ctrl-C');
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/agents`);
      const requestId = /\(request id: ([0-9a-f-]{36})\)/.exec(await res.text())?.[1];
      const listed = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });
      await listed.arrayBuffer();
      await waitFor(run, /^GET \/api\/agents 200 \d+ ms [0-9a-f-]{36}$/m);

      const output = run.output();
      expect(output.trimStart().startsWith('Endpoint read service (local)')).toBe(true);
      expect(output.indexOf('created tables')).toBeGreaterThan(output.indexOf('Stop with Ctrl-C'));
      expect(output).toMatch(new RegExp(`^GET /api/agents 401 \\d+ ms ${requestId}$`, 'm'));
      expect(output).not.toContain('{"level"');
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }, 120_000);
});

describe.concurrent('E2E: npm start while it starts', () => {
  it('answers 503 with Retry-After while it seeds, never a partial list, then the whole tenant', async ({ expect }) => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-'));
    const fleet = join(dir, 'fleet.json');
    const agents = Array.from({ length: 1500 }, (_, i) => ({ agent_id: `a-${String(i).padStart(4, '0')}`, hostname: `h-${i}`, os: 'linux', arch: 'x86_64', version: '1' }));
    await writeFile(fleet, JSON.stringify({ tenants: [{ tenant_id: 'big', agents }] }));
    const port = await freePort();
    // Metric lines asked for: one EMF line per request (they are off by default, see below).
    const env = { ...(await base()), PORT: String(port), SEED: fleet, POWERTOOLS_METRICS_DISABLED: 'false' };
    const token = await tokenFor('big', env); // first: it also makes the issuer key the stack will then use
    const run = start(env);

    const seen = new Set<string>();
    while (!run.output().includes('Stop with Ctrl-C')) {
      if (run.child.exitCode !== null) throw new Error(run.output());
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });
        const body = await res.text();
        seen.add(res.status === 200 ? `200:${(JSON.parse(body) as unknown[]).length}` : `${res.status}:${res.headers.get('retry-after')}`);
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const after = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });

    expect([...seen].every((s) => s === '503:1' || s === '200:1500')).toBe(true);
    expect(seen.has('503:1')).toBe(true);
    expect((await after.json()) as unknown[]).toHaveLength(1500);
    await waitFor(run, /"Requests":1,.*"operation":"listEndpointInventory"|"operation":"listEndpointInventory".*"Requests":1/);
    run.child.kill('SIGTERM');
    await run.exited;
  }, 120_000);

  it('keeps listening when the store is down at start, answers 503 rather than an empty list, and seeds once it answers', async ({ expect }) => {
    const [port, dynamoPort] = [await freePort(), await freePort()];
    // A one-agent fleet: what is proven is the retry, not the demo (whose seeding is costly).
    const fleet = join(await mkdtemp(join(tmpdir(), 'fleet-')), 'fleet.json');
    await writeFile(fleet, JSON.stringify({ tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] }] }));
    const env = { ...(await base()), PORT: String(port), DYNAMODB_ENDPOINT: `http://127.0.0.1:${dynamoPort}`, DYNAMODB_MAX_ATTEMPTS: '1', DYNAMODB_TIMEOUT_MS: '500', SEED: fleet };
    const token = await tokenFor('acme', env); // first: it also makes the issuer key the stack will then use
    const run = start(env);
    await waitFor(run, 'Stop with Ctrl-C');
    const down = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });

    expect(run.output()).toMatch(/is not usable .*Trying again every 5 s/);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    expect(await down.text()).toMatch(/^The inventory store is unavailable right now; try again later\./);
    const engine = await startEmbeddedEngine({ port: dynamoPort });
    try {
      await waitFor(run, 'answers again: ready', 30_000);
      expect(run.output()).toContain(`seeded ${fleet}: 1 tenants, 1 agents, 0 samples`);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      await engine.close();
    }
  }, 120_000);

  it('prints commands that work on the ports it runs on, and no metric lines unless asked', async ({ expect }) => {
    const port = await freePort();
    const dynamoPort = await freePort();
    const run = start({ ...(await base()), PORT: String(port), DYNAMODB_PORT: String(dynamoPort), SEED: 'demo', POWERTOOLS_METRICS_DISABLED: undefined });
    await waitFor(run, 'Stop with Ctrl-C');
    const token = /^ {2}acme: (\S+)$/m.exec(run.output())?.[1];
    const listed = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });

    expect(run.output()).toContain(`Try: curl -H "Authorization: Bearer $(PORT=${port} npm run -s token -- --tenant acme)" http://localhost:${port}/api/agents`);
    expect(run.output()).toContain(`     DYNAMODB_PORT=${dynamoPort} npm run audit -- --tenant acme`);
    expect(listed.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(run.output()).not.toContain('"_aws"');
    run.child.kill('SIGTERM');
    await run.exited;
  }, 120_000);
});

describe.concurrent('E2E: stopping npm start', () => {
  it.for<NodeJS.Signals>(['SIGTERM', 'SIGINT', 'SIGHUP'])('%s to `npm start` stops the whole stack and frees every port', { timeout: 120_000 }, async (signal, { expect }) => {
    const [port, privatePort, dynamoPort] = [await freePort(), await freePort(), await freePort()];
    const run = start({ ...(await base()), PORT: String(port), PRIVATE_PORT: String(privatePort), DYNAMODB_PORT: String(dynamoPort), SEED: 'none' }, true);
    await waitFor(run, 'Stop with Ctrl-C');
    expect([await portIsOpen(port), await portIsOpen(privatePort), await portIsOpen(dynamoPort)]).toEqual([true, true, true]);

    run.child.kill(signal);
    await run.exited;
    const deadline = Date.now() + 10_000;
    let open = [true, true, true];
    while (open.some(Boolean) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      open = [await portIsOpen(port), await portIsOpen(privatePort), await portIsOpen(dynamoPort)];
    }

    expect(open).toEqual([false, false, false]);
  });
});
