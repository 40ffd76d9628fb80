import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptsGzip, jsonArrayBody, StreamedResponseTooLargeError } from '../../lib/json-array-stream.js';

/** Batches of serialized elements `{"id":"e-00000","text":"0....."}`, `size` characters of text each. */
function batches(count: number, perBatch: number, size = 400): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < count; i += perBatch) {
    out.push(
      Array.from({ length: Math.min(perBatch, count - i) }, (_, j) =>
        JSON.stringify({ id: `e-${String(i + j).padStart(6, '0')}`, text: `${i + j}`.padEnd(size, '.') }),
      ),
    );
  }
  return out;
}

async function* from(list: string[][], failAfter?: number): AsyncGenerator<string[]> {
  for (let i = 0; i < list.length; i++) {
    if (failAfter !== undefined && i === failAfter) throw new Error('the store failed');
    yield list[i]!;
  }
}

/** Everything a client receives from the body, and the error the transfer ended with, if any. */
async function receive(body: NodeJS.ReadableStream): Promise<{ bytes: Buffer; error?: Error }> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  try {
    await pipeline(body, sink);
    return { bytes: Buffer.concat(chunks) };
  } catch (error) {
    return { bytes: Buffer.concat(chunks), error: error as Error };
  }
}

/** What a client makes of the bytes it received: the parsed array, or the error its parser raises. */
function parseAsClient(bytes: Buffer, gzip: boolean): unknown {
  return JSON.parse((gzip ? gunzipSync(bytes) : bytes).toString('utf8'));
}

describe('Function: acceptsGzip (negotiator)', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['br;q=1, gzip;q=0.8', true],
    ['*', true],
    ['identity, *;q=0.5', true],
    ['GZIP;Q=0.001', true],
    ['gzip;q=0.001', true],
    ['x-gzip', true],
    ['gzip;q=0, x-gzip', true],
    [undefined, false],
    ['', false],
    ['identity', false],
    ['br, deflate', false],
    ['gzip;q=0', false],
    ['x-gzip;q=0, *', false],
    ['gzip;q=0, *', false],
    ['*, gzip;q=0', false],
    ['gzip;q=0.0, *;q=1', false],
    ['*;q=0', false],
    ['gzip;q=nonsense', false],
  ])('Accept-Encoding %j accepts gzip: %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe('Function: jsonArrayBody', () => {
  it.each([false, true])('writes the elements of every batch, in the order given, as one JSON array (gzip: %s)', async (gzip) => {
    const list = batches(5_000, 700);

    const { bytes, error } = await receive(jsonArrayBody(from(list), { gzip }));

    expect(error).toBeUndefined();
    expect(parseAsClient(bytes, gzip)).toEqual(list.flat().map((e) => JSON.parse(e)));
  });

  it.each([false, true])('writes [] for no elements, and skips empty batches (gzip: %s)', async (gzip) => {
    expect(parseAsClient((await receive(jsonArrayBody(from([]), { gzip }))).bytes, gzip)).toEqual([]);
    expect(parseAsClient((await receive(jsonArrayBody(from([[], ['1'], [], ['2', '3'], []]), { gzip }))).bytes, gzip)).toEqual([1, 2, 3]);
  });

  it.each([false, true])(
    'ends a body whose source fails after the first batch with an error, and what arrived never parses as an array (gzip: %s)',
    async (gzip) => {
      const list = batches(6_000, 1_000);

      const { bytes, error } = await receive(jsonArrayBody(from(list, 3), { gzip }));

      expect(error?.message).toBe('the store failed');
      expect(bytes.length).toBeGreaterThan(0);
      // A client reading it gets an error from its parser (JSON without its `]`, gzip without its trailer), never a shorter list.
      expect(() => parseAsClient(bytes, gzip)).toThrow(gzip ? /unexpected end of file/ : /JSON/);
    },
  );

  it.each([false, true])(
    'stops before the byte that would pass the limit, and what passed never parses as an array (gzip: %s)',
    async (gzip) => {
      const list = batches(20_000, 500, 100);
      const limitBytes = gzip ? 60_000 : 600_000;

      const { bytes, error } = await receive(jsonArrayBody(from(list), { gzip, limitBytes }));

      expect(error).toBeInstanceOf(StreamedResponseTooLargeError);
      expect(bytes.length).toBeGreaterThan(0);
      expect(bytes.length).toBeLessThanOrEqual(limitBytes);
      expect(() => parseAsClient(bytes, gzip)).toThrow();
    },
  );

  it('sends an answer of exactly the limit', async () => {
    const list = [['"abc"', '"def"']];

    const { bytes, error } = await receive(jsonArrayBody(from(list), { gzip: false, limitBytes: Buffer.byteLength('["abc","def"]') }));

    expect(error).toBeUndefined();
    expect(JSON.parse(bytes.toString())).toEqual(['abc', 'def']);
  });

  it('stops reading its source after a few batches while the client does not read (memory stays bounded)', async () => {
    let pulled = 0;
    // Text gzip shrinks about as much as a real inventory's (random hex), so a batch fills the small output buffers as a page does.
    let seed = 7;
    const hex = (length: number): string => {
      let out = '';
      while (out.length < length) {
        seed = (seed * 1_103_515_245 + 12_345) >>> 0;
        out += seed.toString(16);
      }
      return out.slice(0, length);
    };
    async function* counting(): AsyncGenerator<string[]> {
      for (const batch of Array.from({ length: 50 }, () => Array.from({ length: 1_000 }, () => JSON.stringify(hex(200))))) {
        pulled += 1;
        yield batch;
      }
    }

    const body = jsonArrayBody(counting(), { gzip: true });
    body.pause();
    body.read(0);
    // A few batches fill the stages' buffers (the compressor's among them), then reading stops: wait until it has.
    let seen = -1;
    for (let waited = 0; waited < 5_000 && pulled !== seen; waited += 300) {
      seen = pulled;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }

    expect(pulled).toBe(seen);
    expect(pulled).toBeGreaterThan(0);
    expect(pulled).toBeLessThanOrEqual(15);
    body.destroy();
  });

  it('hands a large batch on in small pieces, so no stage holds a whole page of text', async () => {
    // One batch the size of a Query page's summaries (about 2 MB of JSON).
    const list = batches(5_000, 5_000);
    const sizes: number[] = [];
    const body = jsonArrayBody(from(list), { gzip: false });
    body.on('data', (chunk: Buffer) => sizes.push(chunk.length));

    const { bytes, error } = await receive(body);

    expect(error).toBeUndefined();
    expect(parseAsClient(bytes, false)).toHaveLength(5_000);
    expect(sizes.length).toBeGreaterThan(50);
    // Below V8's large-object size (128 KiB): a piece is never a page's text joined whole.
    expect(Math.max(...sizes)).toBeLessThan(64 * 1024);
  });

  it('stops reading its source when the client goes away', async () => {
    let pulled = 0;
    let closed = false;
    async function* source(): AsyncGenerator<string[]> {
      try {
        for (const batch of batches(50_000, 1_000)) {
          pulled += 1;
          yield batch;
        }
      } finally {
        closed = true;
      }
    }
    const body = jsonArrayBody(source(), { gzip: false });
    await new Promise<void>((resolve) => body.once('data', () => resolve()));

    body.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(closed).toBe(true);
    expect(pulled).toBeLessThan(10);
  });
});
