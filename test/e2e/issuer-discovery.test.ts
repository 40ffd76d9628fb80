import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { get } from '../helpers/stack.js';

/**
 * The deployed bundles find an issuer's keys as a real provider publishes them: through its
 * discovery document's `jwks_uri`, never at a guessed `/.well-known/jwks.json`. The issuer here is
 * shaped as Keycloak serves a realm (issuer `…/realms/acme`, keys at
 * `…/realms/acme/protocol/openid-connect/certs`), a real HTTP server publishing the stack's own
 * signing key; the functions are pointed at it as a deployment is, by JWT_ISSUER alone. Its
 * faults (down, hanging, garbage, another issuer's document) are what a real provider gives only
 * by accident; the tests that provoke them say so.
 */

const FLEET = {
  tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h-1', os: 'linux', arch: 'x86_64', version: '1' }] }],
};
const REALM = '/realms/acme';
const DOOR_503 = /^The bearer token could not be checked right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/;

let stack: SharedStack;
let realm: Server;
let base: string;
/** The paths the realm was asked, in order. */
let asked: string[] = [];
let routes: Record<string, (res: ServerResponse) => void> = {};

beforeAll(async () => {
  stack = await sharedStack(FLEET);
  realm = createServer((req: IncomingMessage, res: ServerResponse) => {
    asked.push(req.url ?? '');
    (routes[req.url ?? ''] ?? ((r: ServerResponse) => r.writeHead(404).end('Not Found')))(res);
  });
  await new Promise<void>((resolve) => realm.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(realm.address() as AddressInfo).port}`;
});
afterEach(() => {
  // Each test points the functions at an issuer of its own; the next starts from the stack's.
  stack.updateEnvironment({ JWT_ISSUER: undefined, JWKS_URL: undefined });
  asked = [];
  routes = {};
});
afterAll(async () => {
  realm?.closeAllConnections();
  await new Promise((resolve) => realm?.close(resolve));
  await stack?.release();
});

let issuers = 0;
/** A realm issuer of its own for one test (so no instance or key set of an earlier one is reused), and the functions pointed at it. */
function useRealm(document: (issuer: string) => unknown, env: Record<string, string> = {}): string {
  issuers += 1;
  const realmPath = `${REALM}-${issuers}`;
  const issuer = `${base}${realmPath}`;
  const json = (body: unknown) => (res: ServerResponse) =>
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  routes = {
    [`${realmPath}/.well-known/openid-configuration`]: json(document(issuer)),
    [`${realmPath}/protocol/openid-connect/certs`]: json(stack.issuer.jwks),
  };
  stack.updateEnvironment({ JWT_ISSUER: issuer, ...env });
  return realmPath;
}
const keycloakDocument = (issuer: string) => ({
  issuer,
  jwks_uri: `${issuer}/protocol/openid-connect/certs`,
  token_endpoint: `${issuer}/protocol/openid-connect/token`,
});

const inventory = async () => get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${await stack.token()}` });
const observations = async () =>
  get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=a-1`, {
    Authorization: `Bearer ${await stack.brokerToken()}`,
    'X-Service-Reason': 'discovery check',
  });
const mcp = async () => {
  const response = await fetch(`${stack.publicUrl}/api/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${await stack.mcpToken()}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
};

