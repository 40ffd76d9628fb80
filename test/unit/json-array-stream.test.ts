import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { summarizeAgent } from '../../lib/inventory/merge.js';
import { type ContentCoding, jsonArrayBody, responseCoding, StreamedResponseTooLargeError } from '../../lib/json-array-stream.js';
import { realisticAgents } from '../../local/generator.js';

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

/** What a client makes of the bytes it received: the parsed array, or the error its decoder or parser raises. */
function parseAsClient(bytes: Buffer, coding: ContentCoding): unknown {
  const text = coding === 'br' ? brotliDecompressSync(bytes) : coding === 'gzip' ? gunzipSync(bytes) : bytes;
  return JSON.parse(text.toString('utf8'));
}

const CODINGS: ContentCoding[] = ['identity', 'gzip', 'br'];

describe('Function: responseCoding (negotiator)', () => {
  it.each([
    // The client names both: the higher q-value wins, br when they are equal.
    ['gzip, deflate, br', 'br'],
    ['br, gzip', 'br'],
    ['gzip;q=1, br;q=1', 'br'],
    ['br;q=1, gzip;q=0.8', 'br'],
    ['gzip, br;q=0.9', 'gzip'],
    ['gzip;q=0.5, br;q=0.4', 'gzip'],
    ['BR;Q=0.5, GZIP;Q=0.5', 'br'],
    ['br, x-gzip', 'br'],
    // br named alone, or gzip refused.
    ['br', 'br'],
    ['br, deflate', 'br'],
    ['br;q=0.1, gzip;q=0', 'br'],
    ['br, *;q=0', 'br'],
    // gzip only: gzip, as before br was offered; `*` stands for gzip, never for br.
    ['gzip', 'gzip'],
    ['*', 'gzip'],
    ['br;q=0, *', 'gzip'],
    ['identity, *;q=0.5', 'gzip'],
    ['GZIP;Q=0.001', 'gzip'],
    ['gzip;q=0.001', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip;q=0, x-gzip', 'gzip'],
    ['br;q=nonsense, gzip', 'gzip'],
    // Neither.
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    ['deflate', 'identity'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['x-gzip;q=0, *', 'identity'],
    ['gzip;q=0, *', 'identity'],
    ['*, gzip;q=0', 'identity'],
    ['gzip;q=0.0, *;q=1', 'identity'],
    ['*;q=0', 'identity'],
    ['gzip;q=nonsense', 'identity'],
  ] as const)('Accept-Encoding %j is answered in %s', (header, expected) => {
    expect(responseCoding(header)).toBe(expected);
  });
});

describe('Function: jsonArrayBody', () => {
  it.each(CODINGS)('writes the elements of every batch, in the order given, as one JSON array (%s)', async (coding) => {
    const list = batches(5_000, 700);

    const { bytes, error } = await receive(jsonArrayBody(from(list), { coding }));

    expect(error).toBeUndefined();
    expect(parseAsClient(bytes, coding)).toEqual(list.flat().map((e) => JSON.parse(e)));
  });

  it.each(CODINGS)('writes [] for no elements, and skips empty batches (%s)', async (coding) => {
    expect(parseAsClient((await receive(jsonArrayBody(from([]), { coding }))).bytes, coding)).toEqual([]);
    expect(parseAsClient((await receive(jsonArrayBody(from([[], ['1'], [], ['2', '3'], []]), { coding }))).bytes, coding)).toEqual([
      1, 2, 3,
    ]);
  });

  it.each(CODINGS)(
    'ends a body whose source fails after the first batch with an error, and what arrived never parses as an array (%s)',
    async (coding) => {
      const list = batches(6_000, 1_000);

      const { bytes, error } = await receive(jsonArrayBody(from(list, 3), { coding }));

      expect(error?.message).toBe('the store failed');
      expect(bytes.length).toBeGreaterThan(0);
      // A client reading it gets an error from its decoder or parser (JSON without its `]`, a compressed stream without its end), never a shorter list.
      expect(() => parseAsClient(bytes, coding)).toThrow(coding === 'identity' ? /JSON/ : /unexpected end of file/);
    },
  );

  it.each(CODINGS)('stops before the byte that would pass the limit, and what passed never parses as an array (%s)', async (coding) => {
    const list = batches(20_000, 500, 100);
    // Half of what the whole answer takes in this coding.
    const limitBytes = Math.floor((await receive(jsonArrayBody(from(list), { coding }))).bytes.length / 2);

    const { bytes, error } = await receive(jsonArrayBody(from(list), { coding, limitBytes }));

    expect(error).toBeInstanceOf(StreamedResponseTooLargeError);
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.length).toBeLessThanOrEqual(limitBytes);
    expect(() => parseAsClient(bytes, coding)).toThrow();
  });

  it("compresses a realistic tenant's answer, streamed page by page, at least 8% smaller with br than with gzip", async () => {
    const now = new Date('2026-11-27T12:00:00Z');
    const summaries = [...realisticAgents('br-tenant', 10_000, { now })].map((a) => {
      const hello = { agent_id: a.agent_id, hostname: a.hostname, os: a.os, arch: a.arch, version: a.version };
      const connection = a.connection ? { ...hello, state: a.connection.state, last_heartbeat: a.last_heartbeat ?? undefined } : undefined;
      const durable =
        a.durable === false ? undefined : { ...hello, client_id: a.client_id ?? undefined, enrolled_at: a.enrolled_at ?? undefined };
      return JSON.stringify(summarizeAgent(durable, connection, { now, onlineGraceSeconds: 120 }));
    });
    // Query pages of about 2,000 realistic agents.
    const pages = Array.from({ length: 5 }, (_, i) => summaries.slice(i * 2_000, (i + 1) * 2_000));

    const gzip = await receive(jsonArrayBody(from(pages), { coding: 'gzip' }));
    const br = await receive(jsonArrayBody(from(pages), { coding: 'br' }));

    expect(parseAsClient(br.bytes, 'br')).toEqual(parseAsClient(gzip.bytes, 'gzip'));
    expect(br.bytes.length / gzip.bytes.length).toBeLessThan(0.92);
  });

  it('sends an answer of exactly the limit', async () => {
    const list = [['"abc"', '"def"']];

    const { bytes, error } = await receive(
      jsonArrayBody(from(list), { coding: 'identity', limitBytes: Buffer.byteLength('["abc","def"]') }),
    );

    expect(error).toBeUndefined();
    expect(JSON.parse(bytes.toString())).toEqual(['abc', 'def']);
  });

  it.each(['gzip', 'br'] as const)(
    'stops reading its source after a few batches while the client does not read (memory stays bounded; %s)',
    async (coding) => {
      let pulled = 0;
      // Random hex, which neither coding shrinks much more than it shrinks a real inventory (brotli finds the
      // long-range patterns of a generator's sequence), so a batch fills the small output buffers as a page does.
      const hex = (length: number): string => randomBytes(length / 2).toString('hex');
      async function* counting(): AsyncGenerator<string[]> {
        for (const batch of Array.from({ length: 50 }, () => Array.from({ length: 1_000 }, () => JSON.stringify(hex(200))))) {
          pulled += 1;
          yield batch;
        }
      }

      const body = jsonArrayBody(counting(), { coding });
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
    },
  );

  it.each(['gzip', 'br'] as const)(
    "sends a batch's compressed bytes before it reads the next, as it sends a Query page before the next arrives (%s)",
    async (coding) => {
      // About one Query page of realistic summaries' size (2,000 of about 500 characters), then a second.
      const page = (n: number): string[] =>
        Array.from({ length: 2_000 }, (_, i) => JSON.stringify({ agent_id: `p${n}-${i}`, text: randomBytes(240).toString('hex') }));
      let firstBytes!: () => void;
      const arrived = new Promise<void>((resolve) => {
        firstBytes = resolve;
      });
      const order: string[] = [];
      async function* pages(): AsyncGenerator<string[]> {
        yield page(1);
        // The second page comes only once bytes of the first reached the client (or never: a 5 s bound fails the test).
        await Promise.race([arrived, new Promise((_, reject) => setTimeout(() => reject(new Error('nothing arrived')), 5_000))]);
        order.push('second page read');
        yield page(2);
      }
      const body = jsonArrayBody(pages(), { coding });
      body.once('data', () => {
        order.push('first bytes out');
        firstBytes();
      });

      const { bytes, error } = await receive(body);

      expect(error).toBeUndefined();
      expect(order).toEqual(['first bytes out', 'second page read']);
      expect(parseAsClient(bytes, coding)).toHaveLength(4_000);
    },
  );

  it('hands a large batch on in small pieces, so no stage holds a whole page of text', async () => {
    // One batch the size of a Query page's summaries (about 2 MB of JSON).
    const list = batches(5_000, 5_000);
    const sizes: number[] = [];
    const body = jsonArrayBody(from(list), { coding: 'identity' });
    body.on('data', (chunk: Buffer) => sizes.push(chunk.length));

    const { bytes, error } = await receive(body);

    expect(error).toBeUndefined();
    expect(parseAsClient(bytes, 'identity')).toHaveLength(5_000);
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
    const body = jsonArrayBody(source(), { coding: 'identity' });
    await new Promise<void>((resolve) => body.once('data', () => resolve()));

    body.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(closed).toBe(true);
    expect(pulled).toBeLessThan(10);
  });
});
