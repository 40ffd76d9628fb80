import type { ServerContext } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { brokerSecret } from '../../lib/mcp/broker-secret.js';
import { type RequestStates, requestStates } from '../../lib/mcp/request-state.js';

/**
 * The `requestState` of the observations tool's forms (lib/mcp/request-state.ts): the SDK's HMAC
 * codec with a key derived from the broker's client secret. Each instance is made afresh from the
 * MCP function's broker secret, as a new instance of the function makes its own at init: a state
 * one instance minted must verify at another with the same secret, and nothing else may.
 */

const SECRET = 'the-broker-client-secret-of-this-deployment';

/** The request states of an instance whose broker secret (BROKER_CLIENT_SECRET) is `secret`. */
async function instance(secret = SECRET): Promise<RequestStates> {
  return requestStates(brokerSecret({ brokerSecret: { secret }, region: 'us-east-1' }));
}

/** The SDK's request context as the door builds it: the caller in authInfo, the method of the request. */
function contextOf(subject: string, tenantId = 'globex', method = 'tools/call'): ServerContext {
  return {
    mcpReq: { id: 1, method, signal: new AbortController().signal },
    http: { authInfo: { token: 't', clientId: subject, scopes: [], extra: { caller: { tenantId, subject } } } },
  } as unknown as ServerContext;
}

const PAYLOAD = { v: 1, args: 'digest', round: 1, asked: ['ticket'], ticketRequired: true, given: {} };

afterEach(() => {
  vi.useRealTimers();
});

describe('Module: request-state (the signed requestState of a form)', () => {
  it('verifies at another instance with the same broker secret what one instance minted, and gives back its payload', async () => {
    const state = await (await instance()).mint(PAYLOAD, contextOf('alice'), AbortSignal.timeout(5_000));

    const payload = await (await instance()).verify(state, contextOf('alice'));

    expect(state).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(payload).toEqual(PAYLOAD);
  });

  it('refuses a state minted under another broker secret (a rotated one)', async () => {
    const state = await (await instance('a-previous-secret-the-issuer-no-longer-has')).mint(
      PAYLOAD,
      contextOf('alice'),
      AbortSignal.timeout(5_000),
    );

    await expect((await instance()).verify(state, contextOf('alice'))).rejects.toThrow('mac');
  });

  it('refuses an altered payload, a flipped MAC and garbage', async () => {
    const codec = await instance();
    const state = await codec.mint(PAYLOAD, contextOf('alice'), AbortSignal.timeout(5_000));
    const [version, body, mac] = state.split('.') as [string, string, string];
    const envelope = JSON.parse(Buffer.from(body, 'base64url').toString()) as { p: typeof PAYLOAD };
    envelope.p.ticketRequired = false;
    const altered = `${version}.${Buffer.from(JSON.stringify(envelope)).toString('base64url')}.${mac}`;
    const flipped = `${version}.${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;

    await expect(codec.verify(altered, contextOf('alice'))).rejects.toThrow('mac');
    await expect(codec.verify(flipped, contextOf('alice'))).rejects.toThrow('mac');
    await expect(codec.verify('v1.e30.AAAA', contextOf('alice'))).rejects.toThrow();
    await expect(codec.verify('not a state', contextOf('alice'))).rejects.toThrow('malformed');
  });

  it("refuses another user's state, another tenant's, and one presented with another method", async () => {
    const codec = await instance();
    const state = await codec.mint(PAYLOAD, contextOf('alice'), AbortSignal.timeout(5_000));

    await expect(codec.verify(state, contextOf('bob'))).rejects.toThrow('bind');
    await expect(codec.verify(state, contextOf('alice', 'acme'))).rejects.toThrow('bind');
    await expect(codec.verify(state, contextOf('alice', 'globex', 'prompts/get'))).rejects.toThrow('bind');
  });

  it('refuses a state after its 600 s, and takes it just before', async () => {
    const codec = await instance();
    vi.useFakeTimers({ toFake: ['Date'] });
    const minted = Date.now();
    const state = await codec.mint(PAYLOAD, contextOf('alice'), AbortSignal.timeout(5_000));

    vi.setSystemTime(minted + 599_000);
    await expect(codec.verify(state, contextOf('alice'))).resolves.toEqual(PAYLOAD);
    vi.setSystemTime(minted + 602_000);
    await expect(codec.verify(state, contextOf('alice'))).rejects.toThrow('expired');
  });

  it('mints nothing for a request the door passed no caller with', async () => {
    const codec = await instance();
    const anonymous = { mcpReq: { id: 1, method: 'tools/call', signal: new AbortController().signal } } as unknown as ServerContext;

    await expect(codec.mint(PAYLOAD, anonymous, AbortSignal.timeout(5_000))).rejects.toThrow('no caller to bind the request state to');
  });
});
