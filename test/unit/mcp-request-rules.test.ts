import { describe, expect, it } from 'vitest';
import { jsonRpcAnswer } from '../../lib/mcp/json-rpc.js';
import { requestRefusal } from '../../lib/mcp/request-rules.js';

const toolCall = (id: number, args: unknown = { agent_id: 'a', reason: 'abc' }) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'observations', arguments: args },
});

describe('Function: requestRefusal (what the door refuses before the SDK)', () => {
  it('lets a single request and a bounded 2025-03-26 batch through', () => {
    expect(requestRefusal(toolCall(1), '2025-11-25')).toBeUndefined();
    expect(requestRefusal([toolCall(1), toolCall(2), toolCall(3), toolCall(4)], null)).toBeUndefined();
    expect(requestRefusal([toolCall(1), { jsonrpc: '2.0', id: 2, method: 'tools/list' }], '2025-03-26')).toBeUndefined();
  });

  it.each([
    [
      'a batch in 2025-06-18',
      [toolCall(1)],
      '2025-06-18',
      400,
      'JSON-RPC batches are not part of MCP protocol `2025-06-18`; send one request per HTTP request.',
    ],
    [
      'a batch in 2026-07-28',
      [toolCall(1)],
      '2026-07-28',
      400,
      'JSON-RPC batches are not part of MCP protocol `2026-07-28`; send one request per HTTP request.',
    ],
    [
      'five tool calls',
      [1, 2, 3, 4, 5].map((i) => toolCall(i)),
      null,
      400,
      'A batch may carry at most 4 tools/call; this one has 5. Nothing in it was run: send the others in further requests.',
    ],
    [
      'three tool calls and two reads of the view (each as large as a tool result)',
      [
        ...[1, 2, 3].map((i) => toolCall(i)),
        ...[4, 5].map((id) => ({
          jsonrpc: '2.0',
          id,
          method: 'resources/read',
          params: { uri: 'ui://endpoint-read-service/view.html' },
        })),
      ],
      null,
      400,
      'A batch may carry at most 4 tools/call and resources/read; this one has 5. Nothing in it was run: send the others in further requests.',
    ],
    [
      'nine messages',
      Array.from({ length: 9 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' })),
      null,
      400,
      'A batch may carry at most 8 messages; this one has 9. Nothing in it was run.',
    ],
    [
      'arguments that are a string',
      toolCall(7, 'everything'),
      '2025-11-25',
      200,
      'The arguments of tools/call must be a JSON object of named values, such as {"agent_id": "…", "reason": "…"}; got a string.',
    ],
    [
      'arguments that are an array',
      toolCall(7, [1]),
      null,
      200,
      'The arguments of tools/call must be a JSON object of named values, such as {"agent_id": "…", "reason": "…"}; got an array.',
    ],
  ])('refuses %s with one sentence', async (_what, body, version, status, message) => {
    const res = await jsonRpcAnswer(requestRefusal(body, version)!, body);

    expect(res.status).toBe(status);
    expect((await res.json()) as unknown).toMatchObject({ jsonrpc: '2.0', error: { message } });
  });
});
