import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentInventory } from '../../lib/contract/schemas.js';
import type { Fleet } from '../../local/fleet.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { get } from '../helpers/stack.js';

const now = Date.now();
const ago = (seconds: number): string => new Date(now - seconds * 1000).toISOString();

const FLEET: Fleet = {
  tenants: [
    {
      tenant_id: 'acme',
      agents: [
        {
          agent_id: 'a-online',
          hostname: 'web-1',
          os: 'linux',
          arch: 'x86_64',
          version: '2.4.1',
          client_id: 'c-1',
          last_heartbeat: ago(10),
          connection: { state: 'connected', connected_at: ago(3600) },
        },
        {
          agent_id: 'a-stale',
          hostname: 'web-2',
          os: 'linux',
          arch: 'x86_64',
          version: '2.4.1',
          last_heartbeat: ago(600),
          connection: { state: 'connected' },
        },
        {
          agent_id: 'a-off',
          hostname: 'web-3',
          os: 'windows',
          arch: 'x86_64',
          version: '2.4.1',
          connection: { state: 'disconnected', disconnected_at: ago(60) },
        },
        { agent_id: 'a-never', hostname: 'web-4', os: 'macos', arch: 'arm64', version: '2.4.1', enrolled_at: ago(86400) },
        {
          agent_id: 'a-hello',
          hostname: 'laptop',
          os: 'windows',
          arch: 'arm64',
          version: '2.5.0',
          durable: false,
          last_heartbeat: ago(5),
          connection: { state: 'connected' },
        },
      ],
    },
    { tenant_id: 'globex', agents: [{ agent_id: 'a-online', hostname: 'globex-1', os: 'linux', arch: 'x86_64', version: '1.0.0' }] },
  ],
};

