import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type KeySetSource, RemoteKeySet } from '../../lib/auth/key-set.js';
import { METRIC } from '../../lib/observability/metrics.js';
import { closedPortEndpoint } from '../helpers/faults.js';

/**
 * The issuer's key set over real HTTP: a small JWKS server whose answer each test chooses (keys,
 * a 5xx, an HTML page, nothing at all), counting how often it is asked. The same server is the
 * issuer whose discovery document says where its keys are, for the discovery cases.
 */

let server: Server;
let base: string;
let url: string;
let fetches = 0;
/** The paths asked, in order. */
let asked: string[] = [];
let answer: (res: ServerResponse, req: IncomingMessage) => void;
let keyA: JWK;
let keyB: JWK;

const jwks =
  (...keys: JWK[]) =>
  (res: ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ keys }));
  };
const header = (kid: string) => ({ alg: 'RS256', kid });

beforeAll(async () => {
  const publicJwk = async (kid: string): Promise<JWK> => ({
    ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).publicKey)),
    kid,
    alg: 'RS256',
    use: 'sig',
  });
  keyA = await publicJwk('key-a');
  keyB = await publicJwk('key-b');
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    fetches += 1;
    asked.push(req.url ?? '');
    answer(res, req);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  url = `${base}/.well-known/jwks.json`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  fetches = 0;
  asked = [];
  answer = jwks(keyA);
});

/** A key set on a clock the test moves. */
function keySet(options: ConstructorParameters<typeof RemoteKeySet>[1] = {}, target: string | KeySetSource = url) {
  const clock = { now: 1_000_000 };
  const source = typeof target === 'string' ? { jwksUrl: target } : target;
  return { keys: new RemoteKeySet(source, options, () => clock.now), clock };
}

