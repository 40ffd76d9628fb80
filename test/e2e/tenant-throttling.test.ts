import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayResponse } from '../../infra/gateway-responses.js';
import { startTestStack, type TestStack } from '../helpers/stack.js';

/**
 * Per-tenant throttling through the whole local stack: the real token authorizer names each
 * tenant's usage identifier, and the gateway counts it against the tenants' usage plan, as API
 * Gateway does with `ApiKeySourceType: AUTHORIZER`. The stack is given a small burst and a rate
 * that refills nothing within the test (TENANT_BURST_LIMIT, TENANT_RATE_LIMIT), so no timing decides it.
 */
let stack: TestStack;

beforeAll(async () => {
  const agent = { agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' };
  stack = await startTestStack(
    {
      tenants: [
        { tenant_id: 'busy', agents: [agent] },
        { tenant_id: 'quiet', agents: [agent] },
      ],
    },
    { TENANT_BURST_LIMIT: '3', TENANT_RATE_LIMIT: '0.001' },
  );
});
afterAll(async () => {
  await stack?.stop();
});

describe('E2E: each tenant throttled on its own (the usage plan keyed by the authorizer)', () => {
  it("answers a tenant past its burst with API Gateway's THROTTLED 429 at both doors, while another tenant is served", async () => {
    const busy = await stack.token({ tenant: 'busy' });
    const inventory = (token: string) => fetch(`${stack.publicUrl}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await inventory(busy)).status);

    const over = await inventory(busy);
    const overAtMcp = await fetch(`${stack.publicUrl}/api/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${await stack.mcpToken({ tenant: 'busy' })}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const quiet = await inventory(await stack.token({ tenant: 'quiet' }));

    expect(statuses).toEqual([200, 200, 200]);
    expect(over.status).toBe(429);
    expect(over.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(over.headers.get('retry-after')).toBe('1');
    expect(await over.text()).toMatch(new RegExp(`^${gatewayResponse('THROTTLED').sentence} \\(request id: [0-9a-f-]{36}\\)\\n$`));
    expect(overAtMcp.status).toBe(429);
    expect(quiet.status).toBe(200);
    expect(await quiet.json()).toHaveLength(1);
  });
});