describe('E2E: GET /api/agents over HTTP through the token authorizer', () => {
  let stack: SharedStack;
  let url: string;

  beforeAll(async () => {
    stack = await sharedStack(FLEET);
    url = `${stack.publicUrl}/api/agents`;
  });
  afterAll(async () => {
    await stack?.release();
  });

  const expectUnauthorized = (res: { status: number; headers: Headers; body: string }, sentence: string): void => {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    // The gateway's 401 for this door (ACCESS_DENIED): static headers, the authorizer's own sentence.
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${stack.publicUrl}/.well-known/oauth-protected-resource/api/agents", scope="endpoints:read"`,
    );
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatch(new RegExp(`^${sentence.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(request id: [0-9a-f-]{36}\\)\n$`));
  };

  it("lists exactly the caller's tenant with every connection state, ordered by agent_id", async () => {
    const res = await get(url, { Authorization: `Bearer ${await stack.token({ tenant: 'acme' })}` });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const agents = AgentInventory.parse(JSON.parse(res.body));
    expect(agents.map((a) => [a.agent_id, a.connection_state, a.is_online])).toEqual([
      ['a-hello', 'connected', true],
      ['a-never', 'never_connected', false],
      ['a-off', 'disconnected', false],
      ['a-online', 'connected', true],
      ['a-stale', 'stale', false],
    ]);
    expect(agents.find((a) => a.agent_id === 'a-online')).toEqual({
      agent_id: 'a-online',
      hostname: 'web-1',
      os: 'linux',
      arch: 'x86_64',
      version: '2.4.1',
      is_online: true,
      connection_state: 'connected',
      client_id: 'c-1',
      connected_at: ago(3600),
      last_heartbeat: ago(10),
    });
  });

  it("never shows another tenant's endpoint with the same agent_id", async () => {
    const res = await get(url, { Authorization: `Bearer ${await stack.token({ tenant: 'globex' })}` });

    expect(JSON.parse(res.body)).toEqual([
      {
        agent_id: 'a-online',
        hostname: 'globex-1',
        os: 'linux',
        arch: 'x86_64',
        version: '1.0.0',
        is_online: false,
        connection_state: 'never_connected',
      },
    ]);
  });

  it('accepts a token whose audience is in an aud array, and one with the right client_id instead of aud', async () => {
    const inArray = await get(url, { Authorization: `Bearer ${await stack.token({ audience: ['other', stack.config.jwtAudience] })}` });
    const clientIdToken = await stack.token({ audience: undefined, extra: { client_id: stack.config.jwtAudience } });
    const otherClient = await stack.token({ audience: undefined, extra: { client_id: 'another-app' } });

    expect(decodeJwt(clientIdToken)).not.toHaveProperty('aud');
    expect(inArray.status).toBe(200);
    expect((await get(url, { Authorization: `Bearer ${clientIdToken}` })).status).toBe(200);
    expectUnauthorized(await get(url, { Authorization: `Bearer ${otherClient}` }), 'The bearer token is not for this service (audience).');
  });

  it('returns 401 text/plain without a token', async () => {
    expectUnauthorized(await get(url), 'A bearer token is required.');
  });

  it('returns 401 for a malformed token', async () => {
    expectUnauthorized(await get(url, { Authorization: 'Bearer not.a.jwt' }), 'The bearer token is malformed.');
    expectUnauthorized(await get(url, { Authorization: 'Basic dXNlcjpwYXNz' }), 'The Authorization header is not a bearer token.');
  });

  it('returns 401 for an expired token', async () => {
    expectUnauthorized(
      await get(url, { Authorization: `Bearer ${await stack.token({ expiresInSeconds: -60 })}` }),
      'The bearer token has expired.',
    );
  });

  it('returns 401 for a token for another audience', async () => {
    expectUnauthorized(
      await get(url, { Authorization: `Bearer ${await stack.token({ audience: 'some-other-api' })}` }),
      'The bearer token is not for this service (audience).',
    );
  });

  it('returns 401 for a token whose signature was tampered with', async () => {
    const token = await stack.token();
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), tenant_id: 'globex' }),
    ).toString('base64url');

    expectUnauthorized(
      await get(url, { Authorization: `Bearer ${header}.${forged}.${signature}` }),
      'The bearer token signature is invalid.',
    );
  });

  it('returns 401 for a token signed by a key the issuer does not publish, even with its kid', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const cfg = stack.config;
    const token = await new SignJWT({ tenant_id: 'acme' })
      .setProtectedHeader({ alg: 'RS256', kid: stack.issuer.kid })
      .setIssuer(cfg.jwtIssuer)
      .setAudience(cfg.jwtAudience)
      .setSubject('mallory')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);

    expectUnauthorized(await get(url, { Authorization: `Bearer ${token}` }), 'The bearer token signature is invalid.');
  });

  it('returns 401 for an unsigned token (alg: none)', async () => {
    const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const cfg = stack.config;
    const token = `${enc({ alg: 'none', kid: stack.issuer.kid })}.${enc({ iss: cfg.jwtIssuer, aud: cfg.jwtAudience, tenant_id: 'acme', exp: Math.floor(now / 1000) + 600 })}.`;

    const res = await get(url, { Authorization: `Bearer ${token}` });

    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });

  it('returns 401 for a token from another issuer or not yet valid', async () => {
    const otherIssuer = await stack.issuer.sign({ issuer: 'https://evil.example.com', audience: stack.config.jwtAudience, tenant: 'acme' });
    const notYet = await stack.token({ extra: { nbf: Math.floor(now / 1000) + 3600 } });

    expectUnauthorized(
      await get(url, { Authorization: `Bearer ${otherIssuer}` }),
      // The authorizer's sentence, and the stack's own note on how to make a token it accepts.
      `The bearer token's "iss" claim is not the issuer this service accepts, "${stack.config.jwtIssuer}". Here, locally: make local tokens with the PORT (and JWT_ISSUER) that npm start runs with.`,
    );
    expectUnauthorized(await get(url, { Authorization: `Bearer ${notYet}` }), 'The bearer token\'s "nbf" claim is not acceptable.');
  });

  it('returns 403 text/plain for a valid token without a tenant claim', async () => {
    const res = await get(url, { Authorization: `Bearer ${await stack.token({ tenant: undefined })}` });

    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.body).toMatch(/^The token carries no single tenant in its "tenant_id" claim\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('does not repeat the token in any failure text', async () => {
    const token = await stack.token({ audience: 'some-other-api' });

    const res = await get(url, { Authorization: `Bearer ${token}` });

    expect(res.body).not.toContain(token.split('.')[1]);
  });

  it('answers 404 text/plain for the private observations path at the public host', async () => {
    const res = await get(`${stack.publicUrl}/api/mcp/endpoint?agent_id=a-online`, {
      Authorization: `Bearer ${await stack.token()}`,
      'X-Service-Reason': 'checking disk',
    });

    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });
});
