import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import middy from '@middy/core';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  collectStreaming,
  INVENTORY_TIMEOUT_MS,
  invokeStreaming,
  isStreamingHandler,
  type StreamingHandler,
  streamingContext,
} from '../../infra/local/streaming.js';
import { testContext } from '../helpers/events.js';

/** A middy streaming handler, as the service writes them, answering with `body`. */
function streamingHandler(
  answer: () => Promise<{ statusCode: number; headers?: Record<string, string>; body: string | Readable }>,
): StreamingHandler {
  return middy({ streamifyResponse: true }).handler(answer) as unknown as StreamingHandler;
}

describe("Module: infra/local/streaming (a stand-in for the Lambda runtime's response streaming)", () => {
  it('marks a middy streamifyResponse handler as streaming, and a plain one not', () => {
    expect(isStreamingHandler(streamingHandler(async () => ({ statusCode: 200, body: '' })))).toBe(true);
    expect(isStreamingHandler(middy().handler(async () => ({ statusCode: 200 })))).toBe(false);
  });

  it('reads the status and headers from the prelude middy writes, and the body after its 8 NUL bytes, chunk by chunk', async () => {
    const handler = streamingHandler(async () => ({
      statusCode: 201,
      headers: { 'Content-Type': 'application/json' },
      body: Readable.from(['[1,', '2,', '3]']),
    }));

    const answer = await collectStreaming(handler, {}, testContext());

    expect(answer.statusCode).toBe(201);
    expect(answer.headers).toEqual({ 'Content-Type': 'application/json' });
    expect(answer.body.toString()).toBe('[1,2,3]');
    expect(answer.chunks.map((c) => c.bytes)).toEqual([3, 2, 2]); // as written: '[1,', '2,', '3]'
    expect(answer.error).toBeUndefined();
  });

  it('sends the prelude of an answer without a body', async () => {
    const answer = await collectStreaming(
      streamingHandler(async () => ({ statusCode: 204, body: '' })),
      {},
      testContext(),
    );

    expect(answer.statusCode).toBe(204);
    expect(answer.body.length).toBe(0);
  });

  it('keeps what was sent and the error when the body fails after the prelude, as the runtime ends the stream with error trailers', async () => {
    const failing = new Readable({ read() {} });
    const handler = streamingHandler(async () => {
      setTimeout(() => {
        failing.push('[1,');
        setTimeout(() => failing.destroy(new Error('the store failed')), 10);
      }, 10);
      return { statusCode: 200, body: failing };
    });

    const answer = await collectStreaming(handler, {}, testContext());

    expect(answer.statusCode).toBe(200);
    expect(answer.body.toString()).toBe('[1,');
    expect(answer.error).toMatchObject({ message: 'the store failed' });
  });

  it('stops the function when the response stream is destroyed (the client went away)', async () => {
    let read = 0;
    const endless = new Readable({
      read() {
        read += 1;
        this.push('x'.repeat(1024));
      },
    });
    const handler = streamingHandler(async () => ({ statusCode: 200, body: endless }));
    const controller = new AbortController();

    const invocation = invokeStreaming(
      handler,
      {},
      testContext(),
      {
        prelude: () => undefined,
        chunk: (_c, done) => {
          if (read > 50) controller.abort();
          done();
        },
      },
      controller.signal,
    );

    await expect(invocation).rejects.toMatchObject({ name: 'StreamedInvocationError', afterPrelude: true });
    expect(endless.destroyed).toBe(true);
  });

  it("gives a streamed invocation the inventory function's whole timeout (serverless.yml), not API Gateway's 29 s", async () => {
    // CloudFormation's short tags (!Ref, !Sub) are not YAML's: read as plain values, quietly.
    const template = parse(readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8'), { logLevel: 'error' }) as {
      functions: { inventory: { timeout?: number } };
    };

    expect(INVENTORY_TIMEOUT_MS).toBe((template.functions.inventory.timeout ?? 0) * 1000);
    expect(streamingContext('inventory', INVENTORY_TIMEOUT_MS).getRemainingTimeInMillis()).toBeGreaterThan(29_000);
  });
});
