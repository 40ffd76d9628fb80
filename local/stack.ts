import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JWTVerifyGetKey } from 'jose';
import { DIST, type FunctionName } from '../infra/build.js';
import { LAMBDA_NODE_MAJOR } from '../infra/node-version.js';
import { ISSUER_PATHS, localAuthorizationServer } from './authorization-server.js';
import { DEMO_TENANTS, demoFleet } from './demo.js';
import { type DemoPulse, startDemoPulse } from './demo-pulse.js';
import { type EmbeddedEngine, startEmbeddedEngine } from './engine.js';
import { LocalRefusal } from './failure.js';
import { loadFleet, writeFleet } from './fleet.js';
import { shiftFleet, staleFleetNote } from './fleet-time.js';
import { DEFAULT_INTEGRATION_TIMEOUT_MS, localRestApi } from './gateway.js';
import { type ListenerPolicy, NO_PAGES, neverAnyOrigin, refusal } from './guard.js';
import { LOCAL_DIR, type LocalIssuer, localBrokerSecret, localIssuer } from './issuer.js';
import { type LocalBundles, prebuiltBundles, watchedBundles } from './lambda/bundles.js';
import { functionEnvironment, type LocalStackValues } from './lambda/environment.js';
import { type LambdaFunctionSpec, readFunctionSpecs } from './lambda/function-specs.js';
import { type LocalFunctions, sameVariables, startLocalFunctions } from './lambda/local-functions.js';
import { type LambdaRuntime, lambdaRuntime, RuntimeChoiceError } from './lambda/runtimes.js';
import { sendGatewayResponse, sendLocalFailure } from './listener-io.js';
import { type ListenerRouter, listenerRouter } from './listener-router.js';
import { mcpAppPreviewRoutes } from './mcp-app-preview.js';
import { isLoopbackAddress, loopbackOrigins } from './own-address.js';
import { bind, portsInUseSentence, type StackPort } from './ports.js';
import { type PublicApiAnswers, publicApiAnswers, renderGatewayResponse } from './public-api-answers.js';
import { readFleetFile } from './seed-file.js';
import { audienceAt, readStackConfig, STACK_DEFAULTS, type StackConfig, StackConfigError } from './settings.js';
import { storeClient } from './store-client.js';
import { ensureTables } from './tables.js';
import { ROUTES, type Route, staticRoutes, TENANT_THROTTLE } from './template-routes.js';
import { issuerKeys, OTHER_ISSUER_HINT, refusalOfHeader } from './token-check.js';

export interface StackOptions {
  /** Public listener port (0 = any free port). */
  port?: number;
  /** The public listener's address (default 127.0.0.1, this machine only; HOST). */
  host?: string;
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
  /** A fleet file's times moved to the start and kept reporting, as the demo is (SEED_LIVE=true; local/fleet-time.ts). */
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
  /**
   * The environment the stack and its functions take the service's variables from (README,
   * Configuration): `npm start`'s own unless told otherwise. Never written to.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * Bundles already built (`<dir>/<function>/index.mjs`: a test run's, or `npm run build`'s dist/
   * with LAMBDA_BUNDLES), run as they are. Without it the stack builds them into dist/ with `npm run
   * build`'s options and rebuilds a function when its sources change (esbuild's watch).
   */
  bundlesDir?: string | undefined;
  /** Where the stack builds the bundles and which sources it watches (default dist/ and the project; all the functions). */
  build?: { dir: string; root?: string; functions?: FunctionName[] };
  /** A line a function wrote on stdout or stderr (default: the same stream of this process). */
  functionLog?: (name: FunctionName, line: string, stream: 'stdout' | 'stderr') => void;
  /** How long a warm function instance waits for an event before it is stopped (default 10 minutes). */
  idleMs?: number;
  /** The fixed time of every client ID metadata document failure at the sign-in (default 3 s; tests shorten it). */
  documentFailureMs?: number;
  /**
   * Before anything else, start one instance of each function the user's environment gives a
   * variable to, and refuse to start (StartError) when one cannot finish its init: the functions
   * read and check the service's variables at init, so a bad one stops `npm start` with its
   * sentence instead of failing every request to that function.
   */
  checkInits?: boolean;
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
  /** The address the public listener is bound to (127.0.0.1 unless HOST says otherwise). */
  publicAddress: string;
  privateUrl: string;
  dynamoEndpoint: string;
  issuer: LocalIssuer;
  /** The local broker's client secret at the issuer (the MCP door exchanges tokens with it). */
  brokerSecret: string;
  /** The configuration the stack runs with: its tables, issuer, audiences (each function's own variables are in `functions`). */
  readonly config: LocalStackConfig;
  /** The stack's own DynamoDB client, on its engine (the seed, the CLIs' and the tests' reads). */
  dynamo: DynamoDBDocumentClient;
  /** The deployed functions, each in its sandboxes: their environments and instances. */
  functions: LocalFunctions;
  /** Whether the tables could be created and seeded (false when the engine was down at start). */
  ready: boolean;
  /** The tenants the seed holds, in its order: the demo's, a fleet file's, none for SEED=none. */
  tenants: readonly string[];
  /**
   * Changes variables of the environment the stack was started with (`undefined` unsets one), as
   * a restart with them would, without one: the gateway's configuration, and every function whose
   * environment they change gets new instances (as a deployment gives it), which refuse a bad
   * variable at their init. DYNAMODB_ENDPOINT points the functions at another engine. Returns the
   * values it replaced, to put them back.
   */
  updateEnvironment(changes: Readonly<Record<string, string | undefined>>): Record<string, string | undefined>;
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
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  return path.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}

