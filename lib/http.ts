import { once } from 'node:events';
import { createGzip, gunzip, type Gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { NotAcceptableError, ResponseTooLargeError } from './errors.js';

export interface JsonResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

/**
 * The most a Lambda function may return, as Lambda measures it: the whole serialized response
 * (status, headers, body, and the base64 of a binary body, inside the JSON envelope), 6 MiB.
 */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6_291_456;
/** Below this, compressing costs more than it saves. */
const COMPRESS_FROM_BYTES = 8_192;
/**
 * The gzip level of large answers, chosen by measurement (`npm run bench` prints the sizes and
 * times of levels 1, 4, 6 and 9 on a realistic tenant; README "Performance"): level 6 is 4% larger
 * than level 9 at about half its CPU; level 1 is 18% larger, which would lower the largest tenant
 * that fits under the limit by as much.
 */
export const GZIP_LEVEL = 6;
/** Text handed to the compressor at a time: large enough to keep its overhead small. */
const GZIP_WRITE_CHUNK_CHARS = 256 * 1024;

/** The headers of every failure (DESIGN §6): text, never cached. */
export const FAILURE_HEADERS = Object.freeze({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });

/** The body of every failure: one sentence and the request id the client can quote. */
export function failureBody(sentence: string, requestId: string): string {
  return `${sentence} (request id: ${requestId})\n`;
}

const FAILURE_BODY = /^(.+?) \(request id: ([^)\s]+)\)\s*$/s;

/** The sentence and request id of a body `failureBody` wrote, or undefined for any other text. */
export function parseFailureBody(body: string): { sentence: string; requestId: string } | undefined {
  const match = FAILURE_BODY.exec(body);
  return match ? { sentence: match[1]!, requestId: match[2]! } : undefined;
}

const JSON_HEADERS = Object.freeze({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });

/** A JSON success response; tenant data is never cached by intermediaries. */
export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): JsonResult {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/**
 * The size of a response as Lambda measures it against LAMBDA_RESPONSE_LIMIT_BYTES: the UTF-8
 * bytes of the JSON the runtime sends (`JSON.stringify` of the result). A base64 body needs no
 * escaping, so it is counted without serializing it again.
 */
export function lambdaResponseBytes(result: JsonResult): number {
  if (result.isBase64Encoded) return Buffer.byteLength(JSON.stringify({ ...result, body: '' })) + result.body.length;
  return Buffer.byteLength(JSON.stringify(result));
}

/**
 * Whether the client accepts gzip (RFC 9110 §12.5.3): an explicit `gzip` (or `x-gzip`) entry
 * decides by its q-value, whatever `*` says (so `gzip;q=0, *` refuses gzip); without one, `*`
 * decides by its own; with neither, gzip is not accepted. A q-value that is not a number refuses.
 */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  let explicit: number | undefined;
  let wildcard: number | undefined;
  for (const part of acceptEncoding.split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2).trim());
    const value = Number.isFinite(weight) ? weight : 0;
    const name = coding.trim();
    if (name === 'gzip' || name === 'x-gzip') explicit = Math.max(explicit ?? 0, value);
    else if (name === '*') wildcard = Math.max(wildcard ?? 0, value);
  }
  return (explicit ?? wildcard ?? 0) > 0;
}

/**
 * gzip of the JSON array whose elements are `parts` (each already a JSON value), written into the
 * compressor in chunks as it goes: the whole array never exists as one string.
 */
export async function gzipJsonArray(parts: readonly string[], level = GZIP_LEVEL): Promise<Buffer> {
  const gzip = createGzip({ level, chunkSize: 128 * 1024 });
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const finished = new Promise<void>((resolve, reject) => {
    gzip.once('end', resolve);
    gzip.once('error', reject);
  });
  let chunk = '[';
  for (let i = 0; i < parts.length; i++) {
    chunk += i === 0 ? parts[i]! : `,${parts[i]!}`;
    if (chunk.length >= GZIP_WRITE_CHUNK_CHARS) {
      if (!gzip.write(chunk)) await once(gzip, 'drain');
      chunk = '';
    }
  }
  gzip.end(`${chunk}]`);
  await finished;
  return Buffer.concat(out);
}

const gunzipAsync = promisify(gunzip);

/** UTF-8 bytes of the JSON array of `parts`. */
function jsonArrayBytes(parts: readonly string[]): number {
  let bytes = 2 + Math.max(0, parts.length - 1);
  for (const part of parts) bytes += Buffer.byteLength(part);
  return bytes;
}

export interface JsonArrayResponseOptions {
  /** Extra headers of a success. */
  headers?: Record<string, string>;
  /**
   * The sentence of the 507 when even the compressed answer is over the limit: what it is, how
   * large, and what to do. Gets the compressed envelope's size in bytes.
   */
  tooLarge: (responseBytes: number) => string;
}

