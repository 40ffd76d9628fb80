import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestStack } from '../helpers/stack.js';

/**
 * What the handlers log during real requests. The logger is built when its module first loads, so
 * this file turns logging on before it loads anything of the service (other files keep it SILENT).
 */
describe('E2E: logs of real requests', () => {
  let stack: TestStack;
  let get: (typeof import('../helpers/stack.js'))['get'];
  const lines: string[] = [];

  beforeAll(async () => {
    process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
    const helpers = await import('../helpers/stack.js');
    get = helpers.get;
    stack = await helpers.startTestStack({
      tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] }],
    });
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await stack?.stop();
  });

  it('never contain the bearer token or the reason text, and carry tenant, subject and the reason length', async () => {
    const token = await stack.token({ tenant: 'acme', subject: 'alice' });
    const reason = 'customer says the laptop is haunted';
    const headers = { Authorization: `Bearer ${token}`, 'X-Service-Reason': reason };

    await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=a-1`, headers);
    await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=unknown`, headers);
    await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=a-1`, { ...headers, Authorization: `Bearer ${token}x` });
    await get(`${stack.publicUrl}/api/agents`, headers);

    const entries = lines.join('').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
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
    for (const part of token.split('.').slice(1)) expect(text).not.toContain(part);
  });
});
