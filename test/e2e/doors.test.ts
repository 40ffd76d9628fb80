import { request } from 'node:http';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import type { TestStack } from '../helpers/stack.js';

/**
 * The two public doors of the local REST API as a client meets them over HTTP: the token
 * authorizer in front of each (the deployed module, its answers cached at the MCP door), the
 * gateway's refusals in the contract's words, and the 401 of each door pointing at that door's own
 * RFC 9728 document.
 */

const FLEET = {
  tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h-1', os: 'linux', arch: 'x86_64', version: '1' }] }],
};
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'doors-test', version: '1' } },
};

let stack: SharedStack;
let metadata: { inventory: string; mcp: string };
beforeAll(async () => {
  stack = await sharedStack(FLEET);
  metadata = {
    inventory: `${stack.publicUrl}/.well-known/oauth-protected-resource/api/agents`,
    mcp: `${stack.publicUrl}/.well-known/oauth-protected-resource/api/mcp`,
  };
});
afterAll(async () => {
  await stack?.release();
});

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

async function send(path: string, init: RequestInit = {}, base = stack.publicUrl): Promise<Answer> {
  const response = await fetch(`${base}${path}`, init);
  return { status: response.status, headers: response.headers, body: await response.text() };
}
const agents = (token?: string): Promise<Answer> => send('/api/agents', token ? { headers: { Authorization: `Bearer ${token}` } } : {});
const mcp = (token?: string, init: RequestInit = {}): Promise<Answer> =>
  send('/api/mcp', {
    method: 'POST',
    body: JSON.stringify(INITIALIZE),
    ...init,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...init.headers,
    },
  });

/** One request with the Authorization header sent twice (fetch would join them into one). */
function twice(path: string, method: string, values: [string, string], body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${stack.publicUrl}${path}`, { method }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), body: text }),
      );
    });
    req.setHeader('Authorization', values);
    req.setHeader('Content-Type', 'application/json');
    req.setHeader('Accept', 'application/json, text/event-stream');
    req.on('error', reject);
    req.end(body);
  });
}

/** A failure as the contract words it: text/plain, the sentence and the request id, no-store. */
function expectFailure(res: Answer, status: number, sentence: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.body).toMatch(new RegExp(`^${sentence.source} \\(request id: [0-9a-f-]{36}\\)\\n$`));
}

const GATEWAY_401_AT_MCP = /A valid bearer token issued for this MCP server is required; none was sent, or the one sent was refused\./;
/** The MCP door's 401 with the reason the local stack adds (on AWS the gateway response cannot say why). */
const mcp401Because = (reason: RegExp): RegExp => new RegExp(`${GATEWAY_401_AT_MCP.source} Here, locally: ${reason.source}`);

describe('E2E: each door refuses the tokens of the other', () => {
  it("refuses an MCP token at GET /api/agents, with the inventory's challenge and sentence", async () => {
    const res = await agents(await stack.mcpToken());

    expectFailure(res, 401, /The bearer token is not for this service \(audience\)\./);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata.inventory}", scope="endpoints:read"`);
  });

  it("refuses an inventory token at POST /api/mcp, with the MCP door's challenge", async () => {
    const res = await mcp(await stack.token());

    expectFailure(res, 401, mcp401Because(/The bearer token is not for this service \(audience\)\./));
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata.mcp}", scope="endpoints:read"`);
  });

  it('says at the MCP door, as the inventory does, that a token of another issuer was refused and how to make a local one', async () => {
    const foreign = await stack.issuer.sign({
      issuer: 'http://localhost:1',
      audience: stack.config.mcpAudience,
      tenant: 'acme',
      tenantClaim: stack.config.tenantClaim,
    });

    const res = await mcp(foreign);

    expectFailure(
      res,
      401,
      mcp401Because(
        new RegExp(
          `The bearer token's "iss" claim is not the issuer this service accepts, "${stack.config.jwtIssuer}"; make local tokens with the PORT \\(and JWT_ISSUER\\) that npm start runs with\\.`,
        ),
      ),
    );
  });

  it('never lets an answer the MCP door cached for a token open the inventory door', async () => {
    const token = await stack.mcpToken();

    expect((await mcp(token)).status).toBe(200);
    expect((await mcp(token)).status).toBe(200);
    expectFailure(await agents(token), 401, /The bearer token is not for this service \(audience\)\./);
  });
});