/**
 * A JSON array response (the elements already serialized, in order), gzip-compressed when the
 * client accepts gzip and the body is 8 KB or more, and always within what Lambda may return.
 *
 * Invariants: a success's serialized envelope (lambdaResponseBytes) is at most
 * LAMBDA_RESPONSE_LIMIT_BYTES; the body is never cut. Past the limit the answer is a failure that
 * says what to do: 406 (send `Accept-Encoding: gzip`) when the compressed answer would fit, and
 * 507 (ResponseTooLargeError, options.tooLarge) when not even that fits.
 */
export async function negotiatedJsonArrayResponse(
  statusCode: number,
  parts: readonly string[],
  acceptEncoding: string | undefined,
  options: JsonArrayResponseOptions,
): Promise<JsonResult> {
  const headers = { ...JSON_HEADERS, ...options.headers, Vary: 'Accept-Encoding' };
  const rawBytes = jsonArrayBytes(parts);
  const gzip = acceptsGzip(acceptEncoding);
  if (!gzip || rawBytes < COMPRESS_FROM_BYTES) {
    // Escaping in the envelope only adds bytes: a body already over the limit cannot fit.
    if (rawBytes <= LAMBDA_RESPONSE_LIMIT_BYTES) {
      const plain: JsonResult = { statusCode, headers, body: `[${parts.join(',')}]` };
      if (lambdaResponseBytes(plain) <= LAMBDA_RESPONSE_LIMIT_BYTES) return plain;
    }
  }
  const compressed: JsonResult = {
    statusCode,
    headers: { ...headers, 'Content-Encoding': 'gzip' },
    body: (await gzipJsonArray(parts)).toString('base64'),
    isBase64Encoded: true,
  };
  const compressedBytes = lambdaResponseBytes(compressed);
  if (compressedBytes > LAMBDA_RESPONSE_LIMIT_BYTES) throw new ResponseTooLargeError(options.tooLarge(compressedBytes));
  if (gzip) return compressed;
  throw new NotAcceptableError(
    `The answer is ${(rawBytes / 1_000_000).toFixed(1)} MB, more than can be sent uncompressed; send Accept-Encoding: gzip.`,
  );
}

export interface JsonArrayStreamOptions {
  acceptEncoding: string | undefined;
  /**
   * An element's sort key from its parsed JSON. Used only to recover elements already compressed
   * and dropped when a key arrives out of order (see JsonArrayStream).
   */
  keyOf: (element: unknown) => string;
  level?: number;
}

/**
 * A JSON array response built element by element as its elements arrive (a large inventory, page
 * by page), ordered by a key, and answered as negotiatedJsonArrayResponse answers: the same
 * statuses, headers and limits. The point is memory and time: each element is written into the
 * gzip stream as soon as it arrives (the compression runs while the next page is read), and an
 * element's text is kept only while a plain answer is still possible (at most the 6 MiB limit of
 * it), so a 100,000-element array is never held as text at all.
 *
 * Order: elements are expected in key order (code units), which is what the store gives for almost
 * every key. When a key arrives below its predecessor, the stream stops streaming and keeps every
 * element (recovering those already compressed by decompressing them), then sorts before answering:
 * slower, never wrong.
 */
export class JsonArrayStream {
  private readonly wantsGzip: boolean;
  /** Raw bytes after which compression starts: worth it at 8 KB for a gzip client; needed only past the limit otherwise. */
  private readonly compressFrom: number;
  private gzip: Gzip | undefined;
  private gzipDone: Promise<void> | undefined;
  private gzipError: unknown;
  private readonly compressed: Buffer[] = [];
  /** Text written since the last write into the compressor. */
  private pending = '';
  /** Elements (and their keys) kept: while a plain answer is possible, and all of them once sorting. */
  private kept: string[] | undefined = [];
  private keys: string[] = [];
  /** Bytes of `[` and the elements with their commas so far (the closing `]` not counted). */
  private rawBytes = 1;
  private count = 0;
  private lastKey: string | undefined;
  private sorting = false;
  /** Set when sorting began after kept elements had been dropped: they are in the compressed output. */
  private recoverCompressed = false;

  constructor(private readonly options: JsonArrayStreamOptions) {
    this.wantsGzip = acceptsGzip(options.acceptEncoding);
    this.compressFrom = this.wantsGzip ? COMPRESS_FROM_BYTES : LAMBDA_RESPONSE_LIMIT_BYTES;
  }

  /** Elements added so far. */
  get length(): number {
    return this.count;
  }