describe('E2E: keys found through the issuer discovery document', () => {
  it('runs the functions without JWKS_URL, on the local issuer whose keys are not at /.well-known/jwks.json', async () => {
    const guessed = await fetch(`${stack.publicUrl}/.well-known/jwks.json`);
    await guessed.body?.cancel();

    expect(stack.config.jwksUrl).toBeUndefined();
    expect(guessed.status).toBe(404);
    expect((await inventory()).status).toBe(200);
  });

  it('accepts the tokens of a Keycloak-shaped issuer at both doors and the private operation, asking its document once and never /.well-known/jwks.json', async () => {
    const realmPath = useRealm(keycloakDocument);

    const documentAsks = (): number => asked.filter((path) => path === `${realmPath}/.well-known/openid-configuration`).length;

    const answers = [await inventory(), await mcp(), await observations(), await inventory()];
    const asksAfterFirst = documentAsks();
    // Every door and the private operation again, on the instances that read the document already.
    const again = [await inventory(), await mcp(), await observations()];

    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(again.map((a) => a.status)).toEqual([200, 200, 200]);
    // Each function's instance reads the document once, then the key set it names; none guesses a path.
    expect(asksAfterFirst).toBeGreaterThanOrEqual(1);
    expect(asksAfterFirst).toBeLessThanOrEqual(3);
    expect(documentAsks()).toBe(asksAfterFirst);
    expect(asked).toContain(`${realmPath}/protocol/openid-connect/certs`);
    expect(asked.filter((path) => path.endsWith('/jwks.json'))).toEqual([]);
  });

  it("finds the keys through RFC 8414's document (the realm path after the well-known one) when the issuer serves no OpenID Connect document", async () => {
    const realmPath = useRealm(keycloakDocument);
    const document = routes[`${realmPath}/.well-known/openid-configuration`]!;
    delete routes[`${realmPath}/.well-known/openid-configuration`];
    routes[`/.well-known/oauth-authorization-server${realmPath}`] = document;

    expect((await inventory()).status).toBe(200);
    expect(asked.slice(0, 3)).toEqual([
      `${realmPath}/.well-known/openid-configuration`,
      `/.well-known/oauth-authorization-server${realmPath}`,
      `${realmPath}/protocol/openid-connect/certs`,
    ]);
  });

  it('uses JWKS_URL, the override, without asking any discovery document', async () => {
    const realmPath = useRealm(() => ({ issuer: 'http://elsewhere.example', jwks_uri: 'http://elsewhere.example/keys' }), {
      JWKS_URL: `${base}${REALM}-keys`,
    });
    routes[`${REALM}-keys`] = (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(stack.issuer.jwks));

    expect((await inventory()).status).toBe(200);
    expect((await observations()).status).toBe(200);
    expect(asked.filter((path) => path.startsWith(realmPath))).toEqual([]);
    // The keys were fetched, and from the override.
    expect(asked).toContain(`${REALM}-keys`);
  });
});

describe('E2E: a discovery document that cannot be used (an issuer stand-in: faults a real one gives only by accident)', () => {
  it.each([
    ['names another issuer', (issuer: string) => ({ ...keycloakDocument(issuer), issuer: `${issuer}-other` }), undefined],
    ['answers 500', undefined, (res: ServerResponse) => res.writeHead(500).end('Internal Server Error')],
    [
      'answers an HTML page',
      undefined,
      (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>Sign in</html>'),
    ],
    ['answers a document without jwks_uri', (issuer: string) => ({ issuer }), undefined],
  ])(
    '%s: 503 with Retry-After at every door, naming discovery at the private operation, never a 401 and never the keys it names',
    async (_what, document, respond) => {
      const realmPath = useRealm(document ?? keycloakDocument);
      if (respond) routes[`${realmPath}/.well-known/openid-configuration`] = respond;

      for (const res of [await inventory(), await mcp()]) {
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toMatch(/^[0-9]+$/);
        expect(res.headers.get('www-authenticate')).toBeNull();
        expect(res.body).toMatch(DOOR_503);
      }
      const res = await observations();
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^[0-9]+$/);
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(res.body).toMatch(
        /^The issuer's discovery document, which says where its token keys are, is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/,
      );
      expect(asked).not.toContain(`${realmPath}/protocol/openid-connect/certs`);
    },
  );

  it('that never answers is a 504 naming discovery at the private operation (503 at the doors), within the deadline', async () => {
    const realmPath = useRealm(keycloakDocument);
    routes[`${realmPath}/.well-known/openid-configuration`] = () => undefined;

    const started = Date.now();
    const res = await observations();

    expect(res.status).toBe(504);
    expect(res.body).toMatch(
      /^The issuer's discovery document, which says where its token keys are, could not be fetched in time; try again\. \(request id: [0-9a-f-]{36}\)\n$/,
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    const door = await inventory();
    expect(door.status).toBe(503);
    expect(door.body).toMatch(DOOR_503);
  });
});
