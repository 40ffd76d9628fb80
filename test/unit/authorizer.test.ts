import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantUsageKey } from '../../lib/auth/usage-key.js';
import { type LocalIssuer, localIssuer } from '../../local/issuer.js';
import { useEnvironment } from '../helpers/env.js';
import { eventFixture, testContext } from '../helpers/events.js';

/**
 * The token authorizer function as API Gateway invokes it (the deployed handler module, a REQUEST
 * event per door), with real signed tokens and the issuer's keys over real HTTP from a JWKS
 * stand-in that can be told to fail. Its answers are checked in the shape API Gateway reads: an
 * Allow or Deny policy with its context, the error `Unauthorized` (401), or any other error
 * (AUTHORIZER_FAILURE, 503).
 */

const ISSUER = 'https://issuer.test';
const INVENTORY_AUDIENCE = 'endpoint-read-service';
const MCP_AUDIENCE = 'https://api.test/api/mcp';
const API_ARN = 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod';

let issuer: LocalIssuer;
let jwksServer: Server;
let jwksBase: string;
let answer: (res: ServerResponse) => void;
let handler: (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

beforeAll(async () => {
  issuer = await localIssuer(join(await mkdtemp(join(tmpdir(), 'authorizer-')), 'local'));
  answer = (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(issuer.jwks));
  jwksServer = createServer((_req, res) => answer(res));
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksBase = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
  await loadAuthorizer('keys');
});

/** Loads the authorizer as an instance started with the issuer's key set at `<jwksBase>/<path>/jwks.json` would. */
async function loadAuthorizer(path: string): Promise<void> {
  useEnvironment({
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: INVENTORY_AUDIENCE,
    MCP_AUDIENCE,
    JWKS_URL: `${jwksBase}/${path}/jwks.json`,
    TENANT_CLAIM: 'tenant_id',
  });
  ({ handler } = (await import('../../functions/authorizer/handler.js')) as unknown as { handler: typeof handler });
}
afterAll(async () => {
  jwksServer.closeAllConnections();
  await new Promise((resolve) => jwksServer.close(resolve));
});

const sign = (audience: string, extra: { tenant?: string | undefined; expiresInSeconds?: number } = {}): Promise<string> =>
  issuer.sign({
    issuer: ISSUER,
    audience,
    tenant: 'tenant' in extra ? extra.tenant : 'acme',
    subject: 'user-1',
    ...(extra.expiresInSeconds !== undefined ? { expiresInSeconds: extra.expiresInSeconds } : {}),
    extra: { scope: 'openid endpoints:read' },
  });

/** The REQUEST authorizer event for a method; `authorization` as the client sent it (several values: the header repeated). */
function event(method: string, resource: string, authorization: string | string[] | undefined): APIGatewayRequestAuthorizerEvent {
  return eventFixture<APIGatewayRequestAuthorizerEvent>('rest-api', 'authorize-request', (e) => {
    e.methodArn = `${API_ARN}/${method}${resource}`;
    e.resource = resource;
    e.path = resource;
    e.httpMethod = method;
    delete e.headers!.Authorization;
    delete e.multiValueHeaders!.Authorization;
    if (authorization !== undefined) {
      const values = [authorization].flat();
      e.headers!.Authorization = values.at(-1)!;
      e.multiValueHeaders!.Authorization = values;
    }
  });
}

const authorize = (e: APIGatewayRequestAuthorizerEvent) => handler(e, testContext('authorizer'));

describe('Handler: authorizer (the public REST API token authorizer)', () => {
  describe('allows', () => {
    it("an inventory token at GET /api/agents, for that one method only, handing over tenant, sub and exp, and naming the tenant's usage key", async () => {
      const token = await sign(INVENTORY_AUDIENCE);
      const exp = decodeJwt(token).exp!;

      const result = await authorize(event('GET', '/api/agents', `Bearer ${token}`));

      expect(result).toEqual({
        principalId: 'user-1',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: [`${API_ARN}/GET/api/agents`] }],
        },
        context: { tenant: 'acme', sub: 'user-1', exp, grantedScopes: 'openid endpoints:read' },
        usageIdentifierKey: tenantUsageKey('prod', 'acme'),
      });
    });

    it("names each tenant's own API key of the stage, so API Gateway throttles each tenant on its own (usage plan)", async () => {
      const acme = await authorize(event('GET', '/api/agents', `Bearer ${await sign(INVENTORY_AUDIENCE, { tenant: 'acme' })}`));
      const globex = await authorize(event('POST', '/api/mcp', `Bearer ${await sign(MCP_AUDIENCE, { tenant: 'globex' })}`));
      const acmeAtMcp = await authorize(event('POST', '/api/mcp', `Bearer ${await sign(MCP_AUDIENCE, { tenant: 'acme' })}`));

      expect(acme.usageIdentifierKey).toMatch(/^[0-9a-f]{64}$/);
      expect(acmeAtMcp.usageIdentifierKey).toBe(acme.usageIdentifierKey);
      expect(globex.usageIdentifierKey).toBe(tenantUsageKey('prod', 'globex'));
      expect(globex.usageIdentifierKey).not.toBe(acme.usageIdentifierKey);
      // Another stage's key differs: a key belongs to one stage's plan.
      expect(tenantUsageKey('dev', 'acme')).not.toBe(acme.usageIdentifierKey);
    });

    it("an MCP token at POST /api/mcp, for the MCP door's methods and never another door's (so a cached answer cannot open one)", async () => {
      const result = await authorize(event('POST', '/api/mcp', `Bearer ${await sign(MCP_AUDIENCE)}`));

      expect(result.policyDocument.Statement).toEqual([
        {
          Action: 'execute-api:Invoke',
          Effect: 'Allow',
          Resource: [`${API_ARN}/POST/api/mcp`, `${API_ARN}/GET/api/mcp`, `${API_ARN}/DELETE/api/mcp`],
        },
      ]);
      expect(JSON.stringify(result)).not.toContain('/api/agents');
    });

    it('a verified token without a tenant, handing over an empty tenant: the handler refuses it with 403, never a default', async () => {
      const result = await authorize(event('GET', '/api/agents', `Bearer ${await sign(INVENTORY_AUDIENCE, { tenant: undefined })}`));

      expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
      expect(result.context).toMatchObject({ tenant: '', sub: 'user-1' });
      // The key the template puts in the plan for tokens without a tenant, so the handler's 403 is reached.
      expect(result.usageIdentifierKey).toBe(tenantUsageKey('prod', ''));
    });

    it('hands over only strings, numbers and booleans, as API Gateway requires of a context', async () => {
      const result = await authorize(event('GET', '/api/agents', `Bearer ${await sign(INVENTORY_AUDIENCE)}`));

      for (const value of Object.values(result.context ?? {})) expect(['string', 'number', 'boolean']).toContain(typeof value);
    });
  });

  describe('refuses at the inventory door with a Deny (ACCESS_DENIED) whose context carries the sentence', () => {
    it.each<[string, () => Promise<string | string[] | undefined>, string]>([
      ['no token', async () => undefined, 'A bearer token is required.'],
      [
        'a token made for the MCP door',
        async () => `Bearer ${await sign(MCP_AUDIENCE)}`,
        'The bearer token is not for this service (audience).',
      ],
      [
        'an expired token',
        async () => `Bearer ${await sign(INVENTORY_AUDIENCE, { expiresInSeconds: -60 })}`,
        'The bearer token has expired.',
      ],
      [
        'two Authorization headers',
        async () => {
          const token = await sign(INVENTORY_AUDIENCE);
          return [`Bearer ${token}`, `Bearer ${token}`];
        },
        'The Authorization header was sent more than once.',
      ],
      ['something that is no bearer token', async () => 'Basic dXNlcjpwYXNz', 'The Authorization header is not a bearer token.'],
    ])('%s', async (_what, authorizationOf, sentence) => {
      const authorization = await authorizationOf();

      const result = await authorize(event('GET', '/api/agents', authorization));

      expect(result).toEqual({
        principalId: 'anonymous',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: [`${API_ARN}/GET/api/agents`] }],
        },
        context: { refusal: sentence },
      });
      // Nothing of what was sent comes back: no token's payload, no credentials.
      const secretOf = (value: string): string => {
        const credentials = value.split(' ')[1]!;
        return credentials.split('.')[1] ?? credentials;
      };
      for (const sent of [authorization ?? []].flat()) expect(JSON.stringify(result)).not.toContain(secretOf(sent));
    });
  });

  describe("refuses at the MCP door with the error 'Unauthorized' (UNAUTHORIZED)", () => {
    it.each([
      ['a token made for the inventory', () => sign(INVENTORY_AUDIENCE)],
      ['an expired MCP token', () => sign(MCP_AUDIENCE, { expiresInSeconds: -60 })],
    ])('%s', async (_what, token) => {
      await expect(authorize(event('POST', '/api/mcp', `Bearer ${await token()}`))).rejects.toThrow(/^Unauthorized$/);
    });
  });

  describe('fails, never refuses, when it cannot judge (AUTHORIZER_FAILURE, a 503)', () => {
    it('when the issuer key set answers 503 (a JWKS stand-in)', async () => {
      answer = (res) => res.writeHead(503).end('down');
      await loadAuthorizer('down');
      try {
        const failure = authorize(event('GET', '/api/agents', `Bearer ${await sign(INVENTORY_AUDIENCE)}`));

        await expect(failure).rejects.toThrow();
        await expect(failure).rejects.not.toThrow(/^Unauthorized$/);
        await expect(authorize(event('POST', '/api/mcp', `Bearer ${await sign(MCP_AUDIENCE)}`))).rejects.not.toThrow(/^Unauthorized$/);
      } finally {
        answer = (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(issuer.jwks));
        await loadAuthorizer('keys');
      }
    });

    it('when it is attached to a resource that is no public door', async () => {
      await expect(authorize(event('GET', '/api/mcp/endpoint', `Bearer ${await sign(INVENTORY_AUDIENCE)}`))).rejects.toThrow(
        /no public door/,
      );
    });
  });

  it('keeps allowing tokens through an issuer outage with the keys it fetched before', async () => {
    await loadAuthorizer('outage');
    try {
      await authorize(event('GET', '/api/agents', `Bearer ${await sign(INVENTORY_AUDIENCE)}`));
      answer = (res) => res.socket?.destroy();

      const result = await authorize(event('GET', '/api/agents', `Bearer ${await sign(INVENTORY_AUDIENCE)}`));

      expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    } finally {
      answer = (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(issuer.jwks));
      await loadAuthorizer('keys');
    }
  });
});
