import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestStack } from '../helpers/stack.js';

/** The JSON lines written to stdout: log entries, and EMF metric lines (`_aws`) kept apart. */
function jsonLines(chunks: string[]): { logs: Array<Record<string, unknown>>; emf: Array<Record<string, unknown>> } {
  const all = chunks
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logs: all.filter((e) => !('_aws' in e)), emf: all.filter((e) => '_aws' in e) };
}

/**
 * What the handlers log and count during real requests. The logger and the metrics read their
 * switches when they are built, so this file turns both on before it loads anything of the service
 * (other files keep them off).
 */
describe('E2E: logs and metrics of real requests', () => {
  let stack: TestStack;
  let get: typeof import('../helpers/stack.js')['get'];
  const lines: string[] = [];
  const warnings: string[] = [];

  beforeAll(async () => {
    process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const helpers = await import('../helpers/stack.js');
    get = helpers.get;
    stack = await helpers.startTestStack({
      tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] }],
    });
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      warnings.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await stack?.stop();
  });

  it('never contain the bearer token or the reason text, and carry tenant, subject and the reason length', async () => {
    const token = await stack.brokerToken({ tenant: 'acme', subject: 'alice' });
    const inventoryToken = await stack.token({ tenant: 'acme', subject: 'alice' });
    const reason = 'customer says the laptop is haunted';
    const headers = { Authorization: `Bearer ${token}`, 'X-Service-Reason': reason };

    await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=a-1`, headers);
    await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=unknown`, headers);
    await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=a-1`, { ...headers, Authorization: `Bearer ${token}x` });
    await get(`${stack.publicUrl}/api/agents`, { ...headers, Authorization: `Bearer ${inventoryToken}` });

    const entries = jsonLines(lines).logs;
    const text = JSON.stringify(entries);
    expect(entries.map((e) => [e.message, e.statusCode ?? 200])).toEqual([
      ['dashboard read', 200],
      ['request refused', 404],
      ['request refused', 401],
      ['inventory listed', 200],
    ]);
    expect(entries.some((e) => e.tenant === 'acme' && e.subject === 'alice' && e.reasonLength === reason.length)).toBe(true);
    expect(entries.some((e) => e.message === 'inventory listed' && e.tenant === 'acme')).toBe(true);
    expect(text).not.toContain(reason);
    for (const part of [...token.split('.').slice(1), ...inventoryToken.split('.').slice(1)]) expect(text).not.toContain(part);
  });

  it('at the MCP door, never contain the MCP token, the exchanged token or the reason text; each invocation counts in its own metrics line', async () => {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const mcpToken = await stack.mcpToken({ tenant: 'acme', subject: 'bob' });
    const reason = 'the user reports a fan that never stops';
    lines.length = 0;
    warnings.length = 0;
    const client = new Client({ name: 'logging-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.publicUrl}/api/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${mcpToken}` } },
      }),
    );
    const result = await client.callTool({ name: 'observations', arguments: { agent_id: 'a-1', reason } });
    await client.close();

    const { logs: entries, emf } = jsonLines(lines);
    const text = JSON.stringify(entries);
    expect(result.isError).toBeFalsy();
    // One metrics line per invocation, each with only its own metrics, and no warning about a shared buffer.
    const mcpLines = emf.filter((e) => e.operation === 'mcp'); // the client's handshake, the tool call, its goodbye
    const toolCallLines = mcpLines.filter((e) => 'ToolCalls' in e);
    const observationsLines = emf.filter((e) => e.operation === 'getEndpointObservations');
    expect(mcpLines.every((e) => e.Requests === 1)).toBe(true);
    expect(toolCallLines).toHaveLength(1);
    expect(observationsLines).toHaveLength(1);
    expect(toolCallLines[0]).toMatchObject({ Requests: 1, ToolCalls: 1, tool: 'observations', statusCode: '200' });
    expect(toolCallLines[0]).not.toHaveProperty('AuditWrites');
    expect(observationsLines[0]).toMatchObject({ Requests: 1, AuditWrites: 1, statusCode: '200' });
    expect(observationsLines[0]).not.toHaveProperty('ToolCalls');
    expect(warnings.join('')).not.toContain('has already been added');
    expect(entries.some((e) => e.message === 'dashboard read through the broker' && e.tenant === 'acme' && e.subject === 'bob')).toBe(true);
    // The observations handler logged the read the broker made, under the same user.
    expect(entries.some((e) => e.message === 'dashboard read' && e.broker === 'local-broker' && e.subject === 'bob')).toBe(true);
    expect(text).not.toContain(reason);
    expect(text).not.toContain(encodeURIComponent(reason));
    for (const part of mcpToken.split('.').slice(1)) expect(text).not.toContain(part);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
  });

  it("carries the MCP door's X-Ray trace across the private hop: the observations function logs the caller's trace, and no X-Ray daemon is missed", async () => {
    const mcpToken = await stack.mcpToken({ tenant: 'acme', subject: 'carol' });
    const root = `1-${Math.floor(Date.now() / 1000).toString(16)}-${'c0ffee'.repeat(4)}`;
    lines.length = 0;
    warnings.length = 0;
    // One tools/call, as a client traced by X-Ray sends it (the header API Gateway continues).
    const answer = await fetch(`${stack.publicUrl}/api/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${mcpToken}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'X-Amzn-Trace-Id': `Root=${root};Sampled=1`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'observations', arguments: { agent_id: 'a-1', reason: 'trace the hop' } },
      }),
    });
    const { result } = (await answer.json()) as { result: { isError?: boolean } };

    const entries = jsonLines(lines).logs;
    const brokered = entries.find((e) => e.message === 'dashboard read through the broker' && e.subject === 'carol');
    const read = entries.find((e) => e.message === 'dashboard read' && e.subject === 'carol');
    expect(result.isError).toBeFalsy();
    // Powertools Logger writes the trace the function runs in (_X_AMZN_TRACE_ID): the client's, through both gateways.
    expect(brokered?.xray_trace_id).toBe(root);
    expect(read?.xray_trace_id).toBe(root);
    // Tracer sends its segments to a daemon that is not there (UDP, dropped): nothing fails, nothing is printed about it.
    const printed = [
      ...warnings,
      ...lines
        .join('')
        .split('\n')
        .filter((line) => !line.startsWith('{')),
    ].join('\n');
    expect(printed).not.toMatch(/X-Ray|trace data|segment|daemon/i);
    // Annotations never reach a log line: the logs say what they said before.
    expect(entries.filter((e) => e.subject === 'carol').every((e) => e.tenant === 'acme')).toBe(true);
  });
});
