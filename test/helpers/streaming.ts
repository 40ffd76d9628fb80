// First: installs the stand-in for the Lambda runtime's `awslambda` global, which a streaming
// handler (middy `streamifyResponse: true`) needs when its module loads. Import this helper before
// any streaming handler module.
import { gunzipSync } from 'node:zlib';
import type { Context } from 'aws-lambda';
import { collectStreaming, type StreamingHandler } from '../../infra/local/streaming.js';
import { testContext } from './events.js';

/** What a client of a streamed answer gets: status, headers, the body as text (gunzipped when gzip). */
export interface StreamedAnswer {
  statusCode: number;
  headers: Record<string, string>;
  /** The body as sent (compressed when `Content-Encoding: gzip`). */
  raw: Buffer;
  /** The body as a client reads it: decompressed when gzip, as UTF-8 text. */
  body: string;
  /** The error the function failed with after its prelude (the runtime's error trailers), if any. */
  error?: unknown;
}

/**
 * Invokes a streaming handler through the runtime stand-in (infra/local/streaming.ts) and returns
 * what the client gets. The body is decoded only for a complete answer; a cut one is left raw.
 */
export async function invokeStreamed(
  handler: unknown,
  event: unknown,
  context: Context = testContext('inventory'),
): Promise<StreamedAnswer> {
  const answer = await collectStreaming(handler as StreamingHandler, event, context);
  const gzip = answer.headers['Content-Encoding'] === 'gzip';
  const body = answer.error === undefined ? (gzip ? gunzipSync(answer.body) : answer.body).toString('utf8') : '';
  return {
    statusCode: answer.statusCode,
    headers: answer.headers,
    raw: answer.body,
    body,
    ...(answer.error === undefined ? {} : { error: answer.error }),
  };
}