  /** Adds one element (already serialized JSON) with its sort key. */
  add(key: string, json: string): void {
    this.count += 1;
    if (!this.sorting && this.lastKey !== undefined && key < this.lastKey) this.startSorting();
    if (this.sorting) {
      this.kept!.push(json);
      this.keys.push(key);
      return;
    }
    this.lastKey = key;
    const first = this.count === 1;
    this.rawBytes += Buffer.byteLength(json) + (first ? 0 : 1);
    if (this.gzip) {
      this.write(first ? json : `,${json}`);
    } else if (this.rawBytes >= this.compressFrom) {
      this.startGzip();
      this.write(this.kept!.length > 0 ? `${this.kept!.join(',')},${json}` : json);
    }
    if (this.kept) {
      if (this.rawBytes + 1 <= LAMBDA_RESPONSE_LIMIT_BYTES) {
        this.kept.push(json);
        this.keys.push(key);
      } else {
        this.kept = undefined; // no plain answer can hold this much: the compressed stream is the answer
        this.keys = [];
      }
    }
  }

  /** Resolves when the compressor has taken what it was given (call between pages: backpressure). */
  async drained(): Promise<void> {
    if (this.gzip?.writableNeedDrain) await once(this.gzip, 'drain');
  }

  /** Frees the compressor when the answer will not be made (a failed read). */
  dispose(): void {
    this.gzip?.destroy();
  }

  /**
   * The response: as negotiatedJsonArrayResponse decides it, from the elements added in key order.
   * @throws ResponseTooLargeError (507) or NotAcceptableError (406) past Lambda's limit.
   */
  async respond(statusCode: number, options: JsonArrayResponseOptions): Promise<JsonResult> {
    if (this.sorting) return negotiatedJsonArrayResponse(statusCode, await this.sortedElements(), this.options.acceptEncoding, options);
    if (!this.gzip) return negotiatedJsonArrayResponse(statusCode, this.kept!, this.options.acceptEncoding, options);
    const rawBytes = this.rawBytes + 1;
    if (this.kept && (!this.wantsGzip || rawBytes < COMPRESS_FROM_BYTES)) {
      // A plain answer is wanted and possible; the compressor only ran in case it was not.
      this.dispose();
      return negotiatedJsonArrayResponse(statusCode, this.kept, this.options.acceptEncoding, options);
    }
    const body = (await this.endGzip(']')).toString('base64');
    const headers = { ...JSON_HEADERS, ...options.headers, Vary: 'Accept-Encoding' };
    const compressed: JsonResult = { statusCode, headers: { ...headers, 'Content-Encoding': 'gzip' }, body, isBase64Encoded: true };
    const compressedBytes = lambdaResponseBytes(compressed);
    if (compressedBytes > LAMBDA_RESPONSE_LIMIT_BYTES) throw new ResponseTooLargeError(options.tooLarge(compressedBytes));
    if (this.wantsGzip) return compressed;
    throw new NotAcceptableError(
      `The answer is ${(rawBytes / 1_000_000).toFixed(1)} MB, more than can be sent uncompressed; send Accept-Encoding: gzip.`,
    );
  }

  private startGzip(): void {
    const gzip = createGzip({ level: this.options.level ?? GZIP_LEVEL, chunkSize: 128 * 1024 });
    gzip.on('data', (chunk: Buffer) => this.compressed.push(chunk));
    this.gzipDone = new Promise<void>((resolve, reject) => {
      gzip.once('end', resolve);
      gzip.once('error', reject);
    });
    this.gzipDone.catch((error: unknown) => (this.gzipError = error));
    this.gzip = gzip;
    this.pending = '[';
  }

  private write(text: string): void {
    this.pending += text;
    if (this.pending.length >= GZIP_WRITE_CHUNK_CHARS) {
      this.gzip!.write(this.pending);
      this.pending = '';
    }
  }

  private async endGzip(tail: string): Promise<Buffer> {
    this.gzip!.end(this.pending + tail);
    this.pending = '';
    await this.gzipDone;
    if (this.gzipError) throw this.gzipError;
    return Buffer.concat(this.compressed);
  }

  private startSorting(): void {
    this.sorting = true;
    if (this.kept) {
      this.dispose(); // every element so far is kept: the compressed output is not needed
    } else {
      this.recoverCompressed = true;
      this.kept = [];
      this.keys = [];
    }
  }

  /** Every element, ordered by key; elements only in the compressed output are decompressed and re-read first. */
  private async sortedElements(): Promise<string[]> {
    let parts = this.kept!;
    let keys = this.keys;
    if (this.recoverCompressed) {
      const text = (await gunzipAsync(await this.endGzip(']'))).toString('utf8');
      const earlier = JSON.parse(text) as unknown[];
      parts = earlier.map((e) => JSON.stringify(e)).concat(parts);
      keys = earlier.map((e) => this.options.keyOf(e)).concat(keys);
    }
    const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
    return order.map((i) => parts[i]!);
  }
}
