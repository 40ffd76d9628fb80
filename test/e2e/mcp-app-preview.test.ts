import { request } from 'node:http';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';

/**
 * The local MCP App preview host's own rules, over HTTP (what it draws is tested in a browser,
 * mcp-app.test.ts): it hands its page a token, so it answers a loopback host name only (a
 * DNS-rebound name is refused), GET only, with its parameters checked, and its page sends its MCP
 * calls from the door's own origin.
 */

let stack: SharedStack;

beforeAll(async () => {
  stack = await sharedStack('none');
});
afterAll(async () => {
  await stack?.release();
});

/** One request with the Host header given (fetch would not send a foreign one). */
function raw(path: string, host: string, method = 'GET'): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const { port } = new URL(stack.publicUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { Host: host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('E2E: the MCP App preview host (npm start only)', () => {
  it('serves its page to this machine, with a token for the MCP door minted by the local issuer and a strict policy', async () => {
    const { host } = new URL(stack.publicUrl);
    const res = await raw('/preview/observations?agent_id=ac-002&theme=dark', host);
    const settings = JSON.parse(/<script type="application\/json" id="preview-settings">(.*?)<\/script>/.exec(res.body)?.[1] ?? '{}');

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toMatch(
      /^default-src 'none'; script-src 'self' 'unsafe-inline'; .*connect-src 'self';.*frame-ancestors 'none'/,
    );
    expect(settings).toMatchObject({
      mcpUrl: `${stack.publicUrl}/api/mcp`,
      tool: 'observations',
      arguments: { agent_id: 'ac-002', reason: 'MCP App preview' },
      theme: 'dark',
      width: null,
      maxHeight: null,
    });
    expect(decodeJwt(settings.token)).toMatchObject({
      aud: stack.config.mcpAudience,
      iss: stack.config.jwtIssuer,
      tenant_id: 'acme',
      sub: 'preview-user@acme',
    });
  });

  it("takes MCP Inspector's panel as width and height: the view hears both in its host context", async () => {
    const res = await raw('/preview/list_endpoints?width=552&height=750', new URL(stack.publicUrl).host);
    const settings = JSON.parse(/<script type="application\/json" id="preview-settings">(.*?)<\/script>/.exec(res.body)?.[1] ?? '{}');

    expect(res.status).toBe(200);
    expect(settings).toMatchObject({ tool: 'list_endpoints', width: 552, maxHeight: 750 });
  });

  it("sends a loopback address other than the public URL to the public URL, so the page is on the door's own origin", async () => {
    const { port } = new URL(stack.publicUrl);
    const res = await raw('/preview/observations?agent_id=ac-002', `127.0.0.1:${port}`);

    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${stack.publicUrl}/preview/observations?agent_id=ac-002`);
  });

  it.each(['evil.example', 'attacker.example:80'])(
    'refuses a request for the host name %s (DNS rebinding) with 403, handing out nothing',
    async (host) => {
      const res = await raw('/preview/observations?agent_id=ac-002', host);

      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.body).toMatch(
        /^This local service answers only requests addressed to it by its own name \(Host: localhost:\d+\); this one names another host\./,
      );
      expect(res.body).not.toContain('token');
    },
  );

  it.each([
    ['/preview/observations?theme=blue', 400, 'theme must be light or dark.\n'],
    ['/preview/observations?width=10', 400, 'width must be a whole number of pixels from 280 to 2000.\n'],
    ['/preview/observations?height=100000', 400, 'height must be a whole number of pixels from 200 to 4000.\n'],
    ['/preview/observations?minutes=5.5', 400, 'minutes must be a whole number from 5 to 10080.\n'],
    ['/preview/elsewhere', 404, /^No such preview; try http:\/\/localhost:\d+\/preview\/observations\?agent_id=ac-002\.\n$/],
  ])('answers %s with %s and one sentence', async (path, status, sentence) => {
    const res = await raw(path, new URL(stack.publicUrl).host);

    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toMatch(sentence);
  });

  it('answers GET only', async () => {
    const res = await raw('/preview/observations', new URL(stack.publicUrl).host, 'POST');

    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.body).toMatch(/^This method is not served here\. \(request id: [0-9a-f-]{36}\)\n$/);
  });
});
