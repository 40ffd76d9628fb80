import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditItemsOf } from '../../local/audit-items.js';
import { loadFleet } from '../../local/fleet.js';
import { type LocalIssuer, localIssuer } from '../../local/issuer.js';
import { brokerTokenFor } from '../../local/token-exchange.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine } from '../helpers/env.js';
import { eventFixture } from '../helpers/events.js';
import { holdingProxy, silentEndpoint } from '../helpers/faults.js';
import { localDirWithKey } from '../helpers/local-dir.js';
import { invokeStreamed } from '../helpers/streaming.js';

/**
 * One deadline per invocation: with a short function timeout and a dependency that never answers
 * (an engine, the issuer's key set, the audit table), each handler still answers its own text/plain
 * 504 or 503 before Lambda would cut it, where API Gateway would otherwise answer a bare 502.
 * The handlers are the deployed modules, called as Lambda calls them.
 */

const TIMEOUT_MS = 1_500;

/** A Lambda context whose invocation ends `timeoutMs` from now. */
function shortContext(timeoutMs = TIMEOUT_MS): Context {
  const end = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:test',
    memoryLimitInMB: '512',
    awsRequestId: crypto.randomUUID(),
    logGroupName: '/aws/lambda/test',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => Math.max(0, end - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

interface Answer {
  statusCode: number;
  headers?: Record<string, unknown>;
  body?: string;
}

let engine: TestEngine;
let issuer: LocalIssuer;
let jwks: Server;
let jwksUrl: string;
let inventory: (event: APIGatewayProxyEvent, context: Context) => Promise<Answer>;
let observations: (event: APIGatewayProxyEvent, context: Context) => Promise<Answer>;
const ISSUER = 'https://issuer.deadline.test';

beforeAll(async () => {
  engine = await startTestEngine();
  issuer = await localIssuer(await localDirWithKey('deadline-'));
  jwks = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(issuer.jwks));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  await loadHandlers({});
  await loadFleet(
    engine.db,
    engine.tables,
    { tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h-1', os: 'linux', arch: 'x86_64', version: '1' }] }] },
    8,
  );
});

/** Loads both handlers as instances started with the test engine, the test issuer and `env` would. */
async function loadHandlers(env: Record<string, string>): Promise<void> {
  useEngine(engine, { JWT_ISSUER: ISSUER, JWKS_URL: jwksUrl, BROKER_ALLOW_LIST: 'local-broker', ...env });
  // The streaming handler writes to a response stream of the test's (test/helpers/streaming.ts).
  const streaming = (await import('../../functions/inventory/handler.js')).handler;
  inventory = (event, context) => invokeStreamed(streaming, event, context);
  observations = (await import('../../functions/observations/handler.js')).handler as never;
}
afterAll(async () => {
  jwks?.closeAllConnections();
  await new Promise((resolve) => jwks?.close(resolve));
  await engine?.close();
});

const brokerToken = () =>
  brokerTokenFor(
    issuer,
    {
      issuer: ISSUER,
      tenantClaim: 'tenant_id',
      scopeClaim: 'endpoint_groups',
      clientId: 'local-broker',
      audience: 'endpoint-observations',
    },
    { subject: 'alice', tenant: 'acme' },
  );

async function observationsEvent(): Promise<APIGatewayProxyEvent> {
  const token = await brokerToken();
  return eventFixture<APIGatewayProxyEvent>('rest-api', 'get-endpoint-observations', (e) => {
    e.headers.Authorization = `Bearer ${token}`;
    e.multiValueHeaders.Authorization = [`Bearer ${token}`];
  });
}

/** Runs `fn` with the handlers pointed elsewhere (another engine, another key set), then loads them back. */
async function pointedAt<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  await loadHandlers(env);
  try {
    return await fn();
  } finally {
    await loadHandlers({ DYNAMODB_ENDPOINT: engine.endpoint });
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ answer: T; ms: number }> {
  const started = Date.now();
  const answer = await fn();
  return { answer, ms: Date.now() - started };
}

const expectTextFailure = (answer: Answer, status: number, sentence: RegExp): void => {
  expect(answer.statusCode).toBe(status);
  expect(answer.headers?.['Content-Type']).toBe('text/plain; charset=utf-8');
  expect(answer.body).toMatch(sentence);
};

describe('Deadlines: a short function timeout and a dependency that never answers', () => {
  it('inventory: a hanging engine is the text/plain 504, within the function timeout', async () => {
    const silent = await silentEndpoint();
    try {
      const { answer, ms } = await pointedAt({ DYNAMODB_ENDPOINT: silent.endpoint, DYNAMODB_TIMEOUT_MS: '60000' }, () =>
        timed(() => inventory(eventFixture('rest-api', 'list-agents'), shortContext())),
      );

      expectTextFailure(answer, 504, /^The inventory store timed out; try again\. \(request id: /);
      expect(ms).toBeLessThan(TIMEOUT_MS);
    } finally {
      await silent.close();
    }
  });

  it('observations: a hanging engine is the text/plain 504, within the function timeout', async () => {
    const silent = await silentEndpoint();
    const event = await observationsEvent();
    try {
      const { answer, ms } = await pointedAt({ DYNAMODB_ENDPOINT: silent.endpoint, DYNAMODB_TIMEOUT_MS: '60000' }, () =>
        timed(() => observations(event, shortContext())),
      );

      expectTextFailure(answer, 504, /^The observations store timed out; try again\. \(request id: /);
      expect(ms).toBeLessThan(TIMEOUT_MS);
    } finally {
      await silent.close();
    }
  });

  it('observations: a hanging issuer key set is the text/plain 504, within the function timeout', async () => {
    const silent = await silentEndpoint();
    const event = await observationsEvent();
    try {
      const { answer, ms } = await pointedAt({ JWKS_URL: `${silent.endpoint}/never/jwks.json` }, () =>
        timed(() => observations(event, shortContext())),
      );

      expectTextFailure(answer, 504, /^The token keys could not be fetched in time; try again\. \(request id: /);
      expect(ms).toBeLessThan(TIMEOUT_MS);
    } finally {
      await silent.close();
    }
  });

  it('observations: a hanging audit table fails the read (no data, no audit id) within the function timeout', async () => {
    const proxy = await holdingProxy(engine.endpoint, (operation) => operation === 'PutItem');
    const event = await observationsEvent();
    try {
      const { answer, ms } = await pointedAt({ DYNAMODB_ENDPOINT: proxy.endpoint }, () =>
        timed(() => observations(event, shortContext(2_500))),
      );

      expectTextFailure(answer, 503, /^The read could not be audited, so no data was returned; try again later\. \(request id: /);
      expect(answer.headers?.['X-Audit-Id']).toBeUndefined();
      expect(answer.body).not.toContain('h-1');
      expect(proxy.held()).toBe(1);
      expect(ms).toBeLessThan(2_500);
    } finally {
      await proxy.close();
    }
  });

  it('observations: with time to spare the same read succeeds and is audited (the control)', async () => {
    const answer = await observations(await observationsEvent(), shortContext(10_000));

    expect(answer.statusCode).toBe(200);
    expect((await auditItemsOf(engine.db, engine.tables.auditTable, 'acme')).some((i) => i.outcome === 'allowed')).toBe(true);
  });
});
