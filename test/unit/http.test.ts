import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_UNCOMPRESSED_BYTES, negotiatedJsonResponse } from '../../lib/http.js';

const agents = (n: number) => Array.from({ length: n }, (_, i) => ({ agent_id: `agent-${i}`, hostname: `host-${i}`.padEnd(200, '.') }));

describe('Function: negotiatedJsonResponse', () => {
  it('returns plain JSON for a small body, whatever the client accepts', () => {
    const result = negotiatedJsonResponse(200, [{ a: 1 }], 'gzip');

    expect(result).toEqual({
      statusCode: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', Vary: 'Accept-Encoding' },
      body: '[{"a":1}]',
    });
  });

  it('returns gzip, base64-encoded for API Gateway, when the client accepts it and the body is large', () => {
    const list = agents(2000);

    const result = negotiatedJsonResponse(200, list, 'br;q=1, gzip;q=0.8');

    expect(result.headers['Content-Encoding']).toBe('gzip');
    expect(result.isBase64Encoded).toBe(true);
    expect(JSON.parse(gunzipSync(Buffer.from(result.body, 'base64')).toString('utf8'))).toEqual(list);
    expect(result.body.length).toBeLessThan(JSON.stringify(list).length / 5);
  });

  it('returns plain JSON when the client refuses gzip with q=0 or names no encoding', () => {
    const list = agents(2000);

    expect(negotiatedJsonResponse(200, list, 'gzip;q=0').headers['Content-Encoding']).toBeUndefined();
    expect(negotiatedJsonResponse(200, list, undefined).body).toBe(JSON.stringify(list));
  });

  it('refuses with 406 naming the fix, never a cut list, when the body is over the Lambda limit and gzip is not accepted', () => {
    const list = agents(Math.ceil(MAX_UNCOMPRESSED_BYTES / 200) + 1000);

    expect(() => negotiatedJsonResponse(200, list, 'identity')).toThrow(
      expect.objectContaining({ statusCode: 406, message: expect.stringMatching(/send Accept-Encoding: gzip\.$/) }),
    );
    expect(negotiatedJsonResponse(200, list, 'gzip').body.length).toBeLessThan(MAX_UNCOMPRESSED_BYTES);
  });
});
