/**
 * `npm run bench` (about 4 minutes here; `npm run bench -- --quick`: a subset in under a minute:
 * tenants of 1k and 10k, windows of 60 and 1440 minutes, fewer runs, no largest-tenant search).
 *
 * What the service costs, each figure against a floor doing the same I/O, measured in the same run
 * on the same engine and the same data, as medians of interleaved runs (these machines are noisy):
 *
 * - inventory (GET /api/agents, `Accept-Encoding: gzip`) for realistic tenants of 1k, 10k and 100k
 *   agents: the Lambda handler called directly and the local stack over HTTP, against a bare SDK
 *   Query loop following LastEvaluatedKey plus JSON.stringify of the items; peak RSS and CPU of one
 *   invocation in a fresh Lambda-like process; the response's bytes (JSON, gzip, and as Lambda
 *   measures it: base64 in the JSON envelope);
 * - observations (GET /api/mcp/endpoint) over windows of 60, 1440 and 10080 minutes of 1-minute
 *   samples: the handler (token check, reads, audit write) and HTTP, against a bare SDK Query of
 *   the sample partition over the window;
 * - bundles: sizes, and cold start (spawn to first answer) against a bundle of the bare SDK doing
 *   one Query, built with the same options;
 * - gzip levels, and the largest realistic tenant whose inventory fits Lambda's 6,291,456 bytes,
 *   found with the service's own serialization and then listed through the handler.
 *
 * The engine (dynalite) and the local stack run in processes of their own, as DynamoDB and API
 * Gateway are not the function's CPU. Data comes from infra/local/generator.ts, the generator of
 * `npm run seed -- --generate`. Writes bench/results.json, bench/results.svg and the README's
 * "Performance" section (a quick run writes bench/results.quick.json and .svg only). Exits 1 when
 * a target is missed.
 */
import '../infra/local/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (README, Node versions)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { bundleOptions, buildAll, ROOT } from '../infra/build.js';
import { lambdaContext, restApiEvent } from '../infra/local/events.js';
import { writeTenantAgents } from '../infra/local/fleet.js';
import { realisticAgents, seedOf } from '../infra/local/generator.js';
import { localIssuer } from '../infra/local/issuer.js';
import { brokerTokenFor } from '../infra/local/token-exchange.js';
import type { AgentSummary } from '../lib/contract/schemas.js';
import { GZIP_LEVEL, gzipJsonArray, JsonArrayStream, LAMBDA_RESPONSE_LIMIT_BYTES, lambdaResponseBytes } from '../lib/http.js';
import { summarizeAgent } from '../lib/inventory/merge.js';
import { createDocumentClient } from '../lib/store/client.js';
import { agentsPartition, sampleSortKey, samplesPartition } from '../lib/store/keys.js';
import { ensureTables } from '../lib/store/tables.js';
import { bareClient, httpGet, inventoryFloor, windowFloor } from './floors.js';
import { freshInvocation, startEngine, startStack, stopChildren, type FreshRun } from './processes.js';
import { writeReport, type BenchResults, type Target } from './report.js';
import { interleaved, median, n } from './stats.js';

const quick = process.argv.includes('--quick');
const DATA_TABLE = 'bench-data';
const AUDIT_TABLE = 'bench-audit';
const ISSUER = 'http://localhost:bench-issuer';
const AUDIENCE = 'endpoint-read-service';
const TENANT_SIZES = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
const WINDOWS = quick ? [60, 1_440] : [60, 1_440, 10_080];
const say = (line: string): void => void process.stderr.write(`${line}\n`);
const tenantOf = (agents: number): string => `bench-${agents}`;

/** Runs per measurement: more for fast ones, so every median rests on enough runs within the time budget. */
function runsFor(agents: number): number {
  if (quick) return agents >= 10_000 ? 5 : 9;
  return agents >= 100_000 ? 5 : agents >= 10_000 ? 9 : 15;
}

