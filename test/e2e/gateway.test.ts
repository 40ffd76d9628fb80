import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';
import { get } from '../helpers/stack.js';

/**
 * The local gateway with input no browser sends but any client may: names that are also the names
 * of object methods, and request targets that are not paths. It answers them as API Gateway would,
 * never with a 500.
 */

const FLEET = {
  tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h-1', os: 'linux', arch: 'x86_64', version: '1' }] }],
};
const METHOD_NAMES = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'];

let stack: SharedStack;
beforeAll(async () => {
  stack = await sharedStack(FLEET);
});
afterAll(async () => {
  await stack?.release();
});

/** Sends one raw HTTP/1.1 request, exactly as written, and returns the status and body. */
function raw(base: string, requestLine: string, headers: string[] = []): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname, () => {
      socket.end([requestLine, `Host: ${hostname}:${port}`, 'Connection: close', ...headers, '', ''].join('\r\n'));
    });
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
    socket.on('error', reject);
  });
}

describe('E2E: the local gateway never fails on names a client chose', () => {
  it.each(METHOD_NAMES)('lists the inventory with a query parameter and a header named %s', async (name) => {
    const res = await get(`${stack.publicUrl}/api/agents?${encodeURIComponent(name)}=1`, {
      Authorization: `Bearer ${await stack.token()}`,
      [name]: 'x',
    });

    expect(res.status).toBe(200);
  });

  it.each(METHOD_NAMES)(
    'answers the private operation with a 400 naming an unknown query parameter %s, and ignores such a header',
    async (name) => {
      const headers = { Authorization: `Bearer ${await stack.brokerToken()}`, 'X-Service-Reason': 'name check' };

      const withParameter = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=a-1&${encodeURIComponent(name)}=1`, headers);
      const withHeader = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=a-1`, { ...headers, [name]: 'x' });

      expect(withParameter.status).toBe(400);
      expect(withParameter.body).toMatch(new RegExp(`^Unknown query parameter "${name}"\\.`));
      expect(withHeader.status).toBe(200);
    },
  );
});

describe('E2E: the local gateway with request targets that are not paths', () => {
  it.each(['GET http://[::1/api/agents HTTP/1.1', 'GET http://[/api/mcp/endpoint HTTP/1.1', 'GET * HTTP/1.1'])(
    'answers %s with a text/plain 400 on both listeners',
    async (requestLine) => {
      for (const base of [stack.publicUrl, stack.privateUrl]) {
        const res = await raw(base, requestLine);

        expect(res.status).toBe(400);
        expect(res.body).toMatch(/The request target is not a valid path\. \(request id: [0-9a-f-]{36}\)/);
      }
    },
  );

  it.each(['GET //[/api/agents HTTP/1.1', 'GET //api/agents HTTP/1.1'])(
    'reads %s as a path that names no route (404), not as a host',
    async (requestLine) => {
      for (const base of [stack.publicUrl, stack.privateUrl]) {
        const res = await raw(base, requestLine);

        expect(res.status).toBe(404);
        expect(res.body).toMatch(/No such route\./);
      }
    },
  );
});
