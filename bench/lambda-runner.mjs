/**
 * A fresh, Lambda-like process for one invocation: imports a bundle, calls its handler once with
 * BENCH_EVENT and prints one line `BENCH {...}` with the status, the response's size, the import
 * and invocation times, the time to the first body byte, peak RSS and CPU. Plain JavaScript: no
 * loader between node and the bundle.
 *
 * A streaming handler (the inventory) is called through the Lambda runtime stand-in of
 * infra/local/streaming.ts, bundled by the bench (BENCH_STAND_IN): its bytes are counted and
 * dropped as they come, as the runtime sends them on; a buffered one's result is serialized as the
 * runtime does (JSON.stringify).
 *
 * usage: node bench/lambda-runner.mjs BUNDLE (event in BENCH_EVENT, as JSON)
 */
import { readFileSync } from 'node:fs';

const started = performance.now();
const standIn = process.env.BENCH_STAND_IN ? await import(process.env.BENCH_STAND_IN) : undefined;
const { handler } = await import(process.argv[2]);
const imported = performance.now();
const context = {
  awsRequestId: '00000000-0000-4000-8000-000000000000',
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench',
  getRemainingTimeInMillis: () => 900_000,
};
const event = JSON.parse(process.env.BENCH_EVENT ?? '{}');
let status;
let responseBytes = 0;
let firstByteMs;
/** A buffered answer's body, so the bench can check what was answered (not only the status). */
let body;
if (standIn?.isStreamingHandler(handler)) {
  await standIn.invokeStreaming(handler, event, context, {
    prelude: (prelude) => (status = prelude.statusCode),
    chunk: (chunk, done) => {
      firstByteMs ??= performance.now() - imported;
      responseBytes += chunk.length;
      done();
    },
  });
} else {
  const result = await handler(event, context);
  status = result?.statusCode;
  body = typeof result?.body === 'string' ? result.body : undefined;
  responseBytes = Buffer.byteLength(JSON.stringify(result));
}
const finished = performance.now();
const usage = process.resourceUsage();
/**
 * Peak RSS of this process's own memory: VmHWM on Linux. Not getrusage's maxRSS: Linux carries
 * into it the RSS of the forked copy of the parent this process was exec'd from, so a bench
 * holding hundreds of MB when it spawns would be reported as this process's peak.
 */
function peakRssMiB() {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Number(hwm[1]) / 1024;
  } catch {
    // not Linux
  }
  return usage.maxRSS / 1024;
}
const memory = process.memoryUsage();
process.stdout.write(
  `BENCH ${JSON.stringify({
    status,
    responseBytes,
    importMs: imported - started,
    invokeMs: finished - imported,
    firstByteMs: firstByteMs ?? finished - imported,
    maxRssMiB: peakRssMiB(),
    // Where the memory is at the end: the V8 heap, and Buffers (outside it).
    heapUsedMiB: memory.heapUsed / 1_048_576,
    arrayBuffersMiB: memory.arrayBuffers / 1_048_576,
    cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    body,
  })}\n`,
);
