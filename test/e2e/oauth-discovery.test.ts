import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DoorName, doorAudience, doorResource } from '../../lib/auth/public-doors.js';
import { smallFleet } from '../fixtures/small-fleet.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { claimsOf, InMemoryOAuthProvider, personInChromium } from '../helpers/sign-in.js';

/**
 * How an OAuth client that knows only a door's URL gets in, for each public door, with the MCP
 * SDK's own OAuth client (`auth`) and nothing configured by hand: the door's 401 names its RFC
 * 9728 document, which names the authorization server; the client reads that server's RFC 8414
 * metadata, registers itself (RFC 7591), sends the user to sign in with PKCE (S256) asking for the
 * door's resource (RFC 8707), redeems the code, and the door answers 200 to the token it gets.
 * The user signs in in headless Chromium.
 */

let stack: SharedStack;
const person = personInChromium();

beforeAll(async () => {
  stack = await sharedStack(smallFleet());
});
afterAll(async () => {
  await person.close();
  await stack?.release();
});

/** The door asked as a client asks it: GET /api/agents, or an MCP `tools/list` on POST /api/mcp. */
function askDoor(door: DoorName, token?: string): Promise<Response> {
  const authorization: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  if (door === 'inventory') return fetch(`${stack.publicUrl}/api/agents`, { headers: authorization });
  return fetch(`${stack.publicUrl}/api/mcp`, {
    method: 'POST',
    headers: { ...authorization, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'discovery-test', version: '1' } },
    }),
  });
}

describe.each(['inventory', 'mcp'] as const)('E2E: the %s door, from its 401 to a 200 with the SDK’s OAuth client', (door) => {
  it('follows RFC 9728, RFC 8414, RFC 7591, PKCE and RFC 8707 to a token for this door, which the door takes', async () => {
    const provider = new InMemoryOAuthProvider('http://127.0.0.1:45996/callback', 'door discovery test');
    const serverUrl = door === 'inventory' ? `${stack.publicUrl}/api/agents` : `${stack.publicUrl}/api/mcp`;

    const refused = await askDoor(door);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(refused);
    const document = (await (await fetch(resourceMetadataUrl!)).json()) as { resource: string; authorization_servers: string[] };
    const first = await auth(provider, { serverUrl, resourceMetadataUrl: resourceMetadataUrl! });
    const asked = provider.authorizationUrl!;
    const back = await person.signIn(asked, { tenant: 'acme', user: `discovery-${door}` });
    const second = await auth(provider, {
      serverUrl,
      resourceMetadataUrl: resourceMetadataUrl!,
      authorizationCode: back.searchParams.get('code')!,
      iss: back.searchParams.get('iss') ?? undefined,
    });
    const granted = await askDoor(door, provider.saved!.access_token);
    await granted.body?.cancel();

    expect(refused.status).toBe(401);
    expect(document).toEqual(
      expect.objectContaining({
        resource: doorResource(stack.config, door),
        authorization_servers: [stack.config.jwtIssuer],
        scopes_supported: ['endpoints:read'],
      }),
    );
    expect(first).toBe('REDIRECT');
    expect(provider.client?.client_id).toMatch(/^local-/);
    expect(`${asked.origin}${asked.pathname}`).toBe(`${stack.publicUrl}/oauth2/authorize`);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('resource')).toBe(doorResource(stack.config, door));
    expect(second).toBe('AUTHORIZED');
    expect(claimsOf(provider.saved!.access_token)).toMatchObject({
      aud: doorAudience(stack.config, door),
      sub: `discovery-${door}`,
      tenant_id: 'acme',
      scope: expect.stringMatching(/(^| )endpoints:read( |$)/),
    });
    expect(granted.status).toBe(200);
  });
});
