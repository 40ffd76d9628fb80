import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { type BrotliCompress, createBrotliCompress, createGzip, constants as zlib } from 'node:zlib';
// Only negotiator's Accept-Encoding part: its media-type, language and charset parsers would add
// 4 KB to the inventory bundle, which is held under 400 KiB (docs/performance.md).
import preferredEncodings from 'negotiator/lib/encoding.js';

/**
 * A JSON array answered as a stream (Lambda response streaming): written element batch by batch as
 * they are read, compressed by the function (brotli or gzip, as the client prefers; API Gateway does
 * not compress a streamed answer), never held whole.
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

/**
 * The brotli quality, chosen by measurement as the one whose CPU is no more than gzip level 6's on
 * a realistic tenant (`npm run bench` prints qualities 3, 4 and 5 beside the gzip levels;
 * docs/performance.md): quality 4 makes about 10% fewer bytes than gzip 6 for about its CPU; 5
 * costs more CPU than gzip 6, 3 saves CPU but makes more bytes than gzip 6. Past Lambda's first
 * 6 MB every byte is wire time (2 MB/s), so at equal CPU fewer bytes answer sooner.
 */
export const BROTLI_QUALITY = 4;

/**
 * brotli's size hint: the answer's size is known only at its end, and a hint of 1 MB or more makes
 * brotli take its larger hash table at quality 4. Measured on a realistic 30,000-agent inventory,
 * streamed with a flush per page: 1.88 MB with the hint, as small as the text compressed whole,
 * against 2.01 MB without it (gzip 6: 2.06 MB), for about the same CPU and 3 to 4 MB more resident
 * memory; a small answer pays a fraction of a millisecond for the larger table.
 */
const BROTLI_SIZE_HINT_BYTES = 1 << 20;

/** Compressed output handed on at a time: large enough to keep the per-write cost small. */
const COMPRESSED_CHUNK_BYTES = 64 * 1024;

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

/** How a streamed body is sent: brotli, gzip, or as it is (`Content-Encoding` names the first two). */
export type ContentCoding = 'br' | 'gzip' | 'identity';

/** The compressed codings, the server's choice first when a client accepts both at the same q-value. */
const COMPRESSED_CODINGS: readonly ContentCoding[] = ['br', 'gzip'];

/**
 * The coding of an answer to a client's `Accept-Encoding` (RFC 9110 §12.5.3), read by `negotiator`
 * (the parser middy's content negotiation uses): of br and gzip, the one the client accepts with
 * the higher q-value, br when they are equal (it is smaller at the same CPU); identity when it
 * accepts neither. For each, an explicit entry decides by its q-value whatever `*` says (so
 * `gzip;q=0, *` refuses gzip), and a q-value that is not a number refuses. br is sent only to a
 * client that names it: `*` alone stands for gzip (a client that wrote `*` long ago may not decode
 * br; brotli's nginx module asks for the name too). A preference
 * for identity over both is not followed: the uncompressed answer is five times larger, and
 * passes Lambda's 200 MB sooner.
 */
export function responseCoding(acceptEncoding: string | undefined): ContentCoding {
  if (!acceptEncoding) return 'identity';
  // RFC 9110 §8.4.1.3: x-gzip is gzip; negotiator knows only the one name.
  const header = acceptEncoding.replace(/(^|[\s,])x-gzip(?=\s*(;|,|$))/gi, '$1gzip');
  const accepted = preferredEncodings(header, [...COMPRESSED_CODINGS], [...COMPRESSED_CODINGS]) as ContentCoding[];
  const namesBr = preferredEncodings(header).some((coding) => coding.toLowerCase() === 'br');
  return accepted.find((coding) => coding !== 'br' || namesBr) ?? 'identity';
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
  /** The coding the client asked for (responseCoding). */
  coding: ContentCoding;
  /** The most bytes the body may carry (after compression): STREAMED_RESPONSE_LIMIT_BYTES by default. */
  limitBytes?: number;
}

/**
 * The compressor of a coding, or undefined for identity: gzip at GZIP_LEVEL, brotli at
 * BROTLI_QUALITY in text mode. gzip hands on its output as its blocks fill (every few tens of
 * kilobytes of text), so its answer leaves page by page as the pages come. brotli holds up to its
 * window (4 MB of text, several pages) before it writes a byte unless it is flushed, so
 * jsonArrayBody flushes it after each batch: a meta-block per page, a few bytes each, the window
 * kept (the next page still refers to earlier ones). The bench's CPU floor compresses with it too,
 * so that floor and service make the same bytes the same way.
 */
export function compressor(coding: ContentCoding): Transform | undefined {
  if (coding === 'gzip') return createGzip({ level: GZIP_LEVEL, chunkSize: COMPRESSED_CHUNK_BYTES, flush: zlib.Z_NO_FLUSH });
  if (coding === 'br') {
    return createBrotliCompress({
      chunkSize: COMPRESSED_CHUNK_BYTES,
      flush: zlib.BROTLI_OPERATION_PROCESS,
      params: {
        [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
        [zlib.BROTLI_PARAM_SIZE_HINT]: BROTLI_SIZE_HINT_BYTES,
      },
    });
  }
  return undefined;
}

/**
 * The body of a JSON array whose elements arrive in batches (each element already serialized
 * JSON), as a byte stream: `[`, the elements in the order given, `]`, compressed in the coding
 * asked for. Reading is pulled by the consumer: at most a couple of batches are read ahead of what
 * the client has taken, so memory stays bounded whatever the array's length. The text goes out in
 * pieces of about TEXT_PIECE_CHARS, whatever the size of a batch.
 *
 * Invariants: the closing `]` (and, compressed, the coding's end: gzip's trailer, brotli's last
 * meta-block) is written only after the last batch; when `batches` throws, or the limit would be
 * passed, the body is destroyed with that error and ends without them, so a cut body never parses
 * as a complete array (JSON without its `]`, a compressed stream without its end). Destroying the
 * body (the client went away) stops `batches`.
 */
export function jsonArrayBody(batches: AsyncIterable<readonly string[]>, options: JsonArrayBodyOptions): Readable {
  const compress = compressor(options.coding);
  /** brotli holds a whole window before it writes unless flushed (compressor): flushed after each batch. */
  const brotli = options.coding === 'br' ? (compress as BrotliCompress) : undefined;
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
      if (brotli && batch.length > 0) {
        if (piece.length > 0) yield piece;
        piece = '';
        // The generator resumes only once its last piece left the source for the compressor, so
        // the flush follows it in the compressor's queue.
        if (!brotli.destroyed && !brotli.writableEnded) brotli.flush(zlib.BROTLI_OPERATION_FLUSH);
      }
    }
    yield `${piece}]`;
  }
  const source = Readable.from(text(), { objectMode: false, highWaterMark: 1 });
  const limit = new ByteLimit(options.limitBytes ?? STREAMED_RESPONSE_LIMIT_BYTES);
  const done = (): void => undefined; // errors reach the consumer through `limit`, the stream it reads
  return compress ? pipeline(source, compress, limit, done) : pipeline(source, limit, done);
}
