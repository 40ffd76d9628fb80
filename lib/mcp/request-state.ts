import { hkdfSync } from 'node:crypto';
import { createRequestStateCodec, type RequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import type { BrokerSecret } from './broker-secret.js';

/**
 * The `requestState` of a multi round-trip tool call (MCP 2026-07-28): what the server needs to
 * know on the retry, held by the client in between, since no instance keeps anything. The client
 * may change it at will, so it is the SDK's HMAC-SHA256 codec (`createRequestStateCodec`): signed,
 * bound to the caller (tenant and subject) and the method, valid for REQUEST_STATE_TTL_SECONDS,
 * and verified in the server's `requestState.verify` hook before the tool runs; a state that fails
 * is refused with the SDK's `-32602` ("Invalid or expired requestState") and the tool never runs.
 * Signed, not encrypted: the client can read what it carries (nothing it did not send or see).
 *
 * Its key must be the same on every instance that may get the retry: it is derived (HKDF-SHA256,
 * an info string of its own) from the broker's client secret, which every instance of the MCP
 * function already holds, so it needs no secret of its own and rotates with that secret (a state
 * minted under the old one is then refused, and the client calls again).
 */

/** How long the person has to answer a form: after that the retry is refused, and a new call asks again. */
const REQUEST_STATE_TTL_SECONDS = 600;

/** Separates this key from any other use of the broker secret. */
const KEY_INFO = 'endpoint-read-service mcp requestState v1';

/** The signed `requestState` of one MCP function, keyed by its broker secret. */
export interface RequestStates {
  /** The signed `requestState` for `payload`, bound to this request's caller and method. */
  mint(payload: unknown, ctx: ServerContext, signal: AbortSignal): Promise<string>;
  /**
   * The server's `requestState.verify` hook: the payload of a state this service minted for this
   * caller and method, unexpired; throws otherwise (the SDK then refuses the request).
   */
  verify(state: string, ctx: ServerContext): Promise<unknown>;
}

/** The caller a state is bound to: the door puts it in the SDK's authInfo (lib/mcp/server.ts). */
function bindingOf(ctx: ServerContext): string {
  const caller = ctx.http?.authInfo?.extra?.caller as { tenantId?: unknown; subject?: unknown } | undefined;
  if (typeof caller?.tenantId !== 'string' || typeof caller.subject !== 'string') throw new Error('no caller to bind the request state to');
  return JSON.stringify([ctx.mcpReq.method, caller.tenantId, caller.subject]);
}

/** The request states signed with a key derived from `secret` (one codec per secret: made again when it changes). */
export function requestStates(secret: Pick<BrokerSecret, 'read'>): RequestStates {
  let current: { secret: string; codec: RequestStateCodec } | undefined;
  const codec = async (signal: AbortSignal): Promise<RequestStateCodec> => {
    const value = await secret.read(signal);
    if (current?.secret !== value) {
      const key = new Uint8Array(hkdfSync('sha256', value, '', KEY_INFO, 32));
      current = { secret: value, codec: createRequestStateCodec({ key, ttlSeconds: REQUEST_STATE_TTL_SECONDS, bind: bindingOf }) };
    }
    return current.codec;
  };
  return {
    mint: async (payload, ctx, signal) => (await codec(signal)).mint(payload, ctx),
    verify: async (state, ctx) => (await codec(AbortSignal.any([ctx.mcpReq.signal, AbortSignal.timeout(5_000)]))).verify(state, ctx),
  };
}
