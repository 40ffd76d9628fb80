import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyEvent, Context } from 'aws-lambda';
import { config, resetConfig } from '../../lib/config.js';
import { TOKEN_EXCHANGE_GRANT } from '../../lib/auth/token-exchange.js';
import { bearerToken, remoteKeys, verifyBearerToken } from '../../lib/auth/verify.js';
import { HttpError, UnauthorizedError } from '../../lib/errors.js';
import { RESOURCE_METADATA_PATHS } from '../../lib/mcp/resource-metadata.js';
import { dynamo, setDynamo } from '../../lib/store/client.js';
import { ensureTables } from '../../lib/store/tables.js';
import { demoFleet } from './demo.js';
import { startDemoPulse, type DemoPulse } from './demo-pulse.js';
import { startEmbeddedEngine, type EmbeddedEngine } from './engine.js';
import { httpApiEvent, lambdaContext, restApiEvent, stringifyClaims } from './events.js';
import { loadFleet, writeFleet } from './fleet.js';
import { pathOf, sendGatewayFailure, sendHttpError, sendLambdaResult, type LambdaHttpResult } from './http.js';
import { localBrokerSecret, localIssuer, LOCAL_DIR, type LocalIssuer } from './issuer.js';
import { readFleetFile } from './seed-file.js';
import { INVENTORY_TIMEOUT_MS, sendStreamingResult, streamingContext, type StreamingHandler } from './streaming.js';
import { answerTokenRequest, EXCHANGED_TOKEN_SECONDS, type TokenExchangePolicy } from './token-exchange.js';

type HttpApiHandler = (event: APIGatewayProxyEventV2WithJWTAuthorizer, context: Context) => Promise<LambdaHttpResult>;
type RestApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<LambdaHttpResult>;

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
  /** Where the issuer key and the broker's client secret live (default `.local`). */
  localDir?: string;
  /** Print nothing (tests). */
  quiet?: boolean;
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

/** API Gateway's HTTP API accepts bodies up to 10 MB; the MCP door needs far less. */
const MAX_BODY_BYTES = 1_048_576;

/** Listens, or says which port is taken and which variable moves it. */
async function listen(server: Server, port: number, host: string, role: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new StartError(`port ${port} (${role}) is in use by another program; stop it, or choose another port.`));
      else if (error.code === 'EACCES') reject(new StartError(`port ${port} (${role}) may not be used by this user; choose a port above 1023.`));
      else reject(error);
    });
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** Wraps a request handler so an unexpected throw is a 500 text/plain answer, never a crash. */
function guarded(fn: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    fn(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendHttpError(res, error);
      else res.destroy();
    });
  };
}

/** The whole request body, refused with 413 past the limit (as API Gateway refuses an oversized payload). */
async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, 'The request body is too large.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * The API Gateway HTTP API JWT authorizer, emulated for one audience: the same checks AWS makes
 * (see lib/auth/verify.ts), then the claims handed to the handler as strings, the way AWS does.
 */
