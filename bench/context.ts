import '../infra/local/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
import '../infra/local/streaming.js'; // the Lambda runtime stand-in, before the streaming inventory bundle loads
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { buildAll, bundleOptions, FUNCTIONS, ROOT } from '../infra/build.js';
import { ISSUER_PATHS } from '../infra/local/authorization-server.js';
import { restApiEvent } from '../infra/local/events.js';
import { type LocalIssuer, localIssuer } from '../infra/local/issuer.js';
import type { StreamingHandler } from '../infra/local/streaming.js';
import { type Config, parseConfig } from '../lib/config.js';
import { GZIP_LEVEL } from '../lib/json-array-stream.js';
import { ENDPOINT_VIEW } from '../lib/mcp/app/manifest.js';
import { createDocumentClient } from '../lib/store/client.js';
import { ensureTables } from '../lib/store/tables.js';
import { bareClient } from './floors.js';
import { startEngine, startStack, stopChildren } from './processes.js';
import { BENCH_BUNDLES, type BenchResults, MCP_RUNTIME_SDK } from './report.js';

/**
 * What every figure of the bench shares: the deployed bundles (and the floors' and the runtime
 * stand-in's, built with the same options), the engine and the local stack each in a process of
 * their own, the tables, the issuer, and the results being written.
 */
export interface BenchContext {
  quick: boolean;
  now: Date;
  say: (line: string) => void;
  results: BenchResults;
  bundleOf: (name: string) => string;
  engineEndpoint: string;
  stack: { publicUrl: string; privateUrl: string };
  issuer: LocalIssuer;
  db: ReturnType<typeof createDocumentClient>;
  floorClient: ReturnType<typeof bareClient>;
  /** The functions' environment (as in a Lambda-like fresh process). */
  serviceEnv: Record<string, string>;
  dataTable: string;
  auditTable: string;
  issuerUrl: string;
  audience: string;
  /** The service's configuration under the bench's environment. */
  cfg: Config;
  /** The handlers as deployed: the bundles, imported into this process. */
  inventoryHandler: StreamingHandler;
  observationsHandler: (event: unknown, context: unknown) => Promise<{ statusCode: number }>;
  /** A Node request as the local listener sees one, for the event builders. */
  fakeRequest: (url: string, headers: Record<string, string>, method?: string) => IncomingMessage;
  /** A request to a public door for `tenant`, as the gateway hands it over after its token authorizer. */
  publicDoorEvent: (
    path: string,
    tenant: string,
    request?: { method?: string; headers?: Record<string, string>; body?: string },
  ) => unknown;
  /** The inventory's event for `tenant` (a publicDoorEvent; gzip accepted unless `gzip: false`). */
  inventoryEvent: (tenant: string, options?: { gzip?: boolean }) => unknown;
  cleanup: () => Promise<void>;
}

const DATA_TABLE = 'bench-data';
const AUDIT_TABLE = 'bench-audit';
const ISSUER = 'http://localhost:bench-issuer';

export async function benchContext(quick: boolean): Promise<BenchContext> {
  const say = (line: string): void => void process.stderr.write(`${line}\n`);
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
  await build({ ...bundleOptions(join(ROOT, 'bench', 'bare-sdk-handler.ts'), bareBundle), sourcemap: false });
  const standIn = join(dist, 'stand-in', 'index.mjs');
  await build({ ...bundleOptions(join(ROOT, 'infra', 'local', 'streaming.ts'), standIn), sourcemap: false });
  // The MCP door as it would be with the AWS SDK left to the Lambda runtime: the one way to take its
  // bundle under 500 KiB without writing the protocol by hand. Built under node_modules, so Node
  // loads the SDK's own files from there (their CommonJS builds, as the runtime's copy is).
  mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  const runtimeSdkDir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'bench-mcp-runtime-sdk-'));
  const runtimeSdkBundle = join(runtimeSdkDir, 'index.mjs');
  await build({ ...bundleOptions(join(ROOT, FUNCTIONS.mcp), runtimeSdkBundle), sourcemap: false, external: ['@aws-sdk/*', '@smithy/*'] });
  const extra: Record<string, string> = { 'bare-sdk': bareBundle, [MCP_RUNTIME_SDK]: runtimeSdkBundle };
  const bundleOf = (name: string): string => extra[name] ?? built.find((b) => b.name === name)!.bundle;
  for (const name of BENCH_BUNDLES) results.bundles.push({ name, bytes: readFileSync(bundleOf(name)).length });
  const mcp = built.find((b) => b.name === 'mcp');
  if (mcp) {
    const view = readFileSync(join(dirname(mcp.bundle), ENDPOINT_VIEW.file));
    results.views = [
      { file: ENDPOINT_VIEW.file, bytes: view.length, gzipBytes: gzipSync(view).length, mcpZipBytes: readFileSync(mcp.zip).length },
    ];
  }

  say('starting the engine and the local stack, each in its own process');
  const engine = await startEngine();
  const localDir = mkdtempSync(join(tmpdir(), 'bench-local-'));
  // The local engine holding a million agents pauses for its garbage collector far longer than
  // DynamoDB ever takes for a page: give each attempt room, as the bench measures the service, not
  // its timeouts against a slow local engine.
  const stackEnv = {
    DYNAMODB_ENDPOINT: engine.endpoint,
    DATA_TABLE,
    AUDIT_TABLE,
    JWT_ISSUER: ISSUER,
    LOCAL_DIR: localDir,
    DYNAMODB_TIMEOUT_MS: '60000',
  };
  const stack = await startStack(stackEnv);
  const issuer = await localIssuer(localDir);
  const jwksUrl = `${stack.publicUrl.replace('localhost', '127.0.0.1')}${ISSUER_PATHS.jwks}`;
  const serviceEnv = {
    ...stackEnv,
    JWKS_URL: jwksUrl,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    BENCH_STAND_IN: standIn,
  };
  Object.assign(process.env, serviceEnv);
  // The service's configuration as the handlers read it: audiences, claims and the broker from here, not restated.
  const cfg = parseConfig(process.env);
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
      authorizer: { principalId: 'bench', tenant, sub: 'bench', exp: String(Math.floor(Date.now() / 1000) + 86_400) },
    });
  return {
    quick,
    now: new Date(),
    say,
    results,
    bundleOf,
    engineEndpoint: engine.endpoint,
    stack,
    issuer,
    db,
    floorClient: bareClient(engine.endpoint),
    serviceEnv,
    dataTable: DATA_TABLE,
    auditTable: AUDIT_TABLE,
    issuerUrl: ISSUER,
    audience: cfg.jwtAudience,
    cfg,
    inventoryHandler: (await import(bundleOf('inventory'))).handler as StreamingHandler,
    observationsHandler: (await import(bundleOf('observations'))).handler,
    fakeRequest,
    publicDoorEvent,
    inventoryEvent: (tenant, { gzip = true } = {}) =>
      publicDoorEvent('/api/agents', tenant, { headers: gzip ? { 'Accept-Encoding': 'gzip' } : {} }),
    async cleanup() {
      await stopChildren();
      rmSync(dist, { recursive: true, force: true });
      rmSync(localDir, { recursive: true, force: true });
      rmSync(runtimeSdkDir, { recursive: true, force: true });
    },
  };
}