describe('E2E: an answer API Gateway cached for a token', () => {
  it('does not outlive the token: past its exp the MCP door refuses it with 401, from the handler, with the challenge and the reason', async () => {
    const token = await stack.mcpToken({ expiresInSeconds: 2 });
    const exp = decodeJwt(token).exp!;

    expect((await mcp(token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now()) + 200));
    const res = await mcp(token);

    // The gateway's own 401 would say the static sentence: this one comes from the cached answer's handler.
    expectFailure(res, 401, /The bearer token has expired\./);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${metadata.mcp}", scope="endpoints:read", error="invalid_token", error_description="The bearer token has expired."`,
    );
  });

  it('serves no request that sends the Authorization header twice, though the answer for one of the values is cached', async () => {
    const token = await stack.mcpToken();
    expect((await mcp(token)).status).toBe(200);

    const res = await twice('/api/mcp', 'POST', ['Bearer not-a-token', `Bearer ${token}`], JSON.stringify(INITIALIZE));

    expectFailure(res, 401, /The Authorization header was sent more than once\./);
    expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${metadata.mcp}"`);
  });
});

describe('E2E: two Authorization headers at the inventory door', () => {
  it('are refused by its authorizer, with its challenge', async () => {
    const token = await stack.token();

    const res = await twice('/api/agents', 'GET', [`Bearer ${token}`, `Bearer ${token}`]);

    expectFailure(res, 401, /The Authorization header was sent more than once\./);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata.inventory}", scope="endpoints:read"`);
  });
});

describe("E2E: every refusal of the local gateway, in the contract's words", () => {
  it.each([
    ['no token at the inventory', () => agents(), 401, /A bearer token is required\./, 'inventory'],
    ['a malformed token at the inventory', () => agents('not.a.jwt'), 401, /The bearer token is malformed\./, 'inventory'],
    ['no token at the MCP door', () => mcp(), 401, GATEWAY_401_AT_MCP, 'mcp'],
    ['a malformed token at the MCP door', () => mcp('not.a.jwt'), 401, mcp401Because(/The bearer token is malformed\./), 'mcp'],
    ['an unknown path', () => send('/api/nothing'), 404, /No such route\./, undefined],
    ['a method the path does not have', () => send('/api/agents', { method: 'PUT' }), 404, /No such route\./, undefined],
    ['an unknown path at the private listener', () => send('/api/agents', {}, stack.privateUrl), 404, /No such route\./, undefined],
  ] as const)('%s', async (_what, ask, status, sentence, door) => {
    const res = await ask();

    expectFailure(res, status, sentence);
    expect(res.headers.get('www-authenticate')).toBe(door ? `Bearer resource_metadata="${metadata[door]}", scope="endpoints:read"` : null);
  });
});

describe('E2E: the protected resource metadata of both doors', () => {
  it.each(['inventory', 'mcp'] as const)("serves the %s door's document without a token at the URL its 401s name", async (door) => {
    const refused = door === 'mcp' ? await mcp() : await agents();
    const url = /resource_metadata="([^"]+)"/.exec(refused.headers.get('www-authenticate') ?? '')?.[1];

    const res = await fetch(url!);
    const document = (await res.json()) as Record<string, unknown>;

    expect(res.status).toBe(200);
    expect(document).toMatchObject({
      resource: door === 'mcp' ? stack.config.mcpAudience : `${stack.publicUrl}/api/agents`,
      authorization_servers: [stack.config.jwtIssuer],
    });
  });
});

describe('E2E: a CORS preflight at the MCP door', () => {
  it('reaches the MCP function without passing the authorizer (it carries no token)', async () => {
    // From a page of the stack's own origin: the listener's guard lets no other origin's request through.
    const res = await send('/api/mcp', {
      method: 'OPTIONS',
      headers: { Origin: stack.publicUrl, 'Access-Control-Request-Method': 'POST' },
    });

    expect(res.status).toBe(204);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(res.body).not.toMatch(GATEWAY_401_AT_MCP);
  });
});

