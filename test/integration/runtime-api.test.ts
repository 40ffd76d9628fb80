import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type RuntimeApi, STREAM_CUT, startRuntimeApi } from '../../local/lambda/runtime-api.js';
import { RUNTIME_TOKEN } from '../../local/lambda/runtime-token.js';

/**
 * The local Lambda Runtime API spoken to as a runtime speaks to it, over raw HTTP, so that the order
 * in which it hears a runtime's two connections (the answer's POST, the loop's next GET) is the
 * test's to choose: a runtime whose stream breaks asks for its next event at once, and on a loaded
 * machine that ask may be heard before the cut POST's close, or after.
 */

const TOKEN = 'runtime-api-test-token';
const PATH = '/2018-06-01/runtime';
let api: RuntimeApi | undefined;
const open: ClientRequest[] = [];

afterEach(async () => {
  for (const req of open.splice(0)) req.destroy();
  await api?.close();
  api = undefined;
});

function call(method: string, path: string, headers: Record<string, string> = {}): ClientRequest {
  const [host, port] = (api as RuntimeApi).address.split(':');
  const req = request({
    host,
    port: Number(port),
    method,
    path: `${PATH}${path}`,
    agent: false,
    headers: { [RUNTIME_TOKEN.header]: TOKEN, ...headers },
  });
  req.on('error', () => undefined);
  open.push(req);
  return req;
}

/** GET /invocation/next; resolves with its answer's request id once an event is handed over. */
function next(): Promise<string> {
  return new Promise((resolve) => {
    const req = call('GET', '/invocation/next');
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      resolve(String(res.headers['lambda-runtime-aws-request-id']));
    });
    req.end();
  });
}

/** Starts a streamed answer and writes its first bytes; the POST stays open. */
function streamAnswer(requestId: string): ClientRequest {
  const req = call('POST', `/invocation/${requestId}/response`, {
    'Lambda-Runtime-Function-Response-Mode': 'streaming',
    'Transfer-Encoding': 'chunked',
    'Content-Type': 'application/octet-stream',
  });
  req.write('the first bytes');
  return req;
}

async function streamInFlight() {
  api = await startRuntimeApi({ token: TOKEN });
  let asks = 0;
  api.onNext(() => {
    asks += 1;
  });
  const delivered = next();
  const invocation = {
    requestId: crypto.randomUUID(),
    event: {},
    deadlineMs: Date.now() + 60_000,
    functionArn: 'arn:aws:lambda:eu-west-1:000000000000:function:test',
  };
  const answer = api.invoke(invocation);
  expect(await delivered).toBe(invocation.requestId);
  const post = streamAnswer(invocation.requestId);
  const outcome = await answer;
  if (outcome.kind !== 'stream') throw new Error(`expected a stream, got ${outcome.kind}`);
  outcome.body.resume();
  return { outcome, post, asks: () => asks };
}

const settled = (promise: Promise<unknown>): Promise<boolean> =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 200))]);

describe('Local Runtime API: a runtime whose streamed answer is cut', () => {
  it('is known to have asked again when its next GET is heard before its cut POST closes (the instance is freed, not kept busy)', async () => {
    const { outcome, post, asks } = await streamInFlight();

    void next();
    await expect.poll(asks).toBe(2);
    post.destroy();

    expect(await outcome.ended).toEqual(STREAM_CUT);
    expect(await settled(outcome.nextAsked)).toBe(true);
  });

  it('is known to have asked again when its next GET is heard after its cut POST closed', async () => {
    const { outcome, post, asks } = await streamInFlight();

    post.destroy();
    expect(await outcome.ended).toEqual(STREAM_CUT);
    expect(await settled(outcome.nextAsked)).toBe(false);
    void next();
    await expect.poll(asks).toBe(2);

    expect(await settled(outcome.nextAsked)).toBe(true);
  });

  it('is never taken to have asked again while its runtime does not ask (a runtime that died with its stream)', async () => {
    const { outcome, post } = await streamInFlight();

    post.destroy();

    expect(await outcome.ended).toEqual(STREAM_CUT);
    expect(await settled(outcome.nextAsked)).toBe(false);
  });
});
