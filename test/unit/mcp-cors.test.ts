import { describe, expect, it } from 'vitest';
import { isAllowedOrigin } from '../../lib/mcp/cors.js';

describe('Function: isAllowedOrigin (the MCP door)', () => {
  const cfg = { publicUrl: 'http://localhost:4300', mcpAllowedOrigins: ['https://app.example'] };

  it.each([
    ['its public URL’s origin', 'http://localhost:4300', true],
    ['an origin MCP_ALLOWED_ORIGINS lists', 'https://app.example', true],
    ['the same port under another loopback name, which nothing lists', 'http://127.0.0.1:4300', false],
    ['[::1] on the same port, which nothing lists', 'http://[::1]:4300', false],
    ['another origin', 'https://evil.example', false],
    ['no origin', undefined, false],
  ] as const)('answers for %s (%s): admitted %s', (_what, origin, admitted) => {
    expect(isAllowedOrigin(origin, cfg)).toBe(admitted);
  });
});
