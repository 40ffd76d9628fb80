/**
 * A fresh, Lambda-like process for one invocation: imports a bundle, calls its handler once with
 * BENCH_EVENT, serializes the result as the Lambda runtime does (JSON.stringify), and prints one
 * line `BENCH {...}` with the status, the response's size as Lambda measures it, the import and
 * invocation times, peak RSS and CPU. Plain JavaScript: no loader between node and the bundle.
 *
 * usage: node bench/lambda-runner.mjs BUNDLE (event in BENCH_EVENT, as JSON)
 */
const started = performance.now();
const { handler } = await import(process.argv[2]);
const imported = performance.now();
const context = {
  awsRequestId: '00000000-0000-4000-8000-000000000000',
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench',
  getRemainingTimeInMillis: () => 900_000,
};
const result = await handler(JSON.parse(process.env.BENCH_EVENT ?? '{}'), context);
const payload = JSON.stringify(result);
const finished = performance.now();
const usage = process.resourceUsage();
process.stdout.write(
  `BENCH ${JSON.stringify({
    status: result?.statusCode,
    responseBytes: Buffer.byteLength(payload),
    importMs: imported - started,
    invokeMs: finished - imported,
    maxRssMiB: usage.maxRSS / 1024,
    cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
  })}\n`,
);
