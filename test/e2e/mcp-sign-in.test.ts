import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditItemsOf } from '../../local/audit-items.js';
import { smallFleet } from '../fixtures/small-fleet.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { claimsOf, InMemoryOAuthProvider, personInChromium } from '../helpers/sign-in.js';

/**
 * Sign-in from MCP clients nobody here wrote, against the local stack with no token copied by
 * hand: the official SDK client's own OAuth support and the pinned `mcp-remote`, each finding the
 * local issuer from the door's 401 and metadata, registering itself, and exchanging the code the
 * sign-in page gives; a person in headless Chromium does the user's part (opens the page, picks
 * tenant and user, presses the button, lands on the client's redirect URI), with the headers and
 * cookies Chromium itself sends.
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

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

const ERAS = [
  ['a 2025-era client', undefined, '2025-11-25'],
  ['a 2026-07-28 client', { versionNegotiation: { mode: 'auto' as const } }, '2026-07-28'],
] as const;

describe.each(ERAS)('E2E: the SDK client (%s) signs in through the local issuer with its own OAuth support', (_era, options, revision) => {
  const provider = new InMemoryOAuthProvider('http://127.0.0.1:45997/callback', 'SDK e2e client');
  const mcpUrl = (): URL => new URL(`${stack.publicUrl}/api/mcp`);
  const connect = async (): Promise<Client> => {
    const client = new Client({ name: 'sdk-oauth-e2e', version: '1.0.0' }, options);
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
    return client;
  };

  it('is sent to the sign-in page on its first connection, then connects with the code the page gives, and calls both tools as the user chosen', async () => {
    await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError);
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${stack.publicUrl}/oauth2/authorize`);
    expect(authorizationUrl.searchParams.get('resource')).toBe(stack.config.mcpAudience);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(provider.client?.client_id).toMatch(/^local-/); // registered itself (RFC 7591)

    const back = await person.signIn(authorizationUrl, { tenant: 'acme', user: `sdk-${revision}` });
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    await transport.finishAuth(back.searchParams.get('code')!, back.searchParams.get('iss') ?? undefined);
    const client = new Client({ name: 'sdk-oauth-e2e', version: '1.0.0' }, options);
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const list = (await client.callTool({ name: 'list_endpoints', arguments: { limit: 3 } })) as ToolResult;
      const dashboard = (await client.callTool({
        name: 'observations',
        arguments: { agent_id: 'ac-002', reason: `signed in with ${revision}` },
      })) as ToolResult;

      expect(client.getNegotiatedProtocolVersion()).toBe(revision);
      expect(tools.map((t) => t.name).sort()).toEqual(['list_endpoints', 'observations']);
      expect(list.isError).toBeFalsy();
      expect(dashboard.isError).toBeFalsy();
      expect(dashboard.structuredContent).toMatchObject({ endpoint: { id: 'ac-002' } });
      expect(claimsOf(provider.saved!.access_token)).toMatchObject({
        aud: stack.config.mcpAudience,
        sub: `sdk-${revision}`,
        tenant_id: 'acme',
        scope: expect.stringMatching(/(^| )endpoints:read( |$)/),
      });
      const audited = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === `sdk-${revision}`);
      expect(audited).toEqual([expect.objectContaining({ broker: 'local-broker', agent_id: 'ac-002', outcome: 'allowed' })]);
    } finally {
      await client.close();
    }
  });

  it('refreshes its token without the user when the door refuses the one it has', async () => {
    const { refresh_token: before } = provider.saved!;
    // A token the door refuses (expired): the SDK answers the 401 with its refresh token.
    provider.saveTokens({ ...provider.saved!, access_token: await stack.mcpToken({ expiresInSeconds: -60 }) });

    const client = await connect();
    try {
      const { tools } = await client.listTools();

      expect(tools).toHaveLength(2);
      expect(provider.saved!.refresh_token).not.toBe(before);
      expect(claimsOf(provider.saved!.access_token)).toMatchObject({ sub: `sdk-${revision}` });
    } finally {
      await client.close();
    }
  });
});

/** The lines a process writes to a stream, as they come. */
function lines(stream: Readable): { next(match: RegExp, timeoutMs: number): Promise<string>; all(): string } {
  let buffer = '';
  const waiters: Array<() => void> = [];
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    all: () => buffer,
    async next(match, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = match.exec(buffer);
        if (found) return found[1] ?? found[0];
        if (Date.now() > deadline) throw new Error(`mcp-remote did not print ${match} in time; it printed:\n${buffer}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
  };
}

describe('E2E: mcp-remote (pinned) signs in through the local issuer, its printed URL opened in Chromium', () => {
  let configDir: string;

  beforeAll(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'mcp-remote-'));
  });
  afterAll(async () => {
    await rm(configDir, { recursive: true, force: true });
  });

  it('registers itself, prints the sign-in URL, takes the code at its own callback when the person signs in there, and then serves both tools over stdio', async () => {
    const proxy = createRequire(import.meta.url).resolve('mcp-remote/dist/proxy.js');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [proxy, `${stack.publicUrl}/api/mcp`, '--host', '127.0.0.1', '--auth-timeout', '60'],
      // BROWSER=true makes its opener "succeed" without opening one: the person opens the printed URL in Chromium.
      env: { PATH: process.env.PATH ?? '', HOME: configDir, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
      stderr: 'pipe',
    });
    const output = lines(transport.stderr as Readable);
    const client = new Client({ name: 'stdio-host', version: '1.0.0' });
    const connected = client.connect(transport);
    try {
      const authorizationUrl = await output.next(/Please authorize this client by visiting:\s*\n(\S+)/, 30_000);
      expect(new URL(authorizationUrl).searchParams.get('resource')).toBe(stack.config.mcpAudience);

      // The person's browser lands on mcp-remote's own callback listener, which takes the code from it.
      const back = await person.attempt(authorizationUrl, { tenant: 'globex', user: 'remote-user' });
      expect(back.url.hostname).toBe('127.0.0.1');
      expect(back.status).toBe(200);
      await connected;

      const { tools } = await client.listTools();
      const list = (await client.callTool({ name: 'list_endpoints', arguments: { limit: 3 } })) as ToolResult;
      const result = (await client.callTool({
        name: 'observations',
        arguments: { agent_id: 'gx-002', reason: 'through mcp-remote', ticket: { number: 'CHG0099', system: 'servicenow' } },
      })) as ToolResult;

      expect(tools.map((t) => t.name).sort()).toEqual(['list_endpoints', 'observations']);
      expect(list.isError).toBeFalsy();
      expect(list.structuredContent).toMatchObject({ endpoints: [expect.objectContaining({ agent_id: 'gx-002' })] });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ endpoint: { id: 'gx-002' } });
      const audited = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'globex')).filter((i) => i.subject === 'remote-user');
      expect(audited).toEqual([expect.objectContaining({ ticket_number: 'CHG0099', outcome: 'allowed' })]);
      // The token mcp-remote keeps (under its config folder) was granted the doors' scope, whatever it asked.
      const kept = (await readdir(configDir, { recursive: true })).filter((file) => file.endsWith('_tokens.json'));
      expect(kept).toHaveLength(1);
      const { access_token } = JSON.parse(await readFile(join(configDir, kept[0]!), 'utf8')) as { access_token: string };
      expect(claimsOf(access_token).scope).toMatch(/(^| )endpoints:read( |$)/);
    } finally {
      await client.close().catch(() => undefined);
      await connected.catch(() => undefined);
    }
  }, 90_000);
});
