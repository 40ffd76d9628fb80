import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { createGzip, constants as zlib } from 'node:zlib';
// Only negotiator's Accept-Encoding part: its media-type, language and charset parsers would add
// 4 KB to the inventory bundle, which is held under 400 KiB (docs/performance.md).
import preferredEncodings from 'negotiator/lib/encoding.js';

/**
 * A JSON array answered as a stream (Lambda response streaming): written element batch by batch as
 * they are read, gzip-compressed by the function for clients that accept it (API Gateway does not
 * compress a streamed answer), never held whole.
 */

/**
 * Lambda's limit on a streamed response: 200 MB of payload. Counted as 200,000,000 bytes (the
 * smaller reading of "MB"), so an answer below it is below it whichever AWS means.
 */
export const STREAMED_RESPONSE_LIMIT_BYTES = 200_000_000;

/**
 * The gzip level, chosen by measurement (`npm run bench` prints the sizes and times of levels 1,
 * 4, 6 and 9 on a realistic tenant; docs/performance.md): level 6 is a few percent larger than
 * level 9 at about half its CPU; level 1 is about 18% larger, which past Lambda's first 6 MB
 * (then 2 MB/s) costs more time on the wire than it saves in CPU.
 */
export const GZIP_LEVEL = 6;

/** Compressed output handed on at a time: large enough to keep the per-write cost small. */
const GZIP_CHUNK_BYTES = 64 * 1024;

/**
 * Text handed to the stream at a time, in UTF-16 code units: well below V8's large-object size
 * (128 KiB), so each stage holds a small piece rather than a page's text, and neither the text nor
 * its UTF-8 Buffer is a fresh memory mapping whose every page faults on first touch.
 */
const TEXT_PIECE_CHARS = 16 * 1024;

/** A streamed success: the status and headers of the prelude, then the body. */
export interface StreamedResult {
  statusCode: number;
  headers: Record<string, string>;
  body: Readable;
}

/**
 * Whether the client accepts gzip (RFC 9110 §12.5.3), as `negotiator` (the parser middy's content
 * negotiation uses) reads `Accept-Encoding`: an explicit `gzip` decides by its q-value whatever
 * `*` says (so `gzip;q=0, *` refuses gzip); without one, `*` decides; with neither, no gzip; a
 * q-value that is not a number refuses.
 */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  // RFC 9110 §8.4.1.3: x-gzip is gzip; negotiator knows only the one name.
  const header = acceptEncoding.replace(/(^|[\s,])x-gzip(?=\s*(;|,|$))/gi, '$1gzip');
  return preferredEncodings(header, ['gzip']).length > 0;
}

/**
 * The streamed answer would pass Lambda's streamed-response limit: the body stops before the byte
 * that would cross it (a broken transfer for the client, never a shorter valid array).
 */
export class StreamedResponseTooLargeError extends Error {
  override name = 'StreamedResponseTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`the streamed answer would pass ${limitBytes} bytes`);
  }
}

/** Passes bytes through and fails, before passing it, the chunk that would take the total past `limit`. */
class ByteLimit extends Transform {
  bytes = 0;
  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, done: TransformCallback): void {
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (this.bytes + size > this.limit) {
      done(new StreamedResponseTooLargeError(this.limit));
      return;
    }
    this.bytes += size;
    done(null, chunk);
  }
}

export interface JsonArrayBodyOptions {
  /** Compress with gzip (the client accepts it). */
  gzip: boolean;
  level?: number;
  /** The most bytes the body may carry (after compression): STREAMED_RESPONSE_LIMIT_BYTES by default. */
  limitBytes?: number;
}

/**
 * The body of a JSON array whose elements arrive in batches (each element already serialized
 * JSON), as a byte stream: `[`, the elements in the order given, `]`, gzip-compressed when asked.
 * Reading is pulled by the consumer: at most a couple of batches are read ahead of what the client
 * has taken, so memory stays bounded whatever the array's length. The text goes out in pieces of
 * about TEXT_PIECE_CHARS, whatever the size of a batch.
 *
 * Invariants: the closing `]` (and, compressed, gzip's trailer) is written only after the last
 * batch; when `batches` throws, or the limit would be passed, the body is destroyed with that
 * error and ends without them, so a cut body never parses as a complete array (JSON without its
 * `]`, gzip without its trailer). Destroying the body (the client went away) stops `batches`.
 */
export function jsonArrayBody(batches: AsyncIterable<readonly string[]>, options: JsonArrayBodyOptions): Readable {
  async function* text(): AsyncGenerator<string, void, undefined> {
    let piece = '[';
    let separator = '';
    for await (const batch of batches) {
      for (const element of batch) {
        piece += separator + element;
        separator = ',';
        if (piece.length >= TEXT_PIECE_CHARS) {
          yield piece;
          piece = '';
        }
      }
    }
    yield `${piece}]`;
  }
  const source = Readable.from(text(), { objectMode: false, highWaterMark: 1 });
  const limit = new ByteLimit(options.limitBytes ?? STREAMED_RESPONSE_LIMIT_BYTES);
  const done = (): void => undefined; // errors reach the consumer through `limit`, the stream it reads
  if (!options.gzip) return pipeline(source, limit, done);
  const gzip = createGzip({ level: options.level ?? GZIP_LEVEL, chunkSize: GZIP_CHUNK_BYTES, flush: zlib.Z_NO_FLUSH });
  return pipeline(source, gzip, limit, done);
}
