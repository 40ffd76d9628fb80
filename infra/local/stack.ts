import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { config, resetConfig } from '../../lib/config.js';
import { HttpError } from '../../lib/errors.js';
import { dynamo, setDynamo } from '../../lib/store/client.js';
import { ensureTables } from '../../lib/store/tables.js';
import { renderGatewayResponse } from '../gateway-responses.js';
import { ISSUER_PATHS, localAuthorizationServer } from './authorization-server.js';
import { demoFleet } from './demo.js';
import { type DemoPulse, startDemoPulse } from './demo-pulse.js';
import { type EmbeddedEngine, startEmbeddedEngine } from './engine.js';
import { loadFleet, writeFleet } from './fleet.js';
import { shiftFleet, staleFleetNote } from './fleet-time.js';
import { type LocalRestApi, localRestApi } from './gateway.js';
import { sendGatewayResponse, sendLocalFailure } from './http.js';
import { LOCAL_DIR, type LocalIssuer, localBrokerSecret, localIssuer } from './issuer.js';
import { mcpAppPreview } from './mcp-app-preview.js';
import { bind, portsInUseSentence, type StackPort } from './ports.js';
import { readFleetFile } from './seed-file.js';

export interface StackOptions {
  /** Public listener port (0 = any free port). */
  port?: number;
  /** Private (loopback) listener port (0 = any free port). */
  privatePort?: number;
  /** Embedded engine port, when no external engine is given. */
  dynamoPort?: number;
  /** An external DynamoDB API (DynamoDB Local, AWS); when set no embedded engine starts. */
  dynamoEndpoint?: string | undefined;
  /** Keep the embedded engine's data on disk here instead of in memory. */
  dataDir?: string | undefined;
  /** `demo` (default), `none`, or the path of a fleet file. */
  seed?: string;
  /** A fleet file's times moved to the start and kept reporting, as the demo is (SEED_LIVE=true; infra/local/fleet-time.ts). */
  seedLive?: boolean;
  /** Where the issuer key and the broker's client secret live (default `.local`). */
  localDir?: string;
  /** Print nothing: no progress lines, no access lines (tests). */
  quiet?: boolean;
  /** Where progress, warnings and the access lines go (default stdout; `npm start` holds them until its banner is out). */
  say?: (line: string) => void;
  /** How often the demo reports again (heartbeats and samples), so it stays as documented. */
  demoPulseMs?: number;
  /** How often to try again to create the tables and seed when the store was down at start. */
  retryMs?: number;
}

/**
 * A start that cannot go on, with a sentence for the user (a port in use, a bad fleet file): the
 * start script prints the message alone, without a stack trace, and exits 2.
 */
export class StartError extends Error {
  override name = 'StartError';
}

export interface LocalStack {
  publicUrl: string;
  privateUrl: string;
  dynamoEndpoint: string;
  issuer: LocalIssuer;
  /** The local broker's client secret at the issuer (the MCP door exchanges tokens with it). */
  brokerSecret: string;
  /** Whether the tables could be created and seeded (false when the engine was down at start). */
  ready: boolean;
  stop(): Promise<void>;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** A request's path for the terminal: printable ASCII only, so a client cannot write escape sequences there. */
function printablePath(req: IncomingMessage): string {
  const path = (req.url ?? '/').split('?')[0]!;
  return path.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}

/**
 * A listener's request handler: one request id per request, one short access line when the answer
 * is out (method, path, status, time, request id), and, for anything the gateway did not foresee, a
 * text/plain answer rather than a crash.
 */
function listener(
  handle: (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>,
  accessLog: ((line: string) => void) | undefined,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    if (accessLog) {
      res.once('close', () =>
        accessLog(`${req.method} ${printablePath(req)} ${res.statusCode} ${Math.round(performance.now() - started)} ms ${requestId}`),
      );
    }
    handle(req, res, requestId).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else if (error instanceof HttpError) sendLocalFailure(res, error.statusCode, error.message, requestId, error.headers);
      else sendGatewayResponse(res, renderGatewayResponse('DEFAULT_5XX', { requestId, status: 500, cfg: config() }));
    });
  };
}

/**
 * Binds the engine (unless an external one is given) and both listeners. When ports are taken,
 * everything bound is let go and one StartError names every taken port and who holds it.
 */