describe('Class: RemoteKeySet', () => {
  it('fetches the key set once and serves its keys from the cache', async () => {
    const { keys } = keySet();

    await keys.getKey(header('key-a'));
    await keys.getKey(header('key-a'));

    expect(fetches).toBe(1);
  });

  it('refreshes once for an unknown kid, then refuses further unknown kids without fetching until the cooldown passed', async () => {
    const { keys, clock } = keySet({ cooldownMs: 30_000 });
    await keys.getKey(header('key-a'));

    await expect(keys.getKey(header('made-up-1'))).rejects.toMatchObject({ statusCode: 401 });
    clock.now += 1_000;
    await expect(keys.getKey(header('made-up-2'))).rejects.toMatchObject({
      statusCode: 401,
      message: 'The bearer token was signed by an unknown key.',
    });

    expect(fetches).toBe(1);
  });

  it('follows a redirect of the key set URL, as a browser or fetch would', async () => {
    let asked = 0;
    answer = (res) => {
      asked += 1;
      if (asked === 1) {
        res.writeHead(301, { Location: '/keys/current.json' });
        res.end();
      } else jwks(keyA)(res);
    };
    const { keys } = keySet();

    await expect(keys.getKey(header('key-a'))).resolves.toBeDefined();
    expect(fetches).toBe(2);
  });

  it('finds a rotated key after the cooldown', async () => {
    const { keys, clock } = keySet({ cooldownMs: 30_000 });
    await keys.getKey(header('key-a'));
    answer = jwks(keyA, keyB);

    clock.now += 31_000;
    await expect(keys.getKey(header('key-b'))).resolves.toBeDefined();
    expect(fetches).toBe(2);
  });

  it.each([
    ['a 500', (res: ServerResponse) => res.writeHead(500).end('oops')],
    ['a 503 from a proxy', (res: ServerResponse) => res.writeHead(503, { 'Content-Type': 'text/html' }).end('<html>down</html>')],
    ['an HTML page with 200', (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>login</html>')],
    ['an empty 200', (res: ServerResponse) => res.writeHead(200).end()],
    ['JSON without keys', (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}')],
    ['only an encryption key', jwks({ kty: 'RSA', kid: 'enc', use: 'enc', n: 'x', e: 'AQAB' })],
  ])('answers 503 with Retry-After, and counts it, when the key set answers %s', async (_what, respond) => {
    answer = respond;
    const counted = vi.spyOn(Metrics.prototype, 'addMetric');
    onTestFinished(() => counted.mockRestore());
    const { keys } = keySet();

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '5' },
      message: 'The token keys are unavailable right now; try again later.',
    });
    expect(counted.mock.calls.filter(([name]) => name === METRIC.keySetFailures)).toHaveLength(1);
  });

  it('answers 503 when nothing listens at the key set URL', async () => {
    const { keys } = keySet({}, `${await closedPortEndpoint()}/jwks.json`);

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({ statusCode: 503 });
  });

  it('answers 504 when the key set does not answer in time', async () => {
    answer = () => undefined;
    const { keys } = keySet({ fetchTimeoutMs: 200 });

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({
      statusCode: 504,
      message: 'The token keys could not be fetched in time; try again.',
    });
  });

  it("stops at the caller's deadline", async () => {
    answer = () => undefined;
    const { keys } = keySet({ fetchTimeoutMs: 10_000 });
    const started = Date.now();

    await expect(keys.getKey(header('key-a'), AbortSignal.timeout(150))).rejects.toMatchObject({ statusCode: 504 });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('does not ask a failing issuer again within the back-off', async () => {
    answer = (res) => res.writeHead(500).end();
    const { keys, clock } = keySet({ failureBackoffMs: 5_000 });

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({ statusCode: 503 });
    clock.now += 1_000;
    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({ statusCode: 503 });
    clock.now += 5_000;
    answer = jwks(keyA);
    await expect(keys.getKey(header('key-a'))).resolves.toBeDefined();

    expect(fetches).toBe(2);
  });

  it('keeps verifying with the keys it has while the issuer is down', async () => {
    const { keys, clock } = keySet({ maxAgeMs: 600_000, staleForMs: 86_400_000 });
    await keys.getKey(header('key-a'));
    answer = (res) => res.writeHead(502).end();

    clock.now += 700_000;
    await expect(keys.getKey(header('key-a'))).resolves.toBeDefined();
    await expect(keys.getKey(header('key-b'))).rejects.toMatchObject({ statusCode: 503 });
  });
});

describe('Class: RemoteKeySet, without a JWKS URL: through the issuer discovery document', () => {
  /** An issuer at a path, Keycloak's way: its keys at `/realms/acme/protocol/openid-connect/certs`, never at /.well-known/jwks.json. */
  const REALM = '/realms/acme';
  const issuer = () => `${base}${REALM}`;
  const OPENID = `${REALM}/.well-known/openid-configuration`;
  const OAUTH = `/.well-known/oauth-authorization-server${REALM}`;
  const CERTS = `${REALM}/protocol/openid-connect/certs`;
  const json = (body: unknown) => (res: ServerResponse) =>
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  const notFound = (res: ServerResponse) => res.writeHead(404, { 'Content-Type': 'text/html' }).end('<html>Not Found</html>');
  /** The issuer's answers by path; anything else is a 404. */
  const serve =
    (routes: Record<string, (res: ServerResponse) => void>) =>
    (res: ServerResponse, req: IncomingMessage): void =>
      (routes[req.url ?? ''] ?? notFound)(res);
  const documentOf = (overrides: Record<string, unknown> = {}) => ({
    issuer: issuer(),
    jwks_uri: `${base}${CERTS}`,
    token_endpoint: `${issuer()}/protocol/openid-connect/token`,
    ...overrides,
  });
  const discovering = (options: ConstructorParameters<typeof RemoteKeySet>[1] = {}) => keySet(options, { issuer: issuer() });
  const DISCOVERY_503 = "The issuer's discovery document, which says where its token keys are, is unavailable right now; try again later.";

  it('finds the keys at the jwks_uri its OpenID Connect discovery document names, and reads the document once for the instance', async () => {
    answer = serve({ [OPENID]: json(documentOf()), [CERTS]: jwks(keyA, keyB) });
    const { keys, clock } = discovering({ cooldownMs: 30_000 });

    await expect(keys.getKey(header('key-a'))).resolves.toBeDefined();
    clock.now += 31_000;
    await expect(keys.getKey(header('made-up'))).rejects.toMatchObject({ statusCode: 401 });
    clock.now += 700_000;
    await expect(keys.getKey(header('key-b'))).resolves.toBeDefined();

    // The key set was fetched three times (first use, the unknown kid, past its age); the document once.
    expect(asked).toEqual([OPENID, CERTS, CERTS, CERTS]);
  });

  it("asks RFC 8414's document, the path inserted after the host, when the OpenID Connect one is not there", async () => {
    answer = serve({ [OAUTH]: json(documentOf()), [CERTS]: jwks(keyA) });
    const { keys } = discovering();

    await expect(keys.getKey(header('key-a'))).resolves.toBeDefined();
    expect(asked).toEqual([OPENID, OAUTH, CERTS]);
  });

  it('refuses a document that names another issuer, with the 503 that names discovery, never a 401, and never fetches the keys it names', async () => {
    answer = serve({ [OPENID]: json(documentOf({ issuer: `${base}/realms/other` })), [CERTS]: jwks(keyA) });
    const counted = vi.spyOn(Metrics.prototype, 'addMetric');
    onTestFinished(() => counted.mockRestore());
    const { keys } = discovering();

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '5' },
      message: DISCOVERY_503,
    });
    expect(asked).toEqual([OPENID]);
    const names = counted.mock.calls.map(([name]) => name);
    expect(names.filter((name) => name === METRIC.discoveryFailures)).toHaveLength(1);
    expect(names.filter((name) => name === METRIC.keySetFailures)).toHaveLength(1);
  });

  it.each([
    ['answers 500 (the issuer down: RFC 8414 is not asked instead)', (res: ServerResponse) => res.writeHead(500).end('oops')],
    [
      'answers an HTML page with 200',
      (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>login</html>'),
    ],
    ['answers an empty 200', (res: ServerResponse) => res.writeHead(200).end()],
    ['answers a JSON array', json([documentOf()])],
    ['names no jwks_uri', json(documentOf({ jwks_uri: undefined }))],
    ['names a jwks_uri that is no URL', json(documentOf({ jwks_uri: 'certs' }))],
    [
      'answers more than a megabyte (the right document, padded)',
      (res: ServerResponse) => res.writeHead(200).end(`${JSON.stringify(documentOf())}${' '.repeat(1_100_000)}`),
    ],
    ['drops the connection', (res: ServerResponse) => res.socket?.destroy()],
  ])('answers 503 naming discovery when the OpenID Connect document %s', async (_what, respond) => {
    answer = serve({ [OPENID]: respond, [OAUTH]: json(documentOf()), [CERTS]: jwks(keyA) });
    const { keys } = discovering();

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({ statusCode: 503, message: DISCOVERY_503 });
    expect(asked).not.toContain(CERTS);
  });

  it('answers 503 naming discovery when neither document is there', async () => {
    answer = serve({ [CERTS]: jwks(keyA) });
    const { keys } = discovering();

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({ statusCode: 503, message: DISCOVERY_503 });
    expect(asked).toEqual([OPENID, OAUTH]);
  });

  it('answers 504 naming discovery when the document does not answer in time', async () => {
    answer = serve({ [OPENID]: () => undefined });
    const { keys } = discovering({ fetchTimeoutMs: 200 });

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({
      statusCode: 504,
      message: "The issuer's discovery document, which says where its token keys are, could not be fetched in time; try again.",
    });
  });

  it('asks again for a document that failed once the back-off has passed, and then finds the keys', async () => {
    answer = serve({ [OPENID]: (res) => res.writeHead(502).end(), [CERTS]: jwks(keyA) });
    const { keys, clock } = discovering({ failureBackoffMs: 5_000 });

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({ statusCode: 503 });
    clock.now += 1_000;
    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({ statusCode: 503 });
    answer = serve({ [OPENID]: json(documentOf()), [CERTS]: jwks(keyA) });
    clock.now += 5_000;
    await expect(keys.getKey(header('key-a'))).resolves.toBeDefined();

    expect(asked).toEqual([OPENID, OPENID, CERTS]);
  });

  it('asks no discovery document when a JWKS URL is given (the override)', async () => {
    answer = serve({ [CERTS]: jwks(keyA) });
    const { keys } = keySet({}, `${base}${CERTS}`);

    await expect(keys.getKey(header('key-a'))).resolves.toBeDefined();
    expect(asked).toEqual([CERTS]);
  });
});