async function authorize(req: IncomingMessage, audience: string): Promise<Record<string, string>> {
  const cfg = config();
  // Node keeps only the first of two Authorization headers; the raw list shows them all.
  const authorizations = req.rawHeaders.filter((value, i) => i % 2 === 0 && value.toLowerCase() === 'authorization');
  if (authorizations.length > 1) throw new UnauthorizedError('The Authorization header was sent more than once.');
  const token = bearerToken(req.headers.authorization);
  const payload = await verifyBearerToken(token, { issuer: cfg.jwtIssuer, audience, keys: remoteKeys(cfg.jwksUrl) });
  return stringifyClaims(payload as Record<string, unknown>);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/** The local issuer's RFC 8414 metadata: where its keys are and the one grant its token endpoint serves. */
function authorizationServerMetadata(issuerUrl: string, publicUrl: string): Record<string, unknown> {
  return {
    issuer: issuerUrl,
    token_endpoint: `${publicUrl}/oauth2/token`,
    jwks_uri: `${publicUrl}/.well-known/jwks.json`,
    grant_types_supported: [TOKEN_EXCHANGE_GRANT],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    response_types_supported: [],
  };
}

/**
 * Starts the local stack of DESIGN §7: the engine, tables and seed, the issuer (JWKS, metadata,
 * token exchange), the public listener (GET /api/agents, POST /api/mcp and its metadata) and the
 * private loopback listener (GET /api/mcp/endpoint). A dependency that is down does not stop the
 * listeners: requests then fail with 503 as they would on AWS.
 */
export async function startLocalStack(options: StackOptions = {}): Promise<LocalStack> {
  const say = options.quiet ? () => undefined : (line: string) => process.stdout.write(`${line}\n`);
  const seed = options.seed ?? 'demo';
  // A bad fleet file stops the start before anything listens.
  const fleetFile = seed === 'demo' || seed === 'none' ? undefined : await readFleetFile(seed);
  let engine: EmbeddedEngine | undefined;
  const externalEndpoint = options.dynamoEndpoint;
  if (!externalEndpoint) {
    const port = options.dynamoPort ?? 8000;
    try {
      engine = await startEmbeddedEngine({ port, dataDir: options.dataDir });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new StartError(`port ${port} (DYNAMODB_PORT, the embedded DynamoDB engine) is in use by another program; stop it, or set DYNAMODB_PORT to another port.`);
      throw error;
    }
  }
  const dynamoEndpoint = externalEndpoint ?? engine!.endpoint;
  const localDir = options.localDir ?? LOCAL_DIR;
  const issuer = await localIssuer(localDir);
  // The broker's secret: one given in the environment wins (the issuer then registers that one).
  const brokerSecret = process.env.BROKER_CLIENT_SECRET?.trim() || (await localBrokerSecret(localDir));

  // Handlers are the deployed modules; imported here so a test may set the environment first.
  const inventory = (await import('../../functions/inventory/handler.js')).handler as unknown as HttpApiHandler;
  const mcp = (await import('../../functions/mcp/handler.js')).handler as unknown as HttpApiHandler;
  const privateRoutes = await loadPrivateRoutes();
  let publicUrl = '';
  // Until the first attempt to create the tables and seed is over, the API answers 503: a script
  // that waits for the port must not read a half-seeded fleet as the whole one.
  let starting = true;
  const answerWhileStarting = (res: ServerResponse): boolean => {
    if (!starting) return false;
    sendGatewayFailure(res, 503, 'The service is starting (creating its tables and seeding); try again in a moment.', { 'Retry-After': '1' });
    return true;
  };

  const exchangePolicy = (): TokenExchangePolicy => {
    const cfg = config();
    return {
      issuer: cfg.jwtIssuer,
      clients: new Map([[cfg.brokerClientId, brokerSecret]]),
      subjectAudience: cfg.mcpAudience,
      targetAudiences: [cfg.observationsAudience],
      tenantClaim: cfg.tenantClaim,
      lifetimeSeconds: EXCHANGED_TOKEN_SECONDS,
    };
  };

  const publicServer = createServer(
    guarded(async (req, res) => {
      const path = pathOf(req);
      const method = req.method ?? 'GET';
      if (method === 'GET' && path === '/.well-known/jwks.json') {
        sendJson(res, 200, issuer.jwks, { 'Cache-Control': 'max-age=300' });
        return;
      }
      if (method === 'GET' && path === '/.well-known/oauth-authorization-server') {
        sendJson(res, 200, authorizationServerMetadata(config().jwtIssuer, publicUrl), { 'Cache-Control': 'max-age=300' });
        return;
      }
      if (method === 'POST' && path === '/oauth2/token') {
        const form = new URLSearchParams((await readBody(req, 65_536)).toString('utf8'));
        const answer = await answerTokenRequest(issuer, exchangePolicy(), form, req.headers.authorization);
        sendJson(res, answer.status, answer.body, answer.headers);
        return;
      }
      if (answerWhileStarting(res)) return;
      if (method === 'GET' && path === '/api/agents') {
        // An authorizer refusal throws an HttpError: `guarded` answers it (401/503/504) as text/plain.
        const claims = await authorize(req, config().jwtAudience);
        await sendStreamingResult(res, inventory as unknown as StreamingHandler, httpApiEvent(req, 'GET /api/agents', claims), streamingContext('inventory', INVENTORY_TIMEOUT_MS));
        return;
      }
      if (path === '/api/mcp' && ['POST', 'GET', 'DELETE'].includes(method)) {
        // The MCP routes sit behind their own authorizer, whose audience is the MCP resource.
        const claims = await authorize(req, config().mcpAudience);
        const body = method === 'POST' ? await readBody(req) : undefined;
        sendLambdaResult(res, await mcp(httpApiEvent(req, `${method} /api/mcp`, claims, body), lambdaContext('mcp')));
        return;
      }
      if (method === 'GET' && RESOURCE_METADATA_PATHS.includes(path)) {
        sendLambdaResult(res, await mcp(httpApiEvent(req, `GET ${path}`, undefined), lambdaContext('mcp')));
        return;
      }
      // The private operation, and anything else, is not a route of the public API.
      sendGatewayFailure(res, 404, 'No such route.');
    }),
  );

  const privateServer = createServer(
    guarded(async (req, res) => {
      const route = privateRoutes.get(`${req.method} ${pathOf(req)}`);
      if (route && answerWhileStarting(res)) return;
      if (!route) {
        sendGatewayFailure(res, 404, 'No such route.');
        return;
      }
      sendLambdaResult(res, await route.handler(restApiEvent(req, route.resource), lambdaContext(route.name)));
    }),
  );

  let publicPort: number;
  let privatePort: number;
  try {
    publicPort = await listen(publicServer, options.port ?? 3000, '0.0.0.0', 'PORT, the public listener');
    privatePort = await listen(privateServer, options.privatePort ?? 3001, '127.0.0.1', 'PRIVATE_PORT, the private listener');
  } catch (error) {
    await Promise.all([closeServer(publicServer), closeServer(privateServer)]);
    await engine?.close();
    throw error;
  }
  publicUrl = `http://localhost:${publicPort}`;

  // The handlers read their configuration from the environment, as on AWS. Loopback addresses
  // are spelled out where the stack itself calls a listener (localhost may resolve to ::1 first).
  process.env.DYNAMODB_ENDPOINT = dynamoEndpoint;
  process.env.PORT = String(publicPort);
  process.env.PRIVATE_PORT = String(privatePort);
  if (!process.env.JWT_ISSUER) process.env.JWT_ISSUER = publicUrl;
  if (!process.env.JWKS_URL) process.env.JWKS_URL = `http://127.0.0.1:${publicPort}/.well-known/jwks.json`;
  if (!process.env.TOKEN_ENDPOINT) process.env.TOKEN_ENDPOINT = `http://127.0.0.1:${publicPort}/oauth2/token`;
  process.env.BROKER_CLIENT_SECRET = brokerSecret;
  resetConfig();
  setDynamo(undefined);
  const cfg = config();

  let pulse: DemoPulse | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  /** Creates the tables and seeds; true when done. */
  const prepareStore = async (): Promise<boolean> => {
    const { created } = await ensureTables(dynamo(), cfg);
    if (created.length > 0) say(`created tables: ${created.join(', ')}`);
    if (seed !== 'none') {
      const seededAt = new Date();
      // A fleet file was validated when it was read; the demo is validated as it is written.
      const loaded = fleetFile
        ? await writeFleet(dynamo(), cfg, fleetFile, cfg.sampleRetentionDays)
        : await loadFleet(dynamo(), cfg, demoFleet(seededAt), cfg.sampleRetentionDays);
      say(`seeded ${seed}: ${loaded.tenants} tenants, ${loaded.agents} agents, ${loaded.samples} samples`);
      if (seed === 'demo' && !stopped) {
        pulse = startDemoPulse({
          start: seededAt,
          intervalMs: options.demoPulseMs ?? 60_000,
          write: (live) => loadFleet(dynamo(), config(), live, config().sampleRetentionDays),
          warn: say,
        });
      }
    }
    return true;
  };

  let ready = false;
  try {
    ready = await prepareStore();
  } catch (error) {
    const e = error as Error;
    const every = Math.round((options.retryMs ?? 5_000) / 1000);
    say(
      `warning: the data store at ${dynamoEndpoint} is not usable (${e.name}: ${e.message}); requests will fail with 503 until it is. ` +
        `Trying again every ${every} s: the tables${seed === 'none' ? '' : ' and the seed'} are created as soon as it answers.`,
    );
    const again = async (): Promise<void> => {
      try {
        await prepareStore();
        say(`the data store at ${dynamoEndpoint} answers again: ready.`);
      } catch {
        if (!stopped) retry = setTimeout(() => void again(), options.retryMs ?? 5_000);
      }
    };
    retry = setTimeout(() => void again(), options.retryMs ?? 5_000);
  }
  starting = false;

  return {
    publicUrl,
    privateUrl: `http://127.0.0.1:${privatePort}`,
    dynamoEndpoint,
    issuer,
    brokerSecret,
    ready,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      pulse?.stop();
      await Promise.all([closeServer(publicServer), closeServer(privateServer)]);
      await engine?.close();
    },
  };
}

interface PrivateRoute {
  name: string;
  resource: string;
  handler: RestApiHandler;
}

/** The private REST API's routes: method and path to the deployed handler module. */
async function loadPrivateRoutes(): Promise<Map<string, PrivateRoute>> {
  const observations = (await import('../../functions/observations/handler.js')).handler as unknown as RestApiHandler;
  return new Map([['GET /api/mcp/endpoint', { name: 'observations', resource: '/api/mcp/endpoint', handler: observations }]]);
}
