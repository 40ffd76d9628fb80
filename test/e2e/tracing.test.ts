import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { get, startTestStack, type TestStack } from '../helpers/stack.js';

/** One document the X-Ray SDK sent the daemon (a UDP datagram: a JSON header line, then the subsegment). */
interface SegmentDocument {
  id: string;
  name: string;
  trace_id: string;
  parent_id?: string;
  annotations?: Record<string, unknown>;
  aws?: { operation?: string };
}

/**
 * The segments the functions send X-Ray, read by a daemon of the test's own (a UDP socket on
 * loopback, named to the sandboxes by AWS_XRAY_DAEMON_ADDRESS as Lambda names its daemon). Each
 * request names its trace and X-Ray's decision (`X-Amzn-Trace-Id: Root=…;Sampled=0|1`), which
 * the gateways continue. Tracer is loaded by an instance's first sampled invocation, so the order
 * of the requests below is the point: unsampled first, in instances that then serve sampled ones.
 */
describe('E2E: the traces X-Ray receives', () => {
  let stack: TestStack;
  let daemon: Socket;
  const received: SegmentDocument[] = [];

  beforeAll(async () => {
    daemon = createSocket('udp4');
    daemon.on('message', (datagram) => {
      const body = datagram.toString('utf8').split('\n')[1];
      if (body) received.push(JSON.parse(body) as SegmentDocument);
    });
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    stack = await startTestStack(
      { tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] }] },
      { AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}` },
    );
  });
  afterAll(async () => {
    await stack?.stop();
    daemon?.close();
  });

  let roots = 0;
  /** A new trace root, as X-Ray writes them. */
  const newRoot = (): string =>
    `1-${Math.floor(Date.now() / 1000).toString(16)}-${(++roots).toString(16).padStart(8, '0')}${'ab'.repeat(8)}`;
  const tracedCall = async (trace: string, params: Record<string, unknown>): Promise<{ isError?: boolean }> => {
    const answer = await fetch(`${stack.publicUrl}/api/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${await stack.mcpToken({ subject: 'tracy' })}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'X-Amzn-Trace-Id': trace,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
    });
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { result: { isError?: boolean } }).result;
  };
  const listEndpoints = { name: 'list_endpoints', arguments: {} };
  const observations = { name: 'observations', arguments: { agent_id: 'a-1', reason: 'trace the hop' } };
  const ofTrace = (root: string): SegmentDocument[] => received.filter((d) => d.trace_id === root);
  /** The handler subsegment whose children include a DynamoDB call (the authorizer's has none). */
  const readingHandler = (root: string): SegmentDocument | undefined => {
    const docs = ofTrace(root);
    const parents = new Set(docs.filter((d) => d.name === 'DynamoDB').map((d) => d.parent_id));
    return docs.find((d) => d.name === '## index.handler' && parents.has(d.id));
  };

  it('records nothing for calls X-Ray does not sample, and keeps that decision across the private hop; the first sampled call in the same instances is traced whole', async () => {
    const unsampledHop = newRoot();
    const unsampledList = newRoot();
    expect((await tracedCall(`Root=${unsampledHop};Sampled=0`, observations)).isError).toBeFalsy();
    expect((await tracedCall(`Root=${unsampledList};Sampled=0`, listEndpoints)).isError).toBeFalsy();

    const sampled = newRoot();
    expect((await tracedCall(`Root=${sampled};Sampled=1`, listEndpoints)).isError).toBeFalsy();
    await vi.waitFor(() => expect(readingHandler(sampled)).toBeDefined(), { timeout: 5_000 });
    // The MCP instance loaded Tracer for this call: its handler, not a cold start, the tenant, and the
    // DynamoDB reads of the client it made before Tracer was loaded.
    expect(readingHandler(sampled)?.annotations).toMatchObject({ ColdStart: false, tenant: 'acme' });
    expect(ofTrace(sampled).map((d) => d.aws?.operation)).toContain('Query');
    // Sent before the sampled call's documents, and none came: the private API and the observations
    // function kept the door's decision (a request without the header gets a sampled trace of its own).
    expect(received.filter((d) => d.trace_id !== sampled)).toEqual([]);
  });

  it("joins the observations function to the MCP door's sampled trace across the private hop", async () => {
    const root = newRoot();
    expect((await tracedCall(`Root=${root};Sampled=1`, observations)).isError).toBeFalsy();
    // The observations function's handler (its reads and the audit write) and the MCP door's (its fetch
    // of the private API), in the one trace the client named. The authorizer's answer for this token is
    // the gateway's cached one: no authorizer ran.
    const handlerOf = (child: (d: SegmentDocument) => boolean): SegmentDocument | undefined => {
      const docs = ofTrace(root);
      const parents = new Set(docs.filter(child).map((d) => d.parent_id));
      return docs.find((d) => d.name === '## index.handler' && parents.has(d.id));
    };
    await vi.waitFor(
      () => {
        expect(handlerOf((d) => d.aws?.operation === 'PutItem')).toBeDefined();
        expect(handlerOf((d) => d.name === new URL(stack.privateUrl).hostname)).toBeDefined();
      },
      { timeout: 5_000 },
    );
    const docs = ofTrace(root);
    expect(docs.map((d) => d.aws?.operation)).toEqual(expect.arrayContaining(['Query', 'PutItem']));
    expect(docs.every((d) => d.annotations === undefined || d.annotations.tenant === 'acme')).toBe(true);
  });

  it("annotates a fresh instance's first invocation, sampled, as its cold start", async () => {
    const root = newRoot();
    const answer = await get(`${stack.publicUrl}/api/agents`, {
      Authorization: `Bearer ${await stack.token()}`,
      'X-Amzn-Trace-Id': `Root=${root};Sampled=1`,
    });
    expect(answer.status).toBe(200);
    await vi.waitFor(() => expect(readingHandler(root)).toBeDefined(), { timeout: 5_000 });
    expect(readingHandler(root)?.annotations).toMatchObject({ ColdStart: true, tenant: 'acme' });
  });
});
