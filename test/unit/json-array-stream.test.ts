import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { JsonArrayStream, LAMBDA_RESPONSE_LIMIT_BYTES, lambdaResponseBytes, type JsonResult } from '../../lib/http.js';

interface Element {
  id: string;
  text: string;
}

const options = { tooLarge: (bytes: number) => `too large: ${bytes} bytes` };

/** Elements with ids `e-00000`…, each carrying `size` characters of text (repetitive: gzip shrinks them a lot). */
function elements(count: number, size = 400): Element[] {
  return Array.from({ length: count }, (_, i) => ({ id: `e-${String(i).padStart(5, '0')}`, text: `${i}`.padEnd(size, '.') }));
}

async function respond(list: Element[], acceptEncoding: string | undefined): Promise<JsonResult> {
  const stream = new JsonArrayStream({ acceptEncoding, keyOf: (e) => (e as Element).id });
  for (const e of list) stream.add(e.id, JSON.stringify(e));
  return stream.respond(200, options);
}

function bodyOf(result: JsonResult): Element[] {
  const text = result.isBase64Encoded ? gunzipSync(Buffer.from(result.body, 'base64')).toString('utf8') : result.body;
  return JSON.parse(text) as Element[];
}

const byId = (a: Element, b: Element): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

describe('Class: JsonArrayStream', () => {
  it('answers [] and small arrays as plain JSON', async () => {
    expect((await respond([], 'gzip')).body).toBe('[]');
    expect(await respond(elements(3), 'gzip')).toMatchObject({ statusCode: 200, body: JSON.stringify(elements(3)) });
  });

  it('compresses a large array written in order, element by element, to exactly its JSON', async () => {
    const list = elements(30_000);

    const result = await respond(list, 'gzip');

    expect(result.headers['Content-Encoding']).toBe('gzip');
    expect(gunzipSync(Buffer.from(result.body, 'base64')).toString('utf8')).toBe(JSON.stringify(list));
  });

  it('sorts when a key arrives out of order early, while every element is still kept', async () => {
    const list = elements(50);
    const shuffled = [list[3]!, list[0]!, ...list.slice(4), list[2]!, list[1]!];

    expect(bodyOf(await respond(shuffled, 'gzip'))).toEqual(list);
    expect(bodyOf(await respond(shuffled, undefined))).toEqual(list);
  });

  it('sorts when a key arrives out of order after more than 6 MiB were compressed and dropped, recovering them', async () => {
    const list = elements(20_000);
    const late = list.slice(0, 10);
    const rest = list.slice(10);
    expect(JSON.stringify(rest).length).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);

    const result = await respond([...rest, ...late.reverse()], 'gzip');

    expect(result.headers['Content-Encoding']).toBe('gzip');
    expect(bodyOf(result).map((e) => e.id)).toEqual([...list].sort(byId).map((e) => e.id));
    expect(bodyOf(result)).toEqual(list);
  });

  it('refuses a client without gzip past the limit: 406 when gzip would fit, naming the fix', async () => {
    const list = elements(20_000);

    await expect(respond(list, 'identity')).rejects.toMatchObject({ statusCode: 406, message: expect.stringMatching(/send Accept-Encoding: gzip\.$/) });
  });

  it('answers 507 when even the compressed array is over the limit, for gzip clients and others', async () => {
    // Text gzip cannot shrink: each element is distinct digits of a long pseudo-random run.
    let a = 7;
    const noisy = Array.from({ length: 12_000 }, (_, i) => {
      let text = '';
      while (text.length < 800) {
        a = (Math.imul(a, 1103515245) + 12345) >>> 0;
        text += (a >>> 8).toString(36);
      }
      return { id: `n-${String(i).padStart(5, '0')}`, text };
    });

    const gzip = await respond(noisy, 'gzip').catch((e: unknown) => e);
    const plain = await respond(noisy, undefined).catch((e: unknown) => e);

    expect(gzip).toMatchObject({ statusCode: 507 });
    expect(plain).toMatchObject({ statusCode: 507 });
    expect(Number(/(\d+) bytes$/.exec((gzip as Error).message)?.[1])).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);
  });

  it('keeps every success within the limit as Lambda measures it', async () => {
    const result = await respond(elements(40_000, 500), 'gzip');

    expect(lambdaResponseBytes(result)).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    expect(bodyOf(result)).toHaveLength(40_000);
  });
});