async function main(): Promise<number> {
  const started = performance.now();
  const results: BenchResults = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
    gzipLevel: GZIP_LEVEL,
    inventory: [],
    observations: [],
    bundles: [],
    coldStart: [],
    gzipLevels: [],
    largestTenant: undefined,
    seeding: [],
    fencing: undefined,
    targets: [],
    memory: undefined,
    durationSeconds: 0,
  };

  // Bundles: the deployed artifacts, and the bare-SDK floor built with the same options.
  say('building bundles');
  const dist = mkdtempSync(join(tmpdir(), 'bench-dist-'));
  const built = await buildAll(dist);
  const bareBundle = join(dist, 'bare-sdk', 'index.mjs');
  await build({ ...bundleOptions(join(ROOT, 'bench', 'bare-sdk-handler.ts'), bareBundle), sourcemap: false });
  const bundleOf = (name: string): string => (name === 'bare-sdk' ? bareBundle : built.find((b) => b.name === name)!.bundle);
  for (const name of ['inventory', 'observations', 'mcp', 'bare-sdk']) {
    results.bundles.push({ name, bytes: readFileSync(bundleOf(name)).length });
  }

  say('starting the engine and the local stack, each in its own process');
  const engine = await startEngine();
  const localDir = mkdtempSync(join(tmpdir(), 'bench-local-'));
  const stackEnv = { DYNAMODB_ENDPOINT: engine.endpoint, DATA_TABLE, AUDIT_TABLE, JWT_ISSUER: ISSUER, LOCAL_DIR: localDir };
  const stack = await startStack(stackEnv);
  const issuer = await localIssuer(localDir);
  const jwksUrl = `${stack.publicUrl.replace('localhost', '127.0.0.1')}/.well-known/jwks.json`;
  const serviceEnv = { ...stackEnv, JWKS_URL: jwksUrl, POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' };
  Object.assign(process.env, serviceEnv);
  const db = createDocumentClient({ region: 'us-east-1', endpoint: engine.endpoint, maxAttempts: 5, timeoutMs: 60_000 });
  await ensureTables(db, { dataTable: DATA_TABLE, auditTable: AUDIT_TABLE });
  const floorClient = bareClient(engine.endpoint);

  // Seed: realistic tenants, and one endpoint with a week of 1-minute samples, through the seed CLI's writer.
  const now = new Date();
  results.seeding = [];
  for (const agents of TENANT_SIZES) {
    const seedStarted = performance.now();
    const written = await writeTenantAgents(db, { dataTable: DATA_TABLE }, tenantOf(agents), realisticAgents(tenantOf(agents), agents, { now }), 8);
    results.seeding.push({ agents, items: written.items, seconds: (performance.now() - seedStarted) / 1000 });
    say(`seeded ${n(agents)} agents (${n(written.items)} items) in ${results.seeding.at(-1)!.seconds.toFixed(1)} s`);
  }
  const samplesNeeded = Math.max(...WINDOWS) + 60;
  const [observed] = [...realisticAgents('bench-obs', 1, { now, samples: samplesNeeded })];
  await writeTenantAgents(db, { dataTable: DATA_TABLE }, 'bench-obs', [observed], 8);
  await writeTenantAgents(db, { dataTable: DATA_TABLE }, 'bench-cold', realisticAgents('bench-cold', 25, { now }), 8);

  // The handlers as deployed: the bundles, called in this process as Lambda calls them.
  const inventoryHandler = (await import(bundleOf('inventory'))).handler as (e: unknown, c: unknown) => Promise<{ statusCode: number; headers: Record<string, string>; body: string; isBase64Encoded?: boolean }>;
  const observationsHandler = (await import(bundleOf('observations'))).handler as typeof inventoryHandler;
  const fakeRequest = (url: string, headers: Record<string, string>): IncomingMessage =>
    ({ url, method: 'GET', httpVersion: '1.1', headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])), rawHeaders: Object.entries(headers).flat(), socket: { remoteAddress: '127.0.0.1' } }) as unknown as IncomingMessage;
  // What the token authorizer hands over for a verified token (lib/auth/caller.ts), as API Gateway passes it.
  const inventoryEvent = (tenant: string) =>
    restApiEvent(fakeRequest('/api/agents', { 'Accept-Encoding': 'gzip', Authorization: 'Bearer verified-by-the-authorizer' }), '/api/agents', {
      api: 'public',
      authorizer: { principalId: 'bench', tenant, sub: 'bench', exp: String(Math.floor(Date.now() / 1000) + 86_400) },
    });

  // Inventory.
  for (const agents of TENANT_SIZES) {
    const tenant = tenantOf(agents);
    const token = await issuer.sign({ issuer: ISSUER, audience: AUDIENCE, tenant, subject: 'bench' });
    const pk = agentsPartition(tenant);
    let handlerStatus = 0;
    let httpStatus = 0;
    say(`inventory, ${n(agents)} agents: floor, handler and HTTP, ${runsFor(agents)} interleaved runs`);
    const times = await interleaved(
      {
        floor: () => inventoryFloor(floorClient, DATA_TABLE, pk),
        handler: async () => (handlerStatus = (await inventoryHandler(inventoryEvent(tenant), lambdaContext('inventory'))).statusCode),
        http: async () => (httpStatus = (await httpGet(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${token}`, 'Accept-Encoding': 'gzip' })).status),
      },
      runsFor(agents),
    );
    // The response's bytes: from the handler's answer, or for a tenant past the limit, from the same serialization offline.
    const answer = await inventoryHandler(inventoryEvent(tenant), lambdaContext('inventory'));
    const bytes =
      answer.statusCode === 200
        ? (() => {
            const gz = Buffer.from(answer.body, 'base64');
            return { json: gunzipSync(gz).length, gzip: gz.length, lambda: lambdaResponseBytes(answer) };
          })()
        : await offlineBytes(tenant, agents, now);
    say(`  fresh Lambda-like processes (peak RSS, CPU)`);
    const fresh: FreshRun[] = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) fresh.push(await freshInvocation(bundleOf('inventory'), inventoryEvent(tenant), serviceEnv));
    const floorMs = median(times.floor!);
    results.inventory.push({
      agents,
      runs: times.floor!.length,
      floorMs,
      handlerMs: median(times.handler!),
      httpMs: median(times.http!),
      handlerRatio: median(times.handler!) / floorMs,
      httpRatio: median(times.http!) / floorMs,
      handlerStatus,
      httpStatus,
      bytes,
      fresh: {
        status: fresh[0]!.status,
        maxRssMiB: median(fresh.map((f) => f.maxRssMiB)),
        cpuMs: median(fresh.map((f) => f.cpuMs)),
        invokeMs: median(fresh.map((f) => f.invokeMs)),
      },
    });
    const r = results.inventory.at(-1)!;
    say(`  floor ${n(r.floorMs)} ms, handler ${n(r.handlerMs)} ms (${r.handlerRatio.toFixed(2)}x, ${r.handlerStatus}), HTTP ${n(r.httpMs)} ms (${r.httpRatio.toFixed(2)}x, ${r.httpStatus}), fresh process ${n(r.fresh.maxRssMiB)} MiB, ${n(r.fresh.cpuMs)} ms CPU`);
  }

  // Tenant fencing: a second copy of the inventory bundle (its own configuration) with TENANT_FENCING=iam,
  // against an STS stand-in on loopback that answers AssumeRole at once.
  say('tenant fencing: fenced against unfenced inventory handler, cached credentials and first reads');
  const sts = await stsStandIn();
  const fencedEnv = {
    TENANT_FENCING: 'iam',
    TENANT_READ_ROLE_ARN: 'arn:aws:iam::123456789012:role/bench-tenant-read',
    TENANT_AUDIT_ROLE_ARN: 'arn:aws:iam::123456789012:role/bench-tenant-audit',
    STS_ENDPOINT: sts.endpoint,
  };
  Object.assign(process.env, fencedEnv);
  const fencedHandler = (await import(`${pathToFileURL(bundleOf('inventory')).href}?fenced`)).handler as typeof inventoryHandler;
  await fencedHandler(inventoryEvent(tenantOf(TENANT_SIZES[0]!)), lambdaContext('inventory')); // reads its configuration now, with fencing on
  for (const key of Object.keys(fencedEnv)) delete process.env[key];
  {
    const tenant = tenantOf(TENANT_SIZES[0]!);
    const warm = await interleaved(
      {
        off: async () => void (await inventoryHandler(inventoryEvent(tenant), lambdaContext('inventory'))),
        fenced: async () => void (await fencedHandler(inventoryEvent(tenant), lambdaContext('inventory'))),
      },
      quick ? 9 : 21,
    );
    let fresh = 0;
    const callsBefore = sts.calls();
    const first = await interleaved(
      {
        off: async () => void (await inventoryHandler(inventoryEvent(`bench-first-${fresh++}`), lambdaContext('inventory'))),
        fenced: async () => void (await fencedHandler(inventoryEvent(`bench-first-${fresh++}`), lambdaContext('inventory'))),
      },
      quick ? 9 : 21,
    );
    results.fencing = {
      agents: TENANT_SIZES[0]!,
      offMs: median(warm.off!),
      fencedMs: median(warm.fenced!),
      ratio: median(warm.fenced!) / median(warm.off!),
      firstReadOffMs: median(first.off!),
      firstReadFencedMs: median(first.fenced!),
      firstReadRatio: median(first.fenced!) / median(first.off!),
      stsCalls: sts.calls() - callsBefore,
    };
    const f = results.fencing;
    say(`  cached: ${f.offMs.toFixed(1)} ms off, ${f.fencedMs.toFixed(1)} ms fenced (${f.ratio.toFixed(2)}x); first read of a tenant: ${f.firstReadOffMs.toFixed(1)} ms off, ${f.firstReadFencedMs.toFixed(1)} ms fenced (${f.firstReadRatio.toFixed(2)}x, ${f.stsCalls} AssumeRole)`);
  }
  await sts.close();

  // Observations.
  // What the MCP broker sends: a token from the token exchange, naming the broker as actor.
  const brokerToken = (): Promise<string> =>
    brokerTokenFor(
      issuer,
      { issuer: ISSUER, tenantClaim: 'tenant_id', clientId: 'local-broker', audience: 'endpoint-observations', lifetimeSeconds: 3_600 },
      { subject: 'bench', tenant: 'bench-obs' },
    );
  const obsToken = await brokerToken();
  const obsHeaders = { Authorization: `Bearer ${obsToken}`, 'X-Service-Reason': 'bench: dashboard read' };
  for (const minutes of WINDOWS) {
    const path = `/api/mcp/endpoint?agent_id=${encodeURIComponent(observed!.agent_id)}&minutes=${minutes}`;
    const pk = samplesPartition('bench-obs', observed!.agent_id);
    let samples = 0;
    let handlerStatus = 0;
    say(`observations, ${minutes}-minute window: floor, handler and HTTP, ${quick ? 9 : 15} interleaved runs`);
    const times = await interleaved(
      {
        floor: async () => {
          const at = new Date();
          samples = await windowFloor(floorClient, DATA_TABLE, pk, sampleSortKey(new Date(at.getTime() - minutes * 60_000)), sampleSortKey(at));
        },
        handler: async () =>
          (handlerStatus = (await observationsHandler(restApiEvent(fakeRequest(path, obsHeaders), '/api/mcp/endpoint'), lambdaContext('observations'))).statusCode),
        http: () => httpGet(`${stack.privateUrl}${path}`, obsHeaders),
      },
      quick ? 9 : 15,
      2,
    );
    const floorMs = median(times.floor!);
    results.observations.push({
      minutes,
      samples,
      floorMs,
      handlerMs: median(times.handler!),
      httpMs: median(times.http!),
      handlerRatio: median(times.handler!) / floorMs,
      httpRatio: median(times.http!) / floorMs,
      handlerStatus,
    });
    const r = results.observations.at(-1)!;
    say(`  ${n(samples)} samples: floor ${r.floorMs.toFixed(1)} ms, handler ${r.handlerMs.toFixed(1)} ms (${r.handlerRatio.toFixed(2)}x, ${handlerStatus}), HTTP ${r.httpMs.toFixed(1)} ms (${r.httpRatio.toFixed(2)}x)`);
  }

  // Cold start: spawn to first answer, fresh processes, interleaved.
  say(`cold starts, ${quick ? 5 : 9} interleaved runs per bundle`);
  const coldToken = await brokerToken();
  const coldRuns: Record<string, FreshRun[]> = { inventory: [], observations: [], 'bare-sdk': [] };
  await interleaved(
    {
      inventory: async () => coldRuns.inventory!.push(await freshInvocation(bundleOf('inventory'), inventoryEvent('bench-cold'), serviceEnv)),
      observations: async () =>
        coldRuns.observations!.push(
          await freshInvocation(
            bundleOf('observations'),
            restApiEvent(fakeRequest(`/api/mcp/endpoint?agent_id=${encodeURIComponent(observed!.agent_id)}`, { ...obsHeaders, Authorization: `Bearer ${coldToken}` }), '/api/mcp/endpoint'),
            serviceEnv,
          ),
        ),
      'bare-sdk': async () => coldRuns['bare-sdk']!.push(await freshInvocation(bundleOf('bare-sdk'), { pk: agentsPartition('bench-cold') }, serviceEnv)),
    },
    quick ? 5 : 9,
  );
  const floorCold = median(coldRuns['bare-sdk']!.map((r) => r.wallMs));
  for (const name of ['inventory', 'observations', 'bare-sdk']) {
    const runs = coldRuns[name]!;
    if (runs.some((r) => r.status !== 200)) throw new Error(`the ${name} cold start did not answer 200`);
    const ms = median(runs.map((r) => r.wallMs));
    results.coldStart.push({ name, ms, importMs: median(runs.map((r) => r.importMs)), ratio: ms / floorCold });
  }
  say(`  ${results.coldStart.map((c) => `${c.name} ${n(c.ms)} ms (${c.ratio.toFixed(2)}x)`).join(', ')}`);

  // gzip levels on the 10,000-agent tenant, then the largest tenant that fits at the chosen level.
  say('gzip levels and the largest tenant that fits');
  const tenParts = summaries(tenantOf(10_000), 10_000, now);
  for (const level of [1, 4, 6, 9]) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      bytes = (await gzipJsonArray(tenParts, level)).length;
      times.push(performance.now() - t);
    }
    results.gzipLevels.push({ level, agents: 10_000, bytes, ms: median(times) });
  }
  if (!quick) results.largestTenant = await largestTenant(now, db, inventoryHandler, inventoryEvent, serviceEnv, bundleOf('inventory'));

  results.targets = targets(results);
  results.memory = memoryRecommendation(results);
  results.durationSeconds = (performance.now() - started) / 1000;
  writeReport(results, { root: ROOT, quick });
  for (const t of results.targets) say(`${t.met ? 'ok  ' : 'MISS'} ${t.what}: ${t.measured} (target ${t.target})`);
  say(`done in ${(results.durationSeconds / 60).toFixed(1)} min; wrote bench/results${quick ? '.quick' : ''}.json${quick ? '' : ', bench/results.svg and README.md (Performance)'}`);
  await stopChildren();
  rmSync(dist, { recursive: true, force: true });
  rmSync(localDir, { recursive: true, force: true });
  return results.targets.every((t) => t.met) ? 0 : 1;
}

/** A generated tenant's summaries as the service serializes them, without the store, in generation order. */
function generatedSummaries(tenant: string, agents: number, now: Date, seed?: number): { key: string; json: string }[] {
  const options = { now, onlineGraceSeconds: 120 };
  const list = [...realisticAgents(tenant, agents, { now, ...(seed === undefined ? {} : { seed }) })].map((a) => {
    const hello = { agent_id: a.agent_id, hostname: a.hostname, os: a.os, arch: a.arch, version: a.version };
    const durable = a.durable === false ? undefined : { ...hello, client_id: a.client_id ?? undefined, enrolled_at: a.enrolled_at ?? undefined, update_ring: a.update_ring ?? undefined, last_heartbeat: a.last_heartbeat ?? undefined };
    const connection = a.connection
      ? { ...hello, state: a.connection.state, connected_at: a.connection.connected_at ?? undefined, disconnected_at: a.connection.disconnected_at ?? undefined, last_heartbeat: a.connection.last_heartbeat ?? a.last_heartbeat ?? undefined }
      : undefined;
    const summary = summarizeAgent(durable, connection, options);
    return { key: summary.agent_id, json: JSON.stringify(summary) };
  });
  return list;
}

/** The inventory of a generated tenant as the service answers it: serialized summaries in agent_id order. */
function summaries(tenant: string, agents: number, now: Date): string[] {
  return byKey(generatedSummaries(tenant, agents, now)).map((e) => e.json);
}

const byKey = <T extends { key: string }>(entries: T[]): T[] => [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

/** The bytes of a tenant's inventory answer (JSON, gzip, as Lambda measures it) computed offline, for a tenant past the limit. */
async function offlineBytes(tenant: string, agents: number, now: Date): Promise<{ json: number; gzip: number; lambda: number }> {
  const parts = summaries(tenant, agents, now);
  const gz = await gzipJsonArray(parts);
  const envelope = { statusCode: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Unreadable-Records': '0', Vary: 'Accept-Encoding', 'Content-Encoding': 'gzip' }, body: gz.toString('base64'), isBase64Encoded: true };
  return { json: Buffer.byteLength(`[${parts.join(',')}]`), gzip: gz.length, lambda: lambdaResponseBytes(envelope) };
}

/**
 * The largest realistic tenant whose inventory fits Lambda's limit: found offline with the
 * service's own summaries and stream (at the run's clock), then seeded and listed through the
 * handler (200, and its size as Lambda measures it) and in a fresh process (peak RSS, CPU).
 */
async function largestTenant(
  now: Date,
  db: ReturnType<typeof createDocumentClient>,
  handler: (e: unknown, c: unknown) => Promise<{ statusCode: number; headers: Record<string, string>; body: string; isBase64Encoded?: boolean }>,
  eventOf: (tenant: string) => unknown,
  env: Record<string, string>,
  bundle: string,
): Promise<NonNullable<BenchResults['largestTenant']>> {
  const tenant = 'bench-largest';
  const seed = seedOf(tenant);
  const all = generatedSummaries(tenant, 100_000, now, seed);
  const sizeOf = async (count: number): Promise<number> => {
    const keyed = byKey(all.slice(0, count));
    const stream = new JsonArrayStream({ acceptEncoding: 'gzip', keyOf: (e) => (e as AgentSummary).agent_id });
    for (const { key, json } of keyed) stream.add(key, json);
    try {
      return lambdaResponseBytes(await stream.respond(200, { headers: { 'X-Unreadable-Records': '0' }, tooLarge: (b) => String(b) }));
    } catch (error) {
      return Number((error as Error).message);
    }
  };
  // The generator's first agents do not depend on the count when the seed is fixed: slices are tenants.
  let low = 50_000;
  let high = 100_000;
  if ((await sizeOf(high)) <= LAMBDA_RESPONSE_LIMIT_BYTES) low = high;
  while (high - low > 25) {
    const mid = Math.floor((low + high) / 2);
    if ((await sizeOf(mid)) <= LAMBDA_RESPONSE_LIMIT_BYTES) low = mid;
    else high = mid;
  }
  const agents = low;
  const offlineBytesAtMax = await sizeOf(agents);
  say(`  largest tenant offline: ${n(agents)} agents, ${n(offlineBytesAtMax)} bytes; seeding it to list it through the handler`);
  await writeTenantAgents(db, { dataTable: DATA_TABLE }, tenant, realisticAgents(tenant, agents, { now, seed }), 8);
  const answer = await handler(eventOf(tenant), lambdaContext('inventory'));
  const fresh = await freshInvocation(bundle, eventOf(tenant), env);
  return {
    agents,
    level: GZIP_LEVEL,
    offlineBytes: offlineBytesAtMax,
    handlerStatus: answer.statusCode,
    handlerBytes: lambdaResponseBytes(answer as Parameters<typeof lambdaResponseBytes>[0]),
    fresh: { maxRssMiB: fresh.maxRssMiB, cpuMs: fresh.cpuMs, invokeMs: fresh.invokeMs, status: fresh.status },
  };
}

function targets(r: BenchResults): Target[] {
  const out: Target[] = [];
  const ratio = (x: number): string => `${x.toFixed(2)}x`;
  for (const i of r.inventory.filter((x) => x.agents >= 10_000)) {
    out.push({ what: `inventory handler, ${n(i.agents)} agents`, target: '<= 1.15x floor', measured: ratio(i.handlerRatio), met: i.handlerRatio <= 1.15 });
    out.push({ what: `inventory over HTTP, ${n(i.agents)} agents`, target: '<= 1.3x floor', measured: ratio(i.httpRatio), met: i.httpRatio <= 1.3 });
  }
  for (const o of r.observations) {
    out.push({ what: `observations handler, ${o.minutes}-minute window`, target: '<= 1.2x floor', measured: ratio(o.handlerRatio), met: o.handlerRatio <= 1.2 });
  }
  for (const b of r.bundles.filter((x) => x.name !== 'bare-sdk')) {
    out.push({ what: `${b.name} bundle`, target: '<= 400 KiB', measured: `${(b.bytes / 1024).toFixed(0)} KiB`, met: b.bytes <= 400 * 1024 });
  }
  for (const c of r.coldStart.filter((x) => x.name !== 'bare-sdk')) {
    out.push({ what: `${c.name} cold start`, target: '<= 1.5x bare-SDK bundle', measured: ratio(c.ratio), met: c.ratio <= 1.5 });
  }
  const hundred = r.inventory.find((x) => x.agents === 100_000);
  if (hundred) out.push({ what: 'peak RSS, 100,000 agents, fresh process', target: '<= 250 MB', measured: `${n(hundred.fresh.maxRssMiB)} MiB`, met: hundred.fresh.maxRssMiB * 1.048576 <= 250 });
  return out;
}

/**
 * The memory size the inventory function needs, from what was measured: Lambda gives a function
 * CPU in proportion to its memory (one vCPU at 1,769 MB), and the largest tenant that can be listed
 * must finish well inside the 15-second timeout: its CPU (measured here, cold process included)
 * within a quarter of it, leaving the rest for DynamoDB's pages, slower cores than this machine's
 * and garbage collection; and its peak RSS at most half the memory.
 */
function memoryRecommendation(r: BenchResults): BenchResults['memory'] {
  const worst = r.largestTenant?.fresh ?? r.inventory.at(-1)?.fresh;
  if (!worst) return undefined;
  const cpuSeconds = worst.cpuMs / 1000;
  const forCpu = (cpuSeconds * 1769) / 3.75;
  const forRss = worst.maxRssMiB * 2;
  const sizes = [512, 768, 1024, 1280, 1536, 1769, 2048, 3008];
  const mb = sizes.find((s) => s >= Math.max(forCpu, forRss)) ?? 3008;
  return {
    mb,
    basis: r.largestTenant ? `the largest tenant that fits (${n(r.largestTenant.agents)} agents)` : `the largest tenant measured (${n(r.inventory.at(-1)!.agents)} agents)`,
    cpuSeconds,
    maxRssMiB: worst.maxRssMiB,
    secondsAt512: (cpuSeconds * 1769) / 512,
    secondsAtRecommended: (cpuSeconds * 1769) / mb,
  };
}

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    await stopChildren();
    console.error(error instanceof Error ? error.stack : error);
    process.exit(2);
  },
);

/** A stand-in for STS on loopback: answers every AssumeRole at once with credentials valid an hour, and counts them. */
async function stsStandIn(): Promise<{ endpoint: string; calls: () => number; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      res.writeHead(200, { 'Content-Type': 'text/xml' });
      res.end(
        `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>ASIABENCH${calls}</AccessKeyId>` +
          `<SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken><Expiration>${new Date(Date.now() + 3_600_000).toISOString()}</Expiration></Credentials>` +
          `<AssumedRoleUser><AssumedRoleId>AROABENCH:s</AssumedRoleId><Arn>arn:aws:sts::123456789012:assumed-role/bench-tenant-read/s</Arn></AssumedRoleUser></AssumeRoleResult>` +
          `<ResponseMetadata><RequestId>r${calls}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
