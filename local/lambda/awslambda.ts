/**
 * The `awslambda` global Lambda's Node.js runtime installs before it loads a handler, as far as a
 * response-streaming handler uses it (middy's `streamifyResponse: true` calls both members):
 * `streamifyResponse` marks a handler as streaming, and `HttpResponseStream.from` makes a response
 * stream begin with the HTTP prelude (its status and headers as JSON, then 8 NUL bytes) that API
 * Gateway reads before the body. The local runtime client installs it (runtime-client.ts), and the
 * handler tests that invoke a streaming handler in-process (test/helpers/streaming.ts), each with a
 * response stream of its own that has the same two hooks as the runtime's.
 */

/** How Lambda's runtime marks a handler made by `awslambda.streamifyResponse`, and its chosen high-water mark. */
export const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
export const HIGH_WATER_MARK = Symbol.for('aws.lambda.runtime.handler.streaming.highWaterMark');
/** The content type a response stream takes once it carries an HTTP prelude. */
export const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
/** The prelude's end: 8 NUL bytes after its JSON. */
export const PRELUDE_DELIMITER_BYTES = 8;

/** What `HttpResponseStream.from` needs of a response stream: the runtime's two hooks. */
export interface PreludeHooks {
  setContentType(type: string): void;
  /** Called with the stream's own write before its first byte (Lambda's runtime has the same hook). */
  _onBeforeFirstWrite: ((write: (chunk: string | Uint8Array) => void) => void) | undefined;
}

type Handler = (...args: unknown[]) => unknown;

export const HttpResponseStream = {
  from<S extends PreludeHooks>(stream: S, prelude: Record<string, unknown>): S {
    stream.setContentType(PRELUDE_CONTENT_TYPE);
    const json = JSON.stringify(prelude);
    stream._onBeforeFirstWrite = (write) => {
      write(json);
      write(new Uint8Array(PRELUDE_DELIMITER_BYTES));
    };
    return stream;
  },
};

export function streamifyResponse(handler: Handler, options?: { highWaterMark?: number }): Handler {
  return Object.assign(handler, { [STREAMING]: 'response' }, options?.highWaterMark ? { [HIGH_WATER_MARK]: options.highWaterMark } : {});
}

/** Whether a handler was made by `awslambda.streamifyResponse`. */
export function isStreamingHandler(handler: unknown): boolean {
  return typeof handler === 'function' && (handler as unknown as Record<symbol, unknown>)[STREAMING] === 'response';
}

/** Installs the global (keeping what else is on it: the SDK's invoke store puts an empty one there when it loads). */
export function installAwsLambdaGlobal(): void {
  const global = globalThis as { awslambda?: Record<string, unknown> };
  global.awslambda = { ...global.awslambda, streamifyResponse, HttpResponseStream };
}
