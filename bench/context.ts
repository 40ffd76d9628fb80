import '../infra/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { buildAll, bundleOptions, FUNCTIONS, type FunctionName, ROOT } from '../infra/build.js';
import { GZIP_LEVEL } from '../lib/json-array-stream.js';
import { ENDPOINT_VIEW } from '../lib/mcp/app/manifest.js';
import { createDocumentClient } from '../lib/store/client.js';
import { restApiEvent } from '../local/events.js';
import { runtimeEnvironment } from '../local/lambda/environment.js';
import type { LambdaFunctionSpec } from '../local/lambda/function-specs.js';
import { type LambdaRuntime, lambdaRuntime } from '../local/lambda/runtimes.js';
import { type LocalStack, type LocalStackConfig, startLocalStack } from '../local/stack.js';
import { ensureTables } from '../local/tables.js';
import { corePlan, pinThisProcess } from './cores.js';
import { type FunctionCore, startEngine, startFunctionCore, stopChildren } from './processes.js';
import { BARE_MCP, BENCH_BUNDLES, type BenchResults, MCP_RUNTIME_SDK } from './report.js';
import type { FreshSandbox } from './sandbox.js';
import { at } from './stats.js';

/**
 * What every figure of the bench shares: the deployed bundles (and the floors', built with the same
 * options), the engine in a process of its own, the local stack of `npm start` running those
 * bundles in its sandboxes (a process per function instance, on the Node of Lambda's runtime), the
 * process on the function's core that runs the floors and the in-process call, the tables, the
 * issuer, and the results being written. The cores are split as bench/cores.ts says: AWS's side
 * (this process, the engine) on one, the function's instances and that process on the other.
 */
export interface BenchContext {
  quick: boolean;
  now: Date;
  say: (line: string) => void;
  results: BenchResults;
  bundleOf: (name: string) => string;
  engineEndpoint: string;
  /** The local stack, in this process; its functions each in their sandboxes (the handler figures invoke them there). */
  stack: LocalStack;
  issuer: LocalStack['issuer'];
  db: ReturnType<typeof createDocumentClient>;
  /** The process on the function's core (bench/function-core.ts): the floors' readers and the in-process call. */
  functionCore: FunctionCore;
  /** The runtime the sandboxes run the bundles under: its Node, and the CPUs it is confined to. */
  runtime: LambdaRuntime;
  /** A function's sandbox for fresh instances (bench/sandbox.ts invokeFresh): the stack's settings, `overrides` on top. */
  freshSandbox: (
    name: FunctionName | typeof MCP_RUNTIME_SDK | typeof BARE_MCP | 'bare-sdk',
    overrides?: { environment?: Record<string, string>; spec?: Partial<LambdaFunctionSpec> },
  ) => FreshSandbox;
  dataTable: string;
  auditTable: string;
  issuerUrl: string;
  audience: string;
  /** The stack's configuration (tables, issuer, audiences, claims), as it gives it to its functions. */
  cfg: LocalStackConfig;
  /** A Node request as the local listener sees one, for the event builders. */
  fakeRequest: (url: string, headers: Record<string, string>, method?: string) => IncomingMessage;
  /** A request to a public door for `tenant`, as the gateway hands it over after its token authorizer. */
  publicDoorEvent: (
    path: string,
    tenant: string,
    request?: { method?: string; headers?: Record<string, string>; body?: string },
  ) => unknown;
  /** The inventory's event for `tenant` (a publicDoorEvent) with this `Accept-Encoding` (gzip unless told; '' for none). */
  inventoryEvent: (tenant: string, acceptEncoding?: string) => unknown;
  /** The CPU floor's bundle (bench/cpu-floor-main.ts), built with the functions' options, run fresh by bench/processes.ts runCpuFloor. */
  cpuFloorBundle: string;
  cleanup: () => Promise<void>;
}