/** What a listener serves once it is bound: whom it admits (local/guard.ts) and its routes. */
interface Bound {
  policy: ListenerPolicy;
  router: ListenerRouter;
}

/**
 * A listener's request handler: one request id per request, one short access line when the answer
 * is out or the client left before it (method, path, status, time, request id, a function's cold
 * start as Lambda reports it, and that the client left), the guard's 403 for a request that names another host or comes from a page it does not
 * serve (nothing behind it runs), and, for anything the gateway did not foresee, a text/plain
 * answer rather than a crash.
 */
function listener(
  bound: () => Bound | undefined,
  accessLog: ((line: string) => void) | undefined,
  coldStarts: Map<string, string[]>,
  answers: () => PublicApiAnswers | Promise<PublicApiAnswers>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    res.once('close', () => {
      // A cold start of the request's function (or its authorizer) is shown as Lambda's REPORT line shows it.
      const notes = coldStarts.get(requestId);
      coldStarts.delete(requestId);
      const cold = notes ? ` (${notes.join(', ')})` : '';
      // A client that left before the answer was out: no status, or the one begun, and said so.
      const left = res.writableFinished ? '' : ` (the client left before the answer${res.headersSent ? ' ended' : ''})`;
      const status = res.writableFinished || res.headersSent ? String(res.statusCode) : '-';
      accessLog?.(`${req.method} ${printablePath(req)} ${status} ${Math.round(performance.now() - started)} ms ${requestId}${cold}${left}`);
    });
    const serving = bound();
    if (!serving) {
      sendLocalFailure(res, 503, 'The service is starting; try again in a moment.', requestId, { 'Retry-After': '1' });
      return;
    }
    const refused = refusal(req, serving.policy);
    if (refused !== undefined) {
      req.resume();
      sendLocalFailure(res, 403, refused, requestId, { Connection: 'close' });
      return;
    }
    neverAnyOrigin(res);
    serving.router.handle(req, res, requestId).catch(async (error: unknown) => {
      if (res.headersSent) res.destroy();
      else if (error instanceof LocalRefusal) sendLocalFailure(res, error.statusCode, error.message, requestId, { ...error.headers });
      else {
        const made = await Promise.resolve(answers()).catch(() => undefined);
        if (made) sendGatewayResponse(res, renderGatewayResponse(made, 'DEFAULT_5XX', { requestId, status: 500 }));
        else sendLocalFailure(res, 500, 'The gateway failed to handle the request; try again later.', requestId);
      }
    });
  };
}

/**
 * Binds the engine (unless an external one is given) and both listeners. When ports are taken,
 * everything bound is let go and one StartError names every taken port and who holds it.
 */
