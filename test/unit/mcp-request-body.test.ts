import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OBSERVATION_BOUNDS } from '../../lib/contract/schemas.js';
import { jsonRpcAnswer } from '../../lib/mcp/json-rpc.js';
import { MAX_BATCH_MESSAGES, MAX_JSON_DEPTH, MAX_REQUEST_BODY_BYTES, MAX_TOOL_CALLS_PER_REQUEST } from '../../lib/mcp/limits.js';
import { eventBodyBytes, nestsDeeperThan, oversizeRefusal, parseRequestBody } from '../../lib/mcp/request-body.js';
import { requestRefusal } from '../../lib/mcp/request-rules.js';

/** JSON as a client that escapes every character outside printable ASCII writes it: the costliest legal encoding. */
const escapedJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Depth of parsed JSON, the obvious recursive way: the reference the scan is checked against. */
const depthOf = (value: unknown): number =>
  value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;

/**
 * The largest request the door must read: a 2025-03-26 batch of MAX_BATCH_MESSAGES messages, as
 * many of them tool calls as a batch may carry, each argument at its bound in characters that
 * escape to the most bytes (astral characters in agent_id, control characters in the reason), and
 * the other messages tools/list with a progress token.
 */
function largestLegalBatch(): string {
  const { agentId, reason, ticketNumber, minutes, limit } = OBSERVATION_BOUNDS;
  const call = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'observations',
      arguments: {
        agent_id: '😀'.repeat(agentId.max),
        reason: `${'\u0001'.repeat(reason.max - 3)}why`,
        minutes: minutes.max,
        limit: limit.max,
        ticket: { number: `I${'9'.repeat(ticketNumber.max - 1)}`, system: 'servicenow' },
      },
      _meta: { progressToken: `progress-${id}-${'x'.repeat(64)}` },
    },
  });
  const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: { progressToken: `progress-${id}` } } });
  const messages = Array.from({ length: MAX_BATCH_MESSAGES }, (_, i) => (i < MAX_TOOL_CALLS_PER_REQUEST ? call(i + 1) : list(i + 1)));
  return escapedJson(messages);
}

describe('Function: oversizeRefusal (the size bound)', () => {
  it(`reads the largest legal batch, which needs a small part of the ${MAX_REQUEST_BODY_BYTES / 1024} KiB bound`, () => {
    const batch = largestLegalBatch();
    const bytes = Buffer.byteLength(batch);
    const read = parseRequestBody(batch);

    expect(oversizeRefusal(bytes)).toBeUndefined();
    expect('parsed' in read && requestRefusal(read.parsed, null)).toBeUndefined();
    expect(bytes).toBe(20_061);
    expect(bytes).toBeLessThan(MAX_REQUEST_BODY_BYTES / 6);
  });

  it('refuses one byte past the bound with a 413 that says both sizes', async () => {
    const res = await jsonRpcAnswer(oversizeRefusal(MAX_REQUEST_BODY_BYTES + 1)!, undefined);

    expect(oversizeRefusal(MAX_REQUEST_BODY_BYTES)).toBeUndefined();
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'The request body has 131,073 bytes, and this MCP server reads at most 131,072 (128 KiB): none of it was read.',
      },
    });
  });

  it('measures a base64 body by its decoded size, without decoding it', () => {
    for (const raw of ['', 'a', 'ab', 'abc', 'abcd', '😀 é'.repeat(50)]) {
      const encoded = Buffer.from(raw).toString('base64');
      expect(eventBodyBytes(encoded, true)).toBe(Buffer.byteLength(raw));
    }
    expect(eventBodyBytes('é', false)).toBe(2);
    expect(eventBodyBytes(null, false)).toBe(0);
  });
});

describe('Function: nestsDeeperThan (the depth bound, without a stack)', () => {
  it('counts only brackets outside strings, escaped quotes included', () => {
    expect(nestsDeeperThan('{"a": "[[[[[[", "b": "\\"[[[[["}', 1)).toBe(false);
    expect(nestsDeeperThan('[[1]]', 1)).toBe(true);
    expect(nestsDeeperThan(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`, MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(`${'['.repeat(MAX_JSON_DEPTH + 1)}`, MAX_JSON_DEPTH)).toBe(true);
  });

  it('agrees with the recursive depth of any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 7 }), (value, max) => {
        expect(nestsDeeperThan(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
      { numRuns: 500 },
    );
  });
});

describe('Function: parseRequestBody (a JSON-RPC parse error in one sentence)', () => {
  it.each([
    [
      'arrays nested past the bound',
      `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`,
      'The request body nests arrays and objects more than 32 deep, which no MCP message needs: it was not parsed.',
    ],
    [
      'objects nested past the bound',
      `${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`,
      'The request body nests arrays and objects more than 32 deep, which no MCP message needs: it was not parsed.',
    ],
    ['an empty body', '  ', 'The request body is empty: send one JSON-RPC message as JSON.'],
    [
      'text that is not JSON',
      '{"jsonrpc": "2.0", secret',
      'The request body is not valid JSON: send one JSON-RPC message (or, in protocol 2025-03-26, a batch of them) as JSON.',
    ],
  ])('refuses %s with a 400 that repeats nothing of the body', async (_what, body, message) => {
    const read = parseRequestBody(body);
    const res = 'refusal' in read ? await jsonRpcAnswer(read.refusal, undefined) : undefined;

    expect(res?.status).toBe(400);
    expect(await res?.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message } });
  });

  it('parses a body at the depth bound', () => {
    const body = `${'['.repeat(MAX_JSON_DEPTH)}1${']'.repeat(MAX_JSON_DEPTH)}`;

    expect(parseRequestBody(body)).toEqual({ parsed: JSON.parse(body) });
  });
});