async function bindAll(
  ports: { public: Server; private: Server; engine?: { port: number; start: (port: number) => Promise<EmbeddedEngine> } },
  options: { port: number; privatePort: number },
): Promise<{ publicPort: number; privatePort: number; engine: EmbeddedEngine | undefined }> {
  const wanted: Array<{ stackPort: StackPort; attempt: Promise<number | NodeJS.ErrnoException | EmbeddedEngine> }> = [
    {
      stackPort: { port: options.port, variable: 'PORT', role: 'the public listener', kind: 'gateway' },
      attempt: bind(ports.public, options.port, '0.0.0.0'),
    },
    {
      stackPort: { port: options.privatePort, variable: 'PRIVATE_PORT', role: 'the private listener', kind: 'gateway' },
      attempt: bind(ports.private, options.privatePort, '127.0.0.1'),
    },
  ];
  if (ports.engine) {
    const engine = ports.engine;
    wanted.push({
      stackPort: { port: engine.port, variable: 'DYNAMODB_PORT', role: 'the embedded DynamoDB engine', kind: 'engine' },
      attempt: engine.start(engine.port).catch((error: NodeJS.ErrnoException) => error),
    });
  }
  const outcomes = await Promise.all(wanted.map((w) => w.attempt));
  const engine = outcomes[2] && typeof outcomes[2] === 'object' && 'endpoint' in outcomes[2] ? outcomes[2] : undefined;
  const failures = outcomes.flatMap((o, i) =>
    o instanceof Error ? [{ error: o as NodeJS.ErrnoException, at: wanted[i]!.stackPort }] : [],
  );
  if (failures.length === 0) return { publicPort: outcomes[0] as number, privatePort: outcomes[1] as number, engine };
  await Promise.all([closeServer(ports.public), closeServer(ports.private), engine?.close()]);
  const taken = failures.filter((f) => f.error.code === 'EADDRINUSE').map((f) => f.at);
  if (taken.length > 0) throw new StartError(await portsInUseSentence(taken));
  const denied = failures.find((f) => f.error.code === 'EACCES');
  if (denied)
    throw new StartError(
      `port ${denied.at.port} (${denied.at.variable}, ${denied.at.role}) may not be used by this user; choose a port above 1023.`,
    );
  throw failures[0]!.error;
}

/**
 * Creates the tables and seeds them (the demo, or a fleet file), then keeps the demo reporting. A
 * store that is down at start does not stop the stack: it says so and tries again every `retryMs`
 * until the store answers (requests meanwhile get 503). `ready` is whether the first try worked.
 */
function prepareStore(options: {
  say: (line: string) => void;
  seed: string;
  fleetFile: Awaited<ReturnType<typeof readFleetFile>> | undefined;
  seedLive: boolean;
  demoPulseMs: number | undefined;
  retryMs: number;
  dynamoEndpoint: string;
}): { ready: Promise<boolean>; stop(): Promise<void> } {
  const { say, seed, fleetFile, seedLive, retryMs, dynamoEndpoint } = options;
  let pulse: DemoPulse | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  const once = async (): Promise<void> => {
    const cfg = config();
    const { created } = await ensureTables(dynamo(), cfg);
    if (created.length > 0) say(`created tables: ${created.join(', ')}`);
    if (seed === 'none') return;
    const seededAt = new Date();
    // A fleet file was validated when it was read; the demo is validated as it is written.
    const fleet = fleetFile && seedLive ? shiftFleet(fleetFile, seededAt) : fleetFile;
    const loaded = fleet
      ? await writeFleet(dynamo(), cfg, fleet, cfg.sampleRetentionDays)
      : await loadFleet(dynamo(), cfg, demoFleet(seededAt), cfg.sampleRetentionDays);
    say(
      `seeded ${seed}: ${loaded.tenants} tenants, ${loaded.agents} agents, ${loaded.samples} samples${fleet && seedLive ? ' (times moved to now, kept reporting)' : ''}`,
    );
    const note = fleetFile && !seedLive ? staleFleetNote(fleetFile, seededAt, cfg.onlineGraceSeconds) : undefined;
    if (note) say(note);
    if ((seed === 'demo' || (fleet && seedLive)) && !stopped) {
      pulse = startDemoPulse({
        start: seededAt,
        intervalMs: options.demoPulseMs ?? 60_000,
        write: (live) => loadFleet(dynamo(), config(), live, config().sampleRetentionDays),
        warn: say,
        ...(fleet && seedLive ? { fleet } : {}),
      });
    }
  };
  const again = async (): Promise<void> => {
    try {
      await once();
      say(`the data store at ${dynamoEndpoint} answers again: ready.`);
    } catch {
      if (!stopped) retry = setTimeout(() => void again(), retryMs);
    }
  };
  const ready = once().then(
    () => true,
    (error: unknown) => {
      const e = error as Error;
      say(
        `warning: the data store at ${dynamoEndpoint} is not usable (${e.name}: ${e.message}); requests will fail with 503 until it is. ` +
          `Trying again every ${Math.round(retryMs / 1000)} s: the tables${seed === 'none' ? '' : ' and the seed'} are created as soon as it answers.`,
      );
      retry = setTimeout(() => void again(), retryMs);
      return false;
    },
  );
  return {
    ready,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      // A beat still writing ends before the engine closes (a write into a closed engine throws inside it).
      await pulse?.stop();
    },
  };
}