async function bindAll(
  ports: { public: Server; private: Server; engine?: { port: number; start: (port: number) => Promise<EmbeddedEngine> } },
  options: { port: number; host: string; privatePort: number },
): Promise<{ publicPort: number; privatePort: number; engine: EmbeddedEngine | undefined }> {
  const wanted: Array<{ stackPort: StackPort; attempt: Promise<number | NodeJS.ErrnoException | EmbeddedEngine> }> = [
    {
      stackPort: { port: options.port, variable: 'PORT', role: 'the public listener', kind: 'gateway' },
      attempt: bind(ports.public, options.port, options.host),
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
  const failures = wanted.flatMap((w, i) => {
    const outcome = outcomes[i];
    return outcome instanceof Error ? [{ error: outcome as NodeJS.ErrnoException, at: w.stackPort }] : [];
  });
  if (failures.length === 0) return { publicPort: outcomes[0] as number, privatePort: outcomes[1] as number, engine };
  await Promise.all([closeServer(ports.public), closeServer(ports.private), engine?.close()]);
  const taken = failures.filter((f) => f.error.code === 'EADDRINUSE').map((f) => f.at);
  if (taken.length > 0) throw new StartError(await portsInUseSentence(taken));
  const denied = failures.find((f) => f.error.code === 'EACCES');
  if (denied)
    throw new StartError(
      `port ${denied.at.port} (${denied.at.variable}, ${denied.at.role}) may not be used by this user; choose a port above 1023.`,
    );
  const [first] = failures;
  throw first?.error;
}

/** `1 tenant`, `2 tenants`. */
const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

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
  cfg: StackConfig;
  db: DynamoDBDocumentClient;
}): { ready: Promise<boolean>; stop(): Promise<void> } {
  const { say, seed, fleetFile, seedLive, retryMs, dynamoEndpoint, cfg, db } = options;
  let pulse: DemoPulse | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  const once = async (): Promise<void> => {
    const { created } = await ensureTables(db, cfg);
    if (created.length > 0) say(`created tables: ${created.join(', ')}`);
    if (seed === 'none') return;
    const seededAt = new Date();
    // A fleet file was validated when it was read; the demo is validated as it is written.
    const fleet = fleetFile && seedLive ? shiftFleet(fleetFile, seededAt) : fleetFile;
    const loaded = fleet
      ? await writeFleet(db, cfg, fleet, cfg.sampleRetentionDays)
      : await loadFleet(db, cfg, demoFleet(seededAt), cfg.sampleRetentionDays);
    say(
      `seeded ${seed}: ${count(loaded.tenants, 'tenant')}, ${count(loaded.agents, 'agent')}, ${count(loaded.samples, 'sample')}${fleet && seedLive ? ' (times moved to now, kept reporting)' : ''}`,
    );
    const note = fleetFile && !seedLive ? staleFleetNote(fleetFile, seededAt, cfg.onlineGraceSeconds) : undefined;
    if (note) say(note);
    if ((seed === 'demo' || (fleet && seedLive)) && !stopped) {
      pulse = startDemoPulse({
        start: seededAt,
        intervalMs: options.demoPulseMs ?? 60_000,
        write: (live) => loadFleet(db, cfg, live, cfg.sampleRetentionDays),
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

/** Loopback addresses are spelled out where the stack calls itself (localhost may resolve to ::1 first). */
function loopbackUrl(port: number, path: string): string {
  return `http://127.0.0.1:${port}${path}`;
}

/** The stack's configuration (local/settings.ts) with the addresses of its own listeners the functions call. */
export interface LocalStackConfig extends StackConfig {
  /**
   * JWKS_URL when given; else, for an issuer named off this machine (a JWT_ISSUER the local issuer
   * only signs as, which nobody can ask for its discovery document), the local issuer's keys by
   * loopback address; else none, and the functions find the keys through the issuer's discovery
   * document, as deployed ones do.
   */
  jwksUrl: string | undefined;
  /** The issuer's token endpoint: TOKEN_ENDPOINT, else the local issuer's, by loopback address. */
  tokenEndpoint: string;
  /** The private operation as the MCP door calls it: OBSERVATIONS_URL, else the private listener's. */
  observationsUrl: string;
}

/**
 * The stack's configuration for listeners on these ports: the variables as given, with what only
 * the stack knows where they leave it open (the issuer and its endpoints, the private listener).
 */
function stackConfig(env: NodeJS.ProcessEnv, known: { publicPort: number; privatePort: number }): LocalStackConfig {
  const given = (name: string): string | undefined => env[name]?.trim() || undefined;
  const read = readStackConfig(env, known.publicPort);
  const askable = isLoopbackAddress(new URL(read.jwtIssuer).hostname.replace(/^\[(.*)\]$/, '$1'));
  return Object.freeze({
    ...read,
    jwksUrl: given('JWKS_URL') ?? (askable ? undefined : loopbackUrl(known.publicPort, ISSUER_PATHS.jwks)),
    tokenEndpoint: given('TOKEN_ENDPOINT') ?? loopbackUrl(known.publicPort, ISSUER_PATHS.token),
    observationsUrl: given('OBSERVATIONS_URL') ?? loopbackUrl(known.privatePort, '/api/mcp/endpoint'),
  });
}

/** What the functions' environments take from the stack (local/lambda/environment.ts). */
function localValues(cfg: LocalStackConfig, dynamoEndpoint: string, brokerSecret: string, sandboxNodeMajor: number): LocalStackValues {
  return {
    sandboxNodeMajor,
    publicUrl: cfg.publicUrl,
    issuer: cfg.jwtIssuer,
    jwksUrl: cfg.jwksUrl,
    tokenEndpoint: cfg.tokenEndpoint,
    observationsUrl: cfg.observationsUrl,
    dynamoEndpoint,
    brokerSecret,
    jwtAudience: cfg.jwtAudience,
    mcpAudience: cfg.mcpAudience,
    brokerClientId: cfg.brokerClientId,
    brokerAllowList: cfg.brokerAllowList,
    ownOrigins: cfg.ownOrigins,
  };
}

/**
 * The stack's note on a door's refusal of a token, which API Gateway's answer cannot carry: at the
 * MCP door (its `Unauthorized` says no more than that a valid token is required) why the token was
 * refused; at the inventory door (whose Deny says why) how to make a token this stack accepts, when
 * the token was made for another issuer (another PORT). Checked with the issuer's key set, as the
 * authorizer checks it; undefined when there is nothing to add.
 */
function refusalNotes(
  cfg: () => LocalStackConfig,
): (authorization: string, route: Route, answered: 'UNAUTHORIZED' | 'ACCESS_DENIED') => Promise<string | undefined> {
  let keys: { source: string; get: Promise<JWTVerifyGetKey> } | undefined;
  return async (authorization, route, answered) => {
    const current = cfg();
    const audience = audienceAt(current, route.resource);
    if (audience === undefined) return undefined;
    const source = `${current.jwtIssuer} ${current.jwksUrl ?? ''}`;
    if (keys?.source !== source) keys = { source, get: issuerKeys(current.jwtIssuer, current.jwksUrl) };
    const found = keys;
    const get = await found.get.catch(() => {
      // Asked again for the next refusal: the issuer may be up by then.
      if (keys === found) keys = undefined;
      return undefined;
    });
    if (!get) return undefined;
    const refusal = await refusalOfHeader(authorization, { issuer: current.jwtIssuer, audience, keys: get });
    if (!refusal) return undefined;
    if (answered === 'UNAUTHORIZED') return `Here, locally: ${refusal.message}`;
    return refusal.otherIssuer ? `Here, locally: ${OTHER_ISSUER_HINT}.` : undefined;
  };
}

/** The runtime the instances run the bundles under (LAMBDA_RUNTIME); a choice that cannot be used stops the start with its sentence. */
async function chosenRuntime(env: NodeJS.ProcessEnv): Promise<LambdaRuntime> {
  try {
    return await lambdaRuntime(env);
  } catch (error) {
    if (error instanceof RuntimeChoiceError) throw new StartError(error.message);
    throw error;
  }
}

/** The bundles the functions run: given ones as they are, else built now and rebuilt on change. */
async function functionBundles(options: StackOptions, say: (line: string) => void): Promise<LocalBundles> {
  try {
    if (options.bundlesDir) return prebuiltBundles(options.bundlesDir);
    return await watchedBundles({ dir: DIST, ...options.build, say });
  } catch (error) {
    throw new StartError(`${(error as Error).message}.`);
  }
}

/**
 * Starts the local stack of DESIGN §7: the engine, tables and seed, the issuer (JWKS, metadata,
 * token exchange), the public listener (the public REST API: GET /api/agents, /api/mcp and the
 * RFC 9728 documents, behind the token authorizer) and the private loopback listener (GET
 * /api/mcp/endpoint), each routed by one table (local/listener-router.ts), and behind them the
 * deployed functions, each in sandboxes of its own (local/lambda/). A dependency that is down
 * does not stop the listeners: requests then fail with 503 as they would on AWS.
 */
export async function startLocalStack(options: StackOptions = {}): Promise<LocalStack> {
  const say = options.quiet ? () => undefined : (options.say ?? ((line: string) => process.stdout.write(`${line}\n`)));
  const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env) };
  const seed = options.seed ?? 'demo';
  const issuerUrl = env.JWT_ISSUER?.trim();
  if (issuerUrl && !/^https?:$/.test(URL.canParse(issuerUrl) ? new URL(issuerUrl).protocol : '')) {
    throw new StartError(
      `JWT_ISSUER must be an http or https URL (the local authorization server issues its tokens under it), not ${JSON.stringify(issuerUrl.slice(0, 100))}.`,
    );
  }
  // A bad fleet file stops the start before anything listens.
  const fleetFile = seed === 'demo' || seed === 'none' ? undefined : await readFleetFile(seed);
  const localDir = options.localDir ?? LOCAL_DIR;
  const issuer = await localIssuer(localDir);
  // The broker's secret: one given in the environment wins (the issuer then registers that one).
  const brokerSecret = env.BROKER_CLIENT_SECRET?.trim() || (await localBrokerSecret(localDir));
  // The configuration with the ports asked for; once they are bound (port 0: any free one), with those.
  let known = { publicPort: options.port ?? STACK_DEFAULTS.port, privatePort: options.privatePort ?? STACK_DEFAULTS.privatePort };
  let cfg = stackConfig(env, known);
  let functions: LocalFunctions | undefined;
  const running = (): LocalFunctions => {
    if (!functions) throw new Error('the functions are not started yet');
    return functions;
  };

  // Until the functions are built and the first attempt to create the tables and seed is over, the API answers 503.
  let starting = true;
  // Set once the functions' environment is known, after the ports are bound (below).
  let currentAnswers: () => PublicApiAnswers | Promise<PublicApiAnswers> = () =>
    Promise.reject(new Error('the public API is not configured yet'));
  const coldStarts = new Map<string, string[]>();
  const gatewayOptions = {
    // The MCP door's 401 cannot say why on AWS (docs/mcp.md); locally the stack checks the token as the authorizer did and says.
    explainRefusal: refusalNotes(() => cfg),
    functions: {
      invoke: (name: FunctionName, event: unknown, requestId: string, traceId?: string) =>
        running().invoke(name, event, requestId, traceId),
    },
    answers: () => currentAnswers(),
    tenantThrottle: () => ({ ...TENANT_THROTTLE, ...cfg.tenantThrottle }),
    // A streamed route waits as long as its `timeoutInMillis` says (serverless.yml); a buffered one API Gateway's 29 s.
    integrationTimeoutMs: (route: Route) =>
      (!route.mock && route.transferMode === 'STREAM' ? running().specs[route.function].integrationTimeoutMs : undefined) ??
      DEFAULT_INTEGRATION_TIMEOUT_MS,
    isStarting: () => starting,
    onColdStart: (requestId: string, name: string, initDurationMs: number) =>
      coldStarts.set(requestId, [
        ...(coldStarts.get(requestId) ?? []),
        `${name} cold start, Init Duration ${Math.round(initDurationMs)} ms`,
      ]),
  };
  const accessLog = options.quiet ? undefined : say;
  // Routes and names are known once the ports are bound.
  let publicListener: Bound | undefined;
  let privateListener: Bound | undefined;
  const publicServer = createServer(
    listener(
      () => publicListener,
      accessLog,
      coldStarts,
      () => currentAnswers(),
    ),
  );
  const privateServer = createServer(
    listener(
      () => privateListener,
      accessLog,
      coldStarts,
      () => currentAnswers(),
    ),
  );
  const host = options.host ?? '127.0.0.1';

  const bound = await bindAll(
    {
      public: publicServer,
      private: privateServer,
      ...(options.dynamoEndpoint
        ? {}
        : {
            engine: {
              port: options.dynamoPort ?? STACK_DEFAULTS.dynamoPort,
              start: (port: number) => startEmbeddedEngine({ port, dataDir: options.dataDir }),
            },
          }),
    },
    { port: known.publicPort, host, privatePort: known.privatePort },
  );
  const { engine } = bound;
  // The embedded engine's, or the one given (no engine is started then).
  const dynamoEndpoint = engine ? engine.endpoint : String(options.dynamoEndpoint);
  known = { publicPort: bound.publicPort, privatePort: bound.privatePort };
  cfg = stackConfig(env, known);
  const db = storeClient(dynamoEndpoint, cfg);

  // The public listener: the REST API, the local authorization server and the MCP App preview host
  // in one table (local/listener-router.ts), answering its loopback names, and HOST and PUBLIC_URL's when set;
  // pages of its own origins and of MCP_ALLOWED_ORIGINS (browser-based MCP clients sign in and call the door).
  const publicUrl = `http://localhost:${bound.publicPort}`;
  const authorizationServer = await localAuthorizationServer({
    issuer,
    brokerSecret,
    config: cfg,
    // Read at each fetch, so that updateEnvironment changes it as a restart would.
    documentDevOrigins: () => cfg.clientIdDocumentDevOrigins,
    ...(options.documentFailureMs !== undefined ? { documentFailureMs: options.documentFailureMs } : {}),
  });
  const preview = mcpAppPreviewRoutes({ issuer, publicUrl: () => publicUrl, config: cfg });
  const optedIn = [new URL(cfg.publicUrl).host, ...(isLoopbackAddress(host) || host === '0.0.0.0' || host === '::' ? [] : [host])];

  const specs = readFunctionSpecs({ DataTable: cfg.dataTable, AuditTable: cfg.auditTable });
  let functionsDynamoEndpoint = dynamoEndpoint;
  let sandboxNodeMajor = LAMBDA_NODE_MAJOR;
  const environmentOf = (spec: LambdaFunctionSpec): Record<string, string> =>
    functionEnvironment(spec, Object.values(specs), localValues(cfg, functionsDynamoEndpoint, brokerSecret, sandboxNodeMajor), env);
  // What API Gateway answers itself (gateway responses, static answers), made by the deploy code from
  // the environments of the functions behind the doors (the authorizer's and the MCP function's) as
  // the stage's are (local/public-api-answers.ts); made again when a variable they are made from
  // changes, the last ones kept (as by a deployment that failed) when the new cannot be.
  let making: Promise<PublicApiAnswers> | undefined;
  let answered: PublicApiAnswers | undefined;
  let madeFrom: string | undefined;
  /** The doors' values the answers are made from (all of the doors' variables until the first answers name theirs). */
  const sourceOf = (doors: Record<string, string>): string =>
    JSON.stringify((answered?.variables ?? Object.keys(doors).sort()).map((name) => [name, doors[name] ?? null]));
  const makeAnswers = (): Promise<PublicApiAnswers> => {
    const doors = { ...environmentOf(specs.authorizer), ...environmentOf(specs.mcp) };
    const source = sourceOf(doors);
    if (source === madeFrom && (making ?? answered)) return making ?? Promise.resolve(answered as PublicApiAnswers);
    madeFrom = source;
    const made: Promise<PublicApiAnswers> = publicApiAnswers(doors).then(
      (fresh) => {
        answered = fresh;
        if (madeFrom === source) madeFrom = sourceOf(doors);
        return fresh;
      },
      (error: Error) => {
        if (!answered) throw error;
        say(`The public API's own answers cannot be made with this environment (the previous ones are kept): ${error.message}`);
        return answered;
      },
    );
    making = made;
    // Once made (and no newer ones asked for since), they are at hand.
    void made.then(
      () => {
        if (making === made) making = undefined;
      },
      () => undefined,
    );
    return made;
  };
  currentAnswers = () => making ?? answered ?? makeAnswers();
  const firstAnswers = makeAnswers();
  // Unawaited until the bundles are there too; a failure is the start's (below).
  firstAnswers.catch(() => undefined);
  try {
    const [bundles, runtime, first] = await Promise.all([
      functionBundles(options, say),
      chosenRuntime(env),
      firstAnswers.catch((error: Error) => {
        throw new StartError(`the public API's own answers (its gateway responses and static answers) cannot be made: ${error.message}`);
      }),
    ]);
    const routes = [...ROUTES, ...staticRoutes(first)];
    publicListener = {
      policy: {
        extraHosts: () => optedIn,
        pages: {
          origins: () => [...loopbackOrigins(bound.publicPort), new URL(cfg.publicUrl).origin, ...cfg.mcpAllowedOrigins],
          named: `its own origin (${publicUrl}) and MCP_ALLOWED_ORIGINS`,
        },
      },
      router: listenerRouter(localRestApi({ api: 'public', routes, ...gatewayOptions }), [...authorizationServer.routes, ...preview]),
    };
    // The private listener stands for a private REST API that only the broker's VPC endpoint reaches: no web page.
    privateListener = { policy: NO_PAGES, router: listenerRouter(localRestApi({ api: 'private', routes, ...gatewayOptions })) };
    sandboxNodeMajor = Number.parseInt(runtime.node.version, 10);
    functions = startLocalFunctions({
      specs,
      bundles,
      runtime,
      environment: environmentOf,
      userEnv: env,
      ...(options.functionLog ? { log: options.functionLog } : {}),
      say,
      ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    });
    if (options.checkInits) {
      // The stack's own values are checked before it starts (settings.ts); what a function takes
      // straight from the user's environment only its own init can check. Logging switches aside
      // (Powertools reads them leniently), a function given nothing of the user's needs no check.
      const stackOnly = Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('POWERTOOLS_')));
      const values = localValues(cfg, functionsDynamoEndpoint, brokerSecret, sandboxNodeMajor);
      const givenByUser = Object.values(specs)
        .filter((spec) => !sameVariables(environmentOf(spec), functionEnvironment(spec, Object.values(specs), values, stackOnly)))
        .map((spec) => spec.name);
      const [failed] = await functions.checkInits(givenByUser);
      if (failed) {
        const sentence = failed.error.errorMessage.split('\n')[0] ?? failed.error.errorType;
        throw new StartError(`the ${failed.name} function cannot start with this environment: ${sentence}`);
      }
    }
  } catch (error) {
    await functions?.stop();
    await Promise.all([closeServer(publicServer), closeServer(privateServer)]);
    await engine?.close();
    throw error;
  }

  const store = prepareStore({
    say,
    seed,
    fleetFile,
    seedLive: options.seedLive ?? false,
    demoPulseMs: options.demoPulseMs,
    retryMs: options.retryMs ?? 5_000,
    dynamoEndpoint,
    cfg,
    db,
  });
  const ready = await store.ready;
  starting = false;

  return {
    publicUrl,
    publicAddress: (publicServer.address() as AddressInfo).address,
    privateUrl: `http://127.0.0.1:${bound.privatePort}`,
    dynamoEndpoint,
    issuer,
    brokerSecret,
    get config() {
      return cfg;
    },
    dynamo: db,
    functions,
    ready,
    tenants: seed === 'none' ? [] : fleetFile ? fleetFile.tenants.map((t) => t.tenant_id) : DEMO_TENANTS,
    updateEnvironment(changes) {
      const previous: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(changes)) {
        previous[name] = env[name];
        if (value === undefined) delete env[name];
        else env[name] = value;
      }
      if ('DYNAMODB_ENDPOINT' in changes) functionsDynamoEndpoint = changes.DYNAMODB_ENDPOINT ?? dynamoEndpoint;
      try {
        cfg = stackConfig(env, known);
      } catch (error) {
        // A bad variable is the functions' to refuse, at their next init, as a deployment with it would be.
        if (!(error instanceof StackConfigError)) throw error;
      }
      for (const spec of Object.values(specs)) running().setEnvironment(spec.name, environmentOf(spec));
      makeAnswers().catch(() => undefined);
      return previous;
    },
    async stop() {
      await store.stop();
      await Promise.all([closeServer(publicServer), closeServer(privateServer)]);
      await running().stop();
      await engine?.close();
      db.destroy();
    },
  };
}
