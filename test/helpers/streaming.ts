import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Context } from 'aws-lambda';
import { PRELUDE_CONTENT_TYPE, PRELUDE_DELIMITER_BYTES, type PreludeHooks } from '../../local/lambda/awslambda.js';
import { testContext } from './events.js';

/**
 * A streaming handler invoked in-process, as middy's and Powertools' own tests invoke theirs: with a
 * response stream of the test's that has the runtime's two hooks (`setContentType`,
 * `_onBeforeFirstWrite`, which `awslambda.HttpResponseStream.from` uses), collecting what the
 * handler writes. The `awslambda` global is the one the local runtime client installs
 * (local/lambda/awslambda.ts), put in place before any test file loads a handler
 * (test/helpers/shared-worker-setup.ts). Through the real runtime client and gateway instead:
 * test/integration/sandbox.test.ts.
 */

/** What a client of a streamed answer gets: status, headers, the body as text (decompressed when br or gzip). */
export interface StreamedAnswer {
  statusCode: number;
  headers: Record<string, string>;
  /** The body as sent (compressed when `Content-Encoding` says so). */
  raw: Buffer;
  /** The body as a client reads it: decompressed (br, gzip), as UTF-8 text. */
  body: string;
  /** The error the function failed with after its prelude (the runtime's error trailers), if any. */
  error?: unknown;
}

/** A response stream collecting every byte written, the prelude included. */
class CollectingStream extends Writable implements PreludeHooks {
  contentType = 'application/octet-stream';
  _onBeforeFirstWrite: PreludeHooks['_onBeforeFirstWrite'];
  readonly chunks: Buffer[] = [];
  private started = false;

  setContentType(type: string): void {
    this.contentType = type;
  }

  private preludeFirst(): void {
    if (this.started) return;
    this.started = true;
    this._onBeforeFirstWrite?.((chunk) => this.chunks.push(Buffer.from(chunk)));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.preludeFirst();
    this.chunks.push(chunk);
    done();
  }

  override _final(done: () => void): void {
    this.preludeFirst();
    done();
  }
}

/**
 * Invokes a streaming handler and returns what the client gets: the prelude's status and headers,
 * the body after its 8 NUL bytes, decoded only for a complete answer (a cut one is left raw), and
 * the error when the handler failed after its prelude. A failure before it rejects.
 */
export async function invokeStreamed(
  handler: unknown,
  event: unknown,
  context: Context = testContext('inventory'),
): Promise<StreamedAnswer> {
  const stream = new CollectingStream();
  let error: unknown;
  let wrote = false;
  try {
    await (handler as (event: unknown, stream: Writable, context: Context) => Promise<unknown>)(event, stream, context);
  } catch (failure) {
    wrote = stream.chunks.length > 0;
    if (!wrote) throw failure;
    error = failure;
  }
  const all = Buffer.concat(stream.chunks);
  let statusCode = 200;
  let headers: Record<string, string> = {};
  let raw = all;
  if (stream.contentType === PRELUDE_CONTENT_TYPE) {
    const end = all.indexOf(Buffer.alloc(PRELUDE_DELIMITER_BYTES));
    const prelude = JSON.parse(all.subarray(0, end).toString('utf8')) as { statusCode?: number; headers?: Record<string, unknown> };
    statusCode = prelude.statusCode ?? 200;
    headers = Object.fromEntries(Object.entries(prelude.headers ?? {}).map(([k, v]) => [k, String(v)]));
    raw = all.subarray(end + PRELUDE_DELIMITER_BYTES);
  }
  const decode = { gzip: gunzipSync, br: brotliDecompressSync }[headers['Content-Encoding'] ?? ''] ?? ((bytes: Buffer) => bytes);
  const body = error === undefined ? decode(raw).toString('utf8') : '';
  return { statusCode, headers, raw, body, ...(error === undefined ? {} : { error }) };
}
