import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { get } from '../helpers/stack.js';

/**
 * Tokens as the doors judge them over HTTP: the token authorizer in front of the public doors
 * (GET /api/agents, POST /api/mcp) and the observations handler's own check (the private listener).
 */

const FLEET = {
  tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h-1', os: 'linux', arch: 'x86_64', version: '1' }] }],
};

let stack: SharedStack;
beforeAll(async () => {
  stack = await sharedStack(FLEET);
});
afterAll(async () => {
  await stack?.release();
});

const inventory = (token: string) => get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${token}` });
const observations = (token: string) =>
  get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=a-1`, { Authorization: `Bearer ${token}`, 'X-Service-Reason': 'token check' });

describe('E2E: a token issued in the future', () => {
  it.each([
    ['an hour', 3_600],
    ['a day', 86_400],
  ])('is refused at both doors when it claims to be issued %s ahead', async (_when, seconds) => {
    const iat = Math.floor(Date.now() / 1000) + seconds;
    const inventoryToken = await stack.token({ issuedAt: iat, expiresInSeconds: seconds + 3_600 });
    const brokerToken = await stack.brokerToken({ expiresInSeconds: seconds + 3_600 });
    // The claims of brokerToken(), issued in the future.
    const futureBroker = await stack.token({
      audience: 'endpoint-observations',
      issuedAt: iat,
      extra: { act: { sub: 'local-broker' } },
      expiresInSeconds: seconds + 3_600,
    });

    for (const res of [await inventory(inventoryToken), await observations(futureBroker)]) {
      expect(res.status).toBe(401);
      expect(res.body).toMatch(/^The bearer token was issued in the future\./);
    }
    expect((await observations(brokerToken)).status).toBe(200);
  });

  it('accepts a token issued a little ahead, within the documented skew of 60 s', async () => {
    const iat = Math.floor(Date.now() / 1000) + 30;

    expect((await inventory(await stack.token({ issuedAt: iat }))).status).toBe(200);
  });
});

describe('E2E: two Authorization headers', () => {
  it('are a 401 at the public door, as at the private one', async () => {
    const token = await stack.token();
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${stack.publicUrl}/api/agents`, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.setHeader('Authorization', [`Bearer ${token}`, 'Bearer another']);
      req.on('error', reject);
      req.end();
    });

    expect(status).toBe(401);
  });
});

describe('E2E: the issuer key set is down (an issuer stand-in: faults a real one gives only by accident)', () => {
  let issuer: Server;
  let answer: (res: ServerResponse) => void = () => undefined;
  let fakeJwks: string;
  let previous: Record<string, string | undefined> | undefined;

  beforeAll(async () => {
    issuer = createServer((_req, res) => answer(res));
    await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    if (previous) stack.updateEnvironment(previous);
    issuer.closeAllConnections();
    await new Promise((resolve) => issuer.close(resolve));
  });

  /** Each case gets a URL of its own, so no key set is cached from an earlier one. */
  const useFakeJwks = (name: string): void => {
    fakeJwks = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}/${name}/jwks.json`;
    // The functions' configuration changes as a deployment would change it: new instances.
    const replaced = stack.updateEnvironment({ JWKS_URL: fakeJwks });
    previous ??= replaced;
  };

  const mcp = (token: string) =>
    fetch(`${stack.publicUrl}/api/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.text() }));

  it.each([
    ['answers 500', (res: ServerResponse) => res.writeHead(500).end('Internal Server Error')],
    [
      'answers an HTML page',
      (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html><body>Sign in</body></html>'),
    ],
    ['answers an empty body', (res: ServerResponse) => res.writeHead(200).end()],
    ['drops every connection', (res: ServerResponse) => res.socket?.destroy()],
  ])('gives 503 with Retry-After at every door, never a 401, when it %s', async (name, respond) => {
    answer = respond;
    useFakeJwks(name.replace(/\W+/g, '-'));

    // The public doors: the token authorizer fails, and API Gateway answers AUTHORIZER_FAILURE.
    for (const res of [await inventory(await stack.token()), await mcp(await stack.mcpToken())]) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^[0-9]+$/);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(res.body).toMatch(/^The bearer token could not be checked right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
    }
    // The private operation checks its token itself.
    const res = await observations(await stack.brokerToken());
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    expect(res.body).toMatch(/^The token keys are unavailable right now; try again later\./);
  });
});