const DATA_TABLE = 'bench-data';
const AUDIT_TABLE = 'bench-audit';
const ISSUER = 'http://issuer.bench.localhost';

export async function benchContext(quick: boolean): Promise<BenchContext> {
  const say = (line: string): void => void process.stderr.write(`${line}\n`);
  // First, before any child starts: children inherit this process's core.
  const plan = corePlan();
  pinThisProcess(plan);
  say(`cores: ${plan.description}`);
  const results: BenchResults = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, cores: plan.description },
    gzipLevel: GZIP_LEVEL,
    inventory: [],
    observations: [],
    bundles: [],
    coldStart: [],
    gzipLevels: [],
    brotliQualities: [],
    seeding: [],
    fencing: undefined,
    targets: [],
    sizing: undefined,
    durationSeconds: 0,
  };

  say('building bundles');
  const dist = mkdtempSync(join(tmpdir(), 'bench-dist-'));
  const built = await buildAll(dist);
  const bareBundle = join(dist, 'bare-sdk', 'index.mjs');
  await build(bundleOptions(join(ROOT, 'bench', 'bare-sdk-handler.ts'), bareBundle));
  const bareMcpBundle = join(dist, BARE_MCP, 'index.mjs');
  await build(bundleOptions(join(ROOT, 'bench', 'bare-mcp-handler.ts'), bareMcpBundle));
  const cpuFloorBundle = join(dist, 'cpu-floor', 'index.mjs');
  await build(bundleOptions(join(ROOT, 'bench', 'cpu-floor-main.ts'), cpuFloorBundle));
  // The MCP door as it would be with the AWS SDK left to the Lambda runtime: the one way to take its
  // bundle under 500 KiB without writing the protocol by hand. Built under node_modules, so Node
  // loads the SDK's own files from there (their CommonJS builds, as the runtime's copy is).
  mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  const runtimeSdkDir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'bench-mcp-runtime-sdk-'));
  const runtimeSdkBundle = join(runtimeSdkDir, 'index.mjs');
  await build({ ...bundleOptions(join(ROOT, FUNCTIONS.mcp), runtimeSdkBundle), external: ['@aws-sdk/*', '@smithy/*'] });
  const extra: Record<string, string> = { 'bare-sdk': bareBundle, [BARE_MCP]: bareMcpBundle, [MCP_RUNTIME_SDK]: runtimeSdkBundle };
  const bundleOf = (name: string): string => extra[name] ?? at(built.filter((b) => b.name === name)).bundle;
  for (const name of BENCH_BUNDLES) results.bundles.push({ name, bytes: readFileSync(bundleOf(name)).length });
  const mcp = built.find((b) => b.name === 'mcp');
  if (mcp) {
    const view = readFileSync(join(dirname(mcp.bundle), ENDPOINT_VIEW.file));
    results.views = [
      { file: ENDPOINT_VIEW.file, bytes: view.length, gzipBytes: gzipSync(view).length, mcpZipBytes: readFileSync(mcp.zip).length },
    ];
  }

  say('starting the engine in its own process, and the local stack running the bundles in its sandboxes');
  const engine = await startEngine();
  const localDir = mkdtempSync(join(tmpdir(), 'bench-local-'));
  // The local engine holding a million agents pauses for its garbage collector far longer than
  // DynamoDB ever takes for a page: give each attempt room, as the bench measures the service, not
  // its timeouts against a slow local engine.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_TABLE,
    AUDIT_TABLE,
    JWT_ISSUER: ISSUER,
    DYNAMODB_TIMEOUT_MS: '60000',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    // Every instance of every function on the function's core (local/lambda/runtimes.ts).
    ...(plan.function ? { LAMBDA_RUNTIME_CPUS: plan.function } : {}),
  };
  const stack = await startLocalStack({
    port: 0,
    privatePort: 0,
    dynamoEndpoint: engine.endpoint,
    seed: 'none',
    localDir,
    bundlesDir: dist,
    env,
    quiet: true,
  });
  const runtime = await lambdaRuntime(env);
  say(runtime.description);
  results.machine.functionNode = `${runtime.node.version} (${runtime.node.source})`;
  // The process on the function's core, on the sandboxes' Node, with the inventory's environment as an instance has it.
  const inventorySpec = stack.functions.specs.inventory;
  const functionCore = await startFunctionCore({
    node: runtime.node.path,
    cpus: plan.function,
    environment: {
      ...stack.functions.environment('inventory'),
      ...runtimeEnvironment(
        inventorySpec,
        { runtimeApi: '127.0.0.1:0', taskRoot: dirname(bundleOf('inventory')), runtimeDir: runtime.dir, logStream: 'bench-in-process' },
        env,
      ),
    },
  });
  // The bare-SDK floor runs with the observations function's settings and environment (it reads the same table), the bare MCP SDK with the MCP door's.
  const sandboxOf: Record<string, FunctionName> = { 'bare-sdk': 'observations', [BARE_MCP]: 'mcp', [MCP_RUNTIME_SDK]: 'mcp' };
  const freshSandbox: BenchContext['freshSandbox'] = (name, overrides = {}) => {
    const fn = sandboxOf[name] ?? (name as FunctionName);
    return {
      spec: { ...stack.functions.specs[fn], ...overrides.spec },
      environment: { ...stack.functions.environment(fn), ...overrides.environment },
      bundleDir: dirname(bundleOf(name)),
      runtime,
      userEnv: env,
    };
  };
  const cfg = stack.config;
  const db = createDocumentClient({ region: 'us-east-1', endpoint: engine.endpoint, maxAttempts: 5, timeoutMs: 60_000 });
  await ensureTables(db, { dataTable: DATA_TABLE, auditTable: AUDIT_TABLE });

  const fakeRequest = (url: string, headers: Record<string, string>, method = 'GET'): IncomingMessage =>
    ({
      url,
      method,
      httpVersion: '1.1',
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
      rawHeaders: Object.entries(headers).flat(),
      socket: { remoteAddress: '127.0.0.1' },
    }) as unknown as IncomingMessage;
  // What the token authorizer hands over for a verified token (lib/auth/caller.ts), as API Gateway passes it.
  const publicDoorEvent: BenchContext['publicDoorEvent'] = (path, tenant, { method = 'GET', headers = {}, body } = {}) =>
    restApiEvent(fakeRequest(path, { ...headers, Authorization: 'Bearer verified-by-the-authorizer' }, method), path, {
      api: 'public',
      ...(body === undefined ? {} : { body: Buffer.from(body) }),
      authorizer: {
        principalId: 'bench',
        tenant,
        sub: 'bench',
        exp: String(Math.floor(Date.now() / 1000) + 86_400),
        // The door's scope, granted to the token the authorizer verified (lib/auth/caller.ts checks it).
        grantedScopes: cfg.requiredScope ?? '',
      },
    });
  return {
    quick,
    now: new Date(),
    say,
    results,
    bundleOf,
    engineEndpoint: engine.endpoint,
    stack,
    issuer: stack.issuer,
    db,
    functionCore,
    runtime,
    freshSandbox,
    dataTable: DATA_TABLE,
    auditTable: AUDIT_TABLE,
    issuerUrl: ISSUER,
    audience: cfg.jwtAudience,
    cfg,
    fakeRequest,
    publicDoorEvent,
    inventoryEvent: (tenant, acceptEncoding = 'gzip') =>
      publicDoorEvent('/api/agents', tenant, { headers: acceptEncoding ? { 'Accept-Encoding': acceptEncoding } : {} }),
    cpuFloorBundle,
    async cleanup() {
      await stack.stop();
      await stopChildren();
      rmSync(dist, { recursive: true, force: true });
      rmSync(localDir, { recursive: true, force: true });
      rmSync(runtimeSdkDir, { recursive: true, force: true });
    },
  };
}
