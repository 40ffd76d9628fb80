import type { ServerContext } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useEnvironment } from '../helpers/env.js';

/**
 * The `requestState` of the observations tool's forms (lib/mcp/request-state.ts): the SDK's HMAC
 * codec with a key derived from the broker's client secret. Each `useEnvironment` loads the
 * modules afresh, as a new instance of the MCP function starts: a state one instance minted must
 * verify at another with the same secret, and nothing else may.
 */

const SECRET = 'the-broker-client-secret-of-this-deployment';

type RequestState = typeof import('../../lib/mcp/request-state.js');

/** The module as an instance whose broker secret is `secret` loads it. */
async function instance(secret = SECRET): Promise<RequestState> {
  useEnvironment({ BROKER_CLIENT_SECRET: secret });
  return import('../../lib/mcp/request-state.js');
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
    const state = await (await instance()).mintRequestState(PAYLOAD, contextOf('alice'), AbortSignal.timeout(5_000));

    const payload = await (await instance()).verifyRequestState(state, contextOf('alice'));

    expect(state).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(payload).toEqual(PAYLOAD);
  });

  it('refuses a state minted under another broker secret (a rotated one)', async () => {
    const state = await (await instance('a-previous-secret-the-issuer-no-longer-has')).mintRequestState(
      PAYLOAD,
      contextOf('alice'),
      AbortSignal.timeout(5_000),
    );

    await expect((await instance()).verifyRequestState(state, contextOf('alice'))).rejects.toThrow('mac');
  });

  it('refuses an altered payload, a flipped MAC and garbage', async () => {
    const codec = await instance();
    const state = await codec.mintRequestState(PAYLOAD, contextOf('alice'), AbortSignal.timeout(5_000));
    const [version, body, mac] = state.split('.') as [string, string, string];
    const envelope = JSON.parse(Buffer.from(body, 'base64url').toString()) as { p: typeof PAYLOAD };
    envelope.p.ticketRequired = false;
    const altered = `${version}.${Buffer.from(JSON.stringify(envelope)).toString('base64url')}.${mac}`;
    const flipped = `${version}.${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;

    await expect(codec.verifyRequestState(altered, contextOf('alice'))).rejects.toThrow('mac');
    await expect(codec.verifyRequestState(flipped, contextOf('alice'))).rejects.toThrow('mac');
    await expect(codec.verifyRequestState('v1.e30.AAAA', contextOf('alice'))).rejects.toThrow();
    await expect(codec.verifyRequestState('not a state', contextOf('alice'))).rejects.toThrow('malformed');
  });

  it("refuses another user's state, another tenant's, and one presented with another method", async () => {
    const codec = await instance();
    const state = await codec.mintRequestState(PAYLOAD, contextOf('alice'), AbortSignal.timeout(5_000));

    await expect(codec.verifyRequestState(state, contextOf('bob'))).rejects.toThrow('bind');
    await expect(codec.verifyRequestState(state, contextOf('alice', 'acme'))).rejects.toThrow('bind');
    await expect(codec.verifyRequestState(state, contextOf('alice', 'globex', 'prompts/get'))).rejects.toThrow('bind');
  });

  it('refuses a state after its 600 s, and takes it just before', async () => {
    const codec = await instance();
    vi.useFakeTimers({ toFake: ['Date'] });
    const minted = Date.now();
    const state = await codec.mintRequestState(PAYLOAD, contextOf('alice'), AbortSignal.timeout(5_000));

    vi.setSystemTime(minted + 599_000);
    await expect(codec.verifyRequestState(state, contextOf('alice'))).resolves.toEqual(PAYLOAD);
    vi.setSystemTime(minted + 602_000);
    await expect(codec.verifyRequestState(state, contextOf('alice'))).rejects.toThrow('expired');
  });

  it('mints nothing for a request the door passed no caller with', async () => {
    const codec = await instance();
    const anonymous = { mcpReq: { id: 1, method: 'tools/call', signal: new AbortController().signal } } as unknown as ServerContext;

    await expect(codec.mintRequestState(PAYLOAD, anonymous, AbortSignal.timeout(5_000))).rejects.toThrow(
      'no caller to bind the request state to',
    );
  });
});
