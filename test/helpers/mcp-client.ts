import { Client, type ClientOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { demoFleet } from '../../local/demo.js';
import type { Fleet } from '../../local/fleet.js';

/** The MCP door's tests' shared parts: the demo fleet they seed, the SDK's client, a tool result read as a user sees it. */

export interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

/** The two protocol eras an MCP client may speak, as the SDK's client options choose them, with the revision each negotiates. */
export const ERAS = [
  ['a 2025-era client (initialize handshake)', undefined, '2025-11-25'],
  ['a 2026-07-28 client (stateless, no handshake)', { versionNegotiation: { mode: 'auto' as const } }, '2026-07-28'],
] as const;

/**
 * The demo fleet with only its last three hours of samples: the tools here read the default
 * 60-minute window (and the agent whose samples are two hours old), and the demo's day of samples
 * would take seconds of CPU to seed.
 */
export function recentDemoFleet(now: Date): Fleet {
  const since = now.getTime() - 3 * 3_600_000;
  return {
    tenants: demoFleet(now).tenants.map((tenant) => ({
      ...tenant,
      agents: (tenant.agents ?? []).map((agent) =>
        agent.samples ? { ...agent, samples: agent.samples.filter((s) => Date.parse(s.observed_at) >= since) } : agent,
      ),
    })),
  };
}

/** The SDK's own client, connected to the MCP door at `publicUrl` with `token`. */
export async function connectTo(
  publicUrl: string,
  token: string,
  options?: ClientOptions,
  prepare?: (client: Client) => void,
): Promise<Client> {
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' }, options);
  // Handlers (an elicitation form's answers) are set before the connection, as a host sets them.
  prepare?.(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${publicUrl}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

export const textOf = (result: ToolResult): string => result.content.map((c) => c.text ?? '').join('\n');

export const withoutClock = ({ evaluated_at: _at, ...rest }: Record<string, unknown>): Record<string, unknown> => rest;
