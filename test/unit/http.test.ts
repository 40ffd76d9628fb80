import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  acceptsGzip,
  failureBody,
  gzipJsonArray,
  LAMBDA_RESPONSE_LIMIT_BYTES,
  lambdaResponseBytes,
  negotiatedJsonArrayResponse,
  parseFailureBody,
  type JsonResult,
} from '../../lib/http.js';

const agents = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ agent_id: `agent-${i}`, hostname: `host-${i}`.padEnd(200, '.') }));
const options = { tooLarge: (bytes: number) => `too large: ${bytes} bytes` };
const respond = (parts: string[], acceptEncoding: string | undefined) => negotiatedJsonArrayResponse(200, parts, acceptEncoding, options);

/** A deterministic string of characters gzip cannot shrink much (93 printable ASCII, none escaped in JSON); made once, sliced. */
const NOISE = ((length: number): string => {
  let a = 1;
  const out: string[] = [];
  while (out.length < length) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const c = 32 + (((t ^ (t >>> 14)) >>> 0) % 95);
    if (c !== 34 && c !== 92) out.push(String.fromCharCode(c));
  }
  return out.join('');
})(7_000_000);
const noise = (length: number): string => NOISE.slice(0, length);

describe('Function: acceptsGzip', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['br;q=1, gzip;q=0.8', true],
    ['*', true],
    ['identity, *;q=0.5', true],
    ['GZIP;Q=0.001', true],
    ['x-gzip', true],
    [undefined, false],
    ['', false],
    ['identity', false],
    ['br, deflate', false],
    ['gzip;q=0', false],
    ['gzip;q=0, *', false],
    ['*, gzip;q=0', false],
    ['gzip;q=0.0, *;q=1', false],
    ['*;q=0', false],
    ['gzip;q=nonsense', false],
  ])('Accept-Encoding %j accepts gzip: %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe('Function: negotiatedJsonArrayResponse', () => {
  it('returns plain JSON for a small body, whatever the client accepts', async () => {
    const result = await respond(['{"a":1}'], 'gzip');

    expect(result).toEqual({
      statusCode: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', Vary: 'Accept-Encoding' },
      body: '[{"a":1}]',
    });
  });

  it('returns [] for no elements', async () => {
    expect((await respond([], 'gzip')).body).toBe('[]');
  });

  it('returns gzip, base64-encoded for API Gateway, when the client accepts it and the body is large', async () => {
    const list = agents(2000);

    const result = await respond(list, 'br;q=1, gzip;q=0.8');

    expect(result.headers['Content-Encoding']).toBe('gzip');
    expect(result.isBase64Encoded).toBe(true);
    expect(gunzipSync(Buffer.from(result.body, 'base64')).toString('utf8')).toBe(`[${list.join(',')}]`);
    expect(result.body.length).toBeLessThan(list.join(',').length / 5);
  });

  it('returns plain JSON when the client refuses gzip with q=0, even next to *, or names no encoding', async () => {
    const list = agents(2000);

    expect((await respond(list, 'gzip;q=0')).headers['Content-Encoding']).toBeUndefined();
    expect((await respond(list, 'gzip;q=0, *')).headers['Content-Encoding']).toBeUndefined();
    expect((await respond(list, undefined)).body).toBe(`[${list.join(',')}]`);
  });

  it('measures a response as Lambda does: the bytes of the whole serialized envelope, escapes included', () => {
    const plain: JsonResult = { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '["é\\""]' };
    const binary: JsonResult = { ...plain, body: 'H4sIAAAA', isBase64Encoded: true };

    expect(lambdaResponseBytes(plain)).toBe(Buffer.byteLength(JSON.stringify(plain)));
    expect(lambdaResponseBytes(binary)).toBe(Buffer.byteLength(JSON.stringify(binary)));
  });

  it('sends plain JSON whose envelope is exactly 6,291,456 bytes, and refuses one byte more with a 406 naming the fix', async () => {
    const overhead = lambdaResponseBytes((await respond([JSON.stringify('x'.repeat(10_000))], undefined))) - 10_000;
    const exact = [JSON.stringify('x'.repeat(LAMBDA_RESPONSE_LIMIT_BYTES - overhead))];
    const over = [JSON.stringify('x'.repeat(LAMBDA_RESPONSE_LIMIT_BYTES - overhead + 1))];

    const fits = await respond(exact, 'identity');

    expect(lambdaResponseBytes(fits)).toBe(LAMBDA_RESPONSE_LIMIT_BYTES);
    expect(fits.body).toBe(`[${exact[0]}]`);
    await expect(respond(over, 'identity')).rejects.toMatchObject({
      statusCode: 406,
      message: expect.stringMatching(/send Accept-Encoding: gzip\.$/),
    });
  });

  it('sends gzip up to the last base64 quantum under 6,291,456 bytes and answers 507, never a cut list, past it', async () => {
    // The longest noise string whose compressed envelope fits, found with the very measure the response uses.
    const gzipHeaders = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', Vary: 'Accept-Encoding', 'Content-Encoding': 'gzip' };
    const envelopeOf = async (length: number): Promise<number> => {
      const body = (await gzipJsonArray([JSON.stringify(noise(length))])).toString('base64');
      return lambdaResponseBytes({ statusCode: 200, headers: gzipHeaders, body, isBase64Encoded: true });
    };
    const guess = 6_000_000;
    let low = Math.floor((guess * LAMBDA_RESPONSE_LIMIT_BYTES) / (await envelopeOf(guess))) - 2_000;
    let high = low + 4_000;
    expect(await envelopeOf(low)).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    expect(await envelopeOf(high)).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if ((await envelopeOf(mid)) <= LAMBDA_RESPONSE_LIMIT_BYTES) low = mid;
      else high = mid;
    }

    const largest = await respond([JSON.stringify(noise(low))], 'gzip');
    const larger = await respond([JSON.stringify(noise(high))], 'gzip').catch((error: unknown) => error);

    expect(largest.headers['Content-Encoding']).toBe('gzip');
    expect(lambdaResponseBytes(largest)).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    // base64 grows in steps of 4 characters: the largest answer that fits is within one step of the limit.
    expect(lambdaResponseBytes(largest)).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES - 4);
    expect(larger).toMatchObject({ statusCode: 507 });
    expect(Number(/^too large: (\d+) bytes$/.exec((larger as Error).message)?.[1])).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);
  }, 60_000);
});

describe('Functions: failureBody, parseFailureBody', () => {
  it('reads back the sentence and the request id of every failure body', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }).filter((t) => !t.includes('(request id:')), fc.uuid(), (sentence, requestId) => {
        expect(parseFailureBody(failureBody(sentence, requestId))).toEqual({ sentence, requestId });
      }),
    );
  });

  it.each(['{"message":"Forbidden"}', '<html>Bad Gateway</html>', '', 'No request id here.'])('reads nothing from %j, which the service did not write', (body) => {
    expect(parseFailureBody(body)).toBeUndefined();
  });
});