describe("E2E: each door's OAuth scope, asked and checked", () => {
  const door = {
    inventory: { call: agents, token: (claims: Parameters<TestStack['token']>[0]) => stack.token(claims) },
    mcp: { call: (token?: string) => mcp(token), token: (claims: Parameters<TestStack['token']>[0]) => stack.mcpToken(claims) },
  };

  it.each([
    ['no scope', { scope: undefined }],
    ['an empty scope', { scope: '' }],
    ['other scopes', { scope: 'openid offline_access endpoints:write' }],
    ['an empty scp', { scope: undefined, extra: { scp: '' } }],
    ['scp naming another scope', { scope: undefined, extra: { scp: ['profile'] } }],
    // RFC 6749 §3.3: scope tokens are separated by single spaces (U+0020), and `scope` is a string.
    ['the scope separated by a tab', { scope: 'openid\tendpoints:read' }],
    ['the scope separated by a no-break space', { scope: 'openid\u00a0endpoints:read' }],
    ['scope as a JSON array', { scope: undefined, extra: { scope: ['openid', 'endpoints:read'] } }],
  ])('refuses a valid token with %s at both doors: 403 insufficient_scope naming endpoints:read', async (_what, claims) => {
    for (const name of ['inventory', 'mcp'] as const) {
      const res = await door[name].call(await door[name].token(claims));

      expect(res.status, name).toBe(403);
      expect(res.headers.get('content-type'), name).toBe('text/plain; charset=utf-8');
      expect(res.body, name).toMatch(
        /^The bearer token was not granted the scope "endpoints:read" that this door requires: sign in again, asking for it\. \(request id: /,
      );
      expect(res.headers.get('www-authenticate'), name).toBe(
        `Bearer resource_metadata="${metadata[name]}", error="insufficient_scope", scope="endpoints:read", error_description="The token lacks the scope endpoints:read."`,
      );
    }
  });

  it.each([
    ['scope, among others', { scope: 'openid endpoints:read offline_access' }],
    ['scp as a string (Entra ID)', { scope: undefined, extra: { scp: 'endpoints:read' } }],
    ['scp as an array', { scope: undefined, extra: { scp: ['profile', 'endpoints:read'] } }],
  ])('serves a token granting the scope in %s at both doors', async (_what, claims) => {
    for (const name of ['inventory', 'mcp'] as const)
      expect((await door[name].call(await door[name].token(claims))).status, name).toBe(200);
  });

  it('reads the scope from the claim SCOPE_CLAIM names, and only there', async () => {
    const previous = stack.updateEnvironment({ SCOPE_CLAIM: 'permissions' });
    try {
      const named = await stack.token({ scope: undefined, extra: { permissions: ['endpoints:read'] } });
      const elsewhere = await stack.token({ scope: 'endpoints:read' });
      expect([(await agents(named)).status, (await agents(elsewhere)).status]).toEqual([200, 403]);
    } finally {
      stack.updateEnvironment(previous);
    }
  });

  it('asks for no scope when REQUIRED_SCOPE is empty: tokens without one are served, and the metadata lists none', async () => {
    const previous = stack.updateEnvironment({ REQUIRED_SCOPE: '' });
    try {
      const res = await agents(await stack.token({ scope: undefined }));
      const document = (await (await fetch(metadata.mcp)).json()) as Record<string, unknown>;
      expect(res.status).toBe(200);
      expect(document.scopes_supported).toBeUndefined();
    } finally {
      stack.updateEnvironment(previous);
    }
  });

  it.each(['inventory', 'mcp'] as const)('lists endpoints:read in the %s door’s RFC 9728 document', async (name) => {
    const document = (await (await fetch(metadata[name])).json()) as Record<string, unknown>;

    expect(document.scopes_supported).toEqual(['endpoints:read']);
  });
});
