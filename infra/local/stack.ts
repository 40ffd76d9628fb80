import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyEvent, Context } from 'aws-lambda';
import { config, resetConfig } from '../../lib/config.js';
import { bearerToken, remoteKeys, verifyBearerToken } from '../../lib/auth/verify.js';
import { dynamo, setDynamo } from '../../lib/store/client.js';
import { ensureTables } from '../../lib/store/tables.js';
import { demoFleet } from './demo.js';
import { startEmbeddedEngine, type EmbeddedEngine } from './engine.js';
import { httpApiEvent, lambdaContext, restApiEvent, stringifyClaims } from './events.js';
import { loadFleet } from './fleet.js';
import { pathOf, sendGatewayFailure, sendHttpError, sendLambdaResult, type LambdaHttpResult } from './http.js';
import { localIssuer, type LocalIssuer } from './issuer.js';

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
  /** Where the issuer key lives (default `.local`). */
  localDir?: string;
  /** Print nothing (tests). */
  quiet?: boolean;
}

export interface LocalStack {
  publicUrl: string;
  privateUrl: string;
  dynamoEndpoint: string;
  issuer: LocalIssuer;
  /** Whether the tables could be created and seeded (false when the engine was down at start). */
  ready: boolean;
  stop(): Promise<void>;
}

/** The identity the private listener attributes to loopback callers: the local broker's IAM role. */
export const LOCAL_BROKER = { user: 'local-broker', userArn: 'arn:aws:iam::000000000000:role/local-broker' };

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
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

/**
 * The API Gateway HTTP API JWT authorizer, emulated: the same checks AWS makes (see
 * lib/auth/verify.ts), then the claims handed to the handler as strings, the way AWS does.
 */
async function authorize(req: IncomingMessage): Promise<Record<string, string>> {
  const cfg = config();
  const token = bearerToken(req.headers.authorization);
  const payload = await verifyBearerToken(token, { issuer: cfg.jwtIssuer, audience: cfg.jwtAudience, keys: remoteKeys(cfg.jwksUrl) });
  return stringifyClaims(payload as Record<string, unknown>);
}

/**
 * Starts the local stack of DESIGN §7: the engine, tables and seed, the issuer, the public listener
 * (JWKS, GET /api/agents) and the private loopback listener (GET /api/mcp/endpoint). A dependency
 * that is down does not stop the listeners: requests then fail with 503 as they would on AWS.
 */
export async function startLocalStack(options: StackOptions = {}): Promise<LocalStack> {
  const say = options.quiet ? () => undefined : (line: string) => process.stdout.write(`${line}\n`);
  let engine: EmbeddedEngine | undefined;
  const externalEndpoint = options.dynamoEndpoint;
  if (!externalEndpoint) {
    engine = await startEmbeddedEngine({ port: options.dynamoPort ?? 8000, dataDir: options.dataDir });
  }
  const dynamoEndpoint = externalEndpoint ?? engine!.endpoint;
  const issuer = await localIssuer(options.localDir);

  // Handlers are the deployed modules; imported here so a test may set the environment first.
  const inventory = (await import('../../functions/inventory/handler.js')).handler as unknown as HttpApiHandler;
  const privateRoutes = await loadPrivateRoutes();

  const publicServer = createServer(
    guarded(async (req, res) => {
      const path = pathOf(req);
      if (req.method === 'GET' && path === '/.well-known/jwks.json') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' });
        res.end(JSON.stringify(issuer.jwks));
        return;
      }
      if (req.method === 'GET' && path === '/api/agents') {
        // An authorizer refusal throws an HttpError: `guarded` answers it (401/503/504) as text/plain.
        const claims = await authorize(req);
        sendLambdaResult(res, await inventory(httpApiEvent(req, 'GET /api/agents', claims), lambdaContext('inventory')));
        return;
      }
      // The private operation, and anything else, is not a route of the public API.
      sendGatewayFailure(res, 404, 'No such route.');
    }),
  );

  const privateServer = createServer(
    guarded(async (req, res) => {
      const route = privateRoutes.get(`${req.method} ${pathOf(req)}`);
      if (!route) {
        sendGatewayFailure(res, 404, 'No such route.');
        return;
      }
      sendLambdaResult(res, await route.handler(restApiEvent(req, route.resource, LOCAL_BROKER), lambdaContext(route.name)));
    }),
  );

  const publicPort = await listen(publicServer, options.port ?? 3000, '0.0.0.0');
  const privatePort = await listen(privateServer, options.privatePort ?? 3001, '127.0.0.1');

  // The handlers read their configuration from the environment, as on AWS.
  process.env.DYNAMODB_ENDPOINT = dynamoEndpoint;
  process.env.PORT = String(publicPort);
  process.env.PRIVATE_PORT = String(privatePort);
  if (!process.env.JWT_ISSUER) process.env.JWT_ISSUER = `http://localhost:${publicPort}`;
  if (!process.env.JWKS_URL) process.env.JWKS_URL = `http://127.0.0.1:${publicPort}/.well-known/jwks.json`;
  resetConfig();
  setDynamo(undefined);
  const cfg = config();

  let ready = false;
  try {
    const { created } = await ensureTables(dynamo(), cfg);
    if (created.length > 0) say(`created tables: ${created.join(', ')}`);
    const seed = options.seed ?? 'demo';
    if (seed !== 'none') {
      const fleet = seed === 'demo' ? demoFleet(new Date()) : JSON.parse(await readFile(seed, 'utf8'));
      const loaded = await loadFleet(dynamo(), cfg, fleet, cfg.sampleRetentionDays);
      say(`seeded ${seed}: ${loaded.tenants} tenants, ${loaded.agents} agents, ${loaded.samples} samples`);
    }
    ready = true;
  } catch (error) {
    const e = error as Error;
    say(`warning: the data store at ${dynamoEndpoint} is not usable (${e.name}: ${e.message}); requests will fail with 503 until it is.`);
  }

  return {
    publicUrl: `http://localhost:${publicPort}`,
    privateUrl: `http://127.0.0.1:${privatePort}`,
    dynamoEndpoint,
    issuer,
    ready,
    async stop() {
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
