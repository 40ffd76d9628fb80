import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { RemoteKeySet } from '../../lib/auth/key-set.js';
import { METRIC } from '../../lib/observability/metrics.js';
import { closedPortEndpoint } from '../helpers/faults.js';

/**
 * The issuer's key set over real HTTP: a small JWKS server whose answer each test chooses (keys,
 * a 5xx, an HTML page, nothing at all), counting how often it is asked.
 */

let server: Server;
let url: string;
let fetches = 0;
let answer: (res: ServerResponse) => void;
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
  server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    fetches += 1;
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  fetches = 0;
  answer = jwks(keyA);
});

/** A key set on a clock the test moves. */
function keySet(options: ConstructorParameters<typeof RemoteKeySet>[1] = {}, target = url) {
  const clock = { now: 1_000_000 };
  return { keys: new RemoteKeySet(target, options, () => clock.now), clock };
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
    const { keys } = keySet();

    await expect(keys.getKey(header('key-a'))).rejects.toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '5' },
      message: 'The token keys are unavailable right now; try again later.',
    });
    expect(counted.mock.calls.filter(([name]) => name === METRIC.keySetFailures)).toHaveLength(1);
    counted.mockRestore();
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