/**
 * Starts the local stack of DESIGN §7: the engine, tables and seed, the issuer (JWKS, metadata,
 * token exchange), the public listener (the public REST API: GET /api/agents, /api/mcp and the
 * RFC 9728 documents, behind the token authorizer) and the private loopback listener (GET
 * /api/mcp/endpoint), both routed by one table (infra/local/routes.ts). A dependency that is down
 * does not stop the listeners: requests then fail with 503 as they would on AWS.
 */
export async function startLocalStack(options: StackOptions = {}): Promise<LocalStack> {
  const say = options.quiet ? () => undefined : (options.say ?? ((line: string) => process.stdout.write(`${line}\n`)));
  const seed = options.seed ?? 'demo';
  // A bad fleet file stops the start before anything listens.
  const fleetFile = seed === 'demo' || seed === 'none' ? undefined : await readFleetFile(seed);
  const localDir = options.localDir ?? LOCAL_DIR;
  const issuer = await localIssuer(localDir);
  // The broker's secret: one given in the environment wins (the issuer then registers that one).
  const brokerSecret = process.env.BROKER_CLIENT_SECRET?.trim() || (await localBrokerSecret(localDir));

  let publicUrl = '';
  // Until the first attempt to create the tables and seed is over, the API answers 503.
  let starting = true;
  const isStarting = (): boolean => starting;
  const publicApi: LocalRestApi = localRestApi({ api: 'public', isStarting });
  const privateApi: LocalRestApi = localRestApi({ api: 'private', isStarting });
  const authorizationServer = localAuthorizationServer({ issuer, brokerSecret, publicUrl: () => publicUrl });
  const preview = mcpAppPreview({ issuer, publicUrl: () => publicUrl });
  const accessLog = options.quiet ? undefined : say;

  const publicServer = createServer(
    listener(async (req, res, requestId) => {
      // The local issuer: JWKS, RFC 8414 metadata, sign-in, registration, token endpoint (infra/local/authorization-server.ts).
      if (await authorizationServer.handle(req, res)) return;
      // The MCP App preview host (infra/local/mcp-app-preview.ts): local only, this machine only.
      if (await preview.handle(req, res)) return;
      await publicApi.handle(req, res, requestId);
    }, accessLog),
  );
  const privateServer = createServer(listener((req, res, requestId) => privateApi.handle(req, res, requestId), accessLog));

  const externalEndpoint = options.dynamoEndpoint;
  const bound = await bindAll(
    {
      public: publicServer,
      private: privateServer,
      ...(externalEndpoint
        ? {}
        : {
            engine: { port: options.dynamoPort ?? 8000, start: (port: number) => startEmbeddedEngine({ port, dataDir: options.dataDir }) },
          }),
    },
    { port: options.port ?? 3000, privatePort: options.privatePort ?? 3001 },
  );
  const engine = bound.engine;
  const dynamoEndpoint = externalEndpoint ?? engine!.endpoint;
  publicUrl = `http://localhost:${bound.publicPort}`;

  // The handlers read their configuration from the environment, as on AWS. Loopback addresses
  // are spelled out where the stack itself calls a listener (localhost may resolve to ::1 first).
  process.env.DYNAMODB_ENDPOINT = dynamoEndpoint;
  process.env.PORT = String(bound.publicPort);
  process.env.PRIVATE_PORT = String(bound.privatePort);
  if (!process.env.JWT_ISSUER) process.env.JWT_ISSUER = publicUrl;
  if (!process.env.JWKS_URL) process.env.JWKS_URL = `http://127.0.0.1:${bound.publicPort}${ISSUER_PATHS.jwks}`;
  if (!process.env.TOKEN_ENDPOINT) process.env.TOKEN_ENDPOINT = `http://127.0.0.1:${bound.publicPort}${ISSUER_PATHS.token}`;
  process.env.BROKER_CLIENT_SECRET = brokerSecret;
  resetConfig();
  setDynamo(undefined);

  const store = prepareStore({
    say,
    seed,
    fleetFile,
    seedLive: options.seedLive ?? false,
    demoPulseMs: options.demoPulseMs,
    retryMs: options.retryMs ?? 5_000,
    dynamoEndpoint,
  });
  const ready = await store.ready;
  starting = false;

  return {
    publicUrl,
    privateUrl: `http://127.0.0.1:${bound.privatePort}`,
    dynamoEndpoint,
    issuer,
    brokerSecret,
    ready,
    async stop() {
      await store.stop();
      await Promise.all([closeServer(publicServer), closeServer(privateServer)]);
      await engine?.close();
    },
  };
}
