import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BROKER_REFUSALS } from '../../lib/auth/broker.js';
import { METRIC } from '../../lib/observability/metrics.js';
import { closedPortEndpoint } from '../helpers/faults.js';
import { call, connectTo, type ERAS, recentDemoFleet, type ToolResult, textOf } from '../helpers/mcp-client.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';

/**
 * What the assistant gets when the door's upstreams fail (the store, the issuer's token exchange,
 * the private operation, the broker's own configuration): one sentence in an error result, never an
 * empty success, counted and logged where an operator must act.
 */

let stack: SharedStack;

beforeAll(async () => {
  stack = await sharedStack(recentDemoFleet(new Date()));
});
afterAll(async () => {
  await stack?.release();
});

const connect = (token: string, options?: (typeof ERAS)[number][1]): Promise<Client> => connectTo(stack.publicUrl, token, options);

describe('E2E: upstream failures reach the assistant as one sentence, never as an empty success', () => {
  let client: Client;
  let quiet: Record<string, string | undefined>;
  /** What the functions write while the group runs: read by misconfigurationsDuring, kept out of the test run's output. */
  const written: string[] = [];
  let spies: Array<{ mockRestore: () => void }> = [];

  beforeAll(async () => {
    const capture = (chunk: string | Uint8Array): boolean => {
      written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    };
    spies = [vi.spyOn(process.stdout, 'write').mockImplementation(capture), vi.spyOn(process.stderr, 'write').mockImplementation(capture)];
    // The functions' EMF lines and error logs on for the group, which counts them (misconfigurationsDuring).
    quiet = stack.updateEnvironment({ POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_LOG_LEVEL: 'ERROR' });
    client = await connect(await stack.mcpToken({ tenant: 'acme', subject: 'dave' }));
  });
  afterAll(async () => {
    await client?.close();
    stack.updateEnvironment(quiet);
    for (const spy of spies) spy.mockRestore();
  });

  /** Runs `fn` with the stack's environment changed (its functions restarted with it), then puts it back. */
  async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
    const previous = stack.updateEnvironment(env);
    try {
      return await fn();
    } finally {
      stack.updateEnvironment(previous);
    }
  }

  /**
   * How often `fn` made the MCP door log and count a broker misconfiguration (the alarm's metric),
   * read from the lines the functions write (their EMF metric lines and error logs are on in this group).
   */
  async function misconfigurationsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; counted: number; logged: number }> {
    const from = written.length;
    const result = await fn();
    const records = written
      .slice(from)
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const counts = records.filter((r) => '_aws' in r).map((r) => [r[METRIC.brokerMisconfigurations] ?? []].flat().length);
    return {
      result,
      counted: counts.reduce((sum, n) => sum + n, 0),
      logged: records.filter((r) => r.message === 'broker misconfiguration').length,
    };
  }

  it('says the services are unavailable, with when to retry, when the data store is down', async () => {
    const down = { DYNAMODB_ENDPOINT: await closedPortEndpoint(), DYNAMODB_MAX_ATTEMPTS: '1', DYNAMODB_TIMEOUT_MS: '500' };

    const [observations, list] = await withEnv(down, async () => [
      await call(client, 'observations', { agent_id: 'ac-001', reason: 'store down?' }),
      await call(client, 'list_endpoints', {}),
    ]);

    expect(observations).toMatchObject({
      isError: true,
      content: [{ text: 'The observations service is unavailable right now; try again in 5 s.' }],
    });
    expect(list).toMatchObject({ isError: true, content: [{ text: 'The inventory is unavailable right now; try again in 5 s.' }] });
    expect(observations.structuredContent).toBeUndefined();
  });

  it("gives the service's sentence when it refuses the broker, and logs and counts the misconfiguration", async () => {
    const { result, counted, logged } = await misconfigurationsDuring(() =>
      withEnv({ BROKER_ALLOW_LIST: 'some-other-broker' }, () =>
        call(client, 'observations', { agent_id: 'ac-001', reason: 'broker check' }),
      ),
    );

    expect({ counted, logged }).toEqual({ counted: 1, logged: 1 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      new RegExp(`^${BROKER_REFUSALS.notAllowed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(request id: [0-9a-f-]{36}\\)$`),
    );
  });

  it('says the MCP service is misconfigured when the issuer refuses its client secret', async () => {
    const other = await connect(await stack.mcpToken({ tenant: 'acme', subject: 'erin' }));
    try {
      const { result, counted } = await misconfigurationsDuring(() =>
        withEnv({ BROKER_CLIENT_SECRET: 'not-the-secret' }, () =>
          call(other, 'observations', { agent_id: 'ac-001', reason: 'secret check' }),
        ),
      );

      expect(counted).toBe(1);
      expect(result).toMatchObject({
        isError: true,
        content: [{ text: expect.stringMatching(/^The MCP service is not set up correctly to read observations for you/) }],
      });
    } finally {
      await other.close();
    }
  });

  describe('from a fake gateway in front of the private operation (faults no real service gives on demand)', () => {
    let gateway: Server;
    let answer: (res: import('node:http').ServerResponse) => void = () => undefined;
    let direct: Record<string, string | undefined>;

    beforeAll(async () => {
      gateway = createServer((_req, res) => answer(res));
      await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
      // The MCP function reaches the fake gateway for the whole group (one new instance for it).
      direct = stack.updateEnvironment({
        OBSERVATIONS_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/api/mcp/endpoint`,
      });
    });
    afterAll(async () => {
      stack.updateEnvironment(direct);
      gateway.closeAllConnections();
      await new Promise((resolve) => gateway.close(resolve));
    });

    const viaGateway = async (env: Record<string, string> = {}): Promise<ToolResult> => {
      const fresh = await connect(await stack.mcpToken({ tenant: 'acme', subject: `gw-${Math.random()}` }));
      try {
        return await withEnv(env, () => call(fresh, 'observations', { agent_id: 'ac-001', reason: 'gateway fault' }));
      } finally {
        await fresh.close();
      }
    };

    it.each([
      [
        'a 403 from the API policy, naming an ARN',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(403, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'AccessDeniedException' });
          res.end(
            '{"Message":"User: anonymous is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:eu-west-1:123456789012:abc/prod/GET/api/mcp/endpoint"}',
          );
        },
        /^The MCP service is not set up correctly to read observations for you/,
        1,
      ],
      [
        'a 401 for the exchanged token',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8', 'WWW-Authenticate': 'Bearer' });
          res.end('The bearer token is not for this service (audience). (request id: 0b0f0e8e-7d47-4f0b-9b1a-5f8c4d1e2a3b)\n');
        },
        /^The MCP service is not set up correctly to read observations for you/,
        1,
      ],
      [
        'a 502 with an HTML page',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(502, { 'Content-Type': 'text/html' });
          res.end('<html><body>Bad Gateway</body></html>');
        },
        /^The observations service failed to answer; try again later\.$/,
        0,
      ],
      [
        'a 503 with Retry-After',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '7' });
          res.end('The observations store is unavailable right now; try again later. (request id: 1)\n');
        },
        /^The observations service is unavailable right now; try again in 7 s\.$/,
        0,
      ],
      [
        'a 504',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(504, { 'Content-Type': 'application/json' });
          res.end('{"message": "Endpoint request timed out"}');
        },
        /^The observations service did not answer in time; try again in 5 s\.$/,
        0,
      ],
      [
        'a 200 whose body is not a dashboard',
        (res: import('node:http').ServerResponse) => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end('{"schema":"endpoint-dashboard/v1","status":"ok"}');
        },
        /^The observations service answered with data that could not be read; try again later\.$/,
        0,
      ],
    ])('turns %s into an error result', async (_what, respond, sentence, misconfigurations) => {
      answer = respond;

      const { result, counted } = await misconfigurationsDuring(() => viaGateway());

      expect(counted).toBe(misconfigurations);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(sentence);
      expect(textOf(result)).not.toMatch(/arn:|<html|execute-api/);
      expect(result.structuredContent).toBeUndefined();
    });

    it('stops waiting at its deadline and says so', async () => {
      answer = () => undefined; // never answers

      const result = await viaGateway({ UPSTREAM_TIMEOUT_MS: '1000' });

      expect(result).toMatchObject({
        isError: true,
        content: [{ text: 'The observations service did not answer in time; try again in 5 s.' }],
      });
    });
  });
});
