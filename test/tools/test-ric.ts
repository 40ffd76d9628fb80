import '../../infra/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (README, Node versions)
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { FUNCTIONS, type FunctionName, ROOT } from '../../infra/build.js';
import { functionEnvironment, UNREACHABLE_STACK_VALUES } from '../../local/lambda/environment.js';
import { type LambdaFunctionSpec, readFunctionSpecs } from '../../local/lambda/function-specs.js';
import { type LambdaRuntime, lambdaRuntime } from '../../local/lambda/runtimes.js';
import { FunctionPool, type InvocationOutcome } from '../../local/lambda/sandbox.js';

/**
 * `npm run test:ric`: our runtime client against AWS's own (`aws-lambda-ric`, the code of Lambda's
 * managed Node runtime), both speaking to the stack's Lambda Runtime API, with the same bundles and
 * the same events: the fixture functions of test/fixtures/functions/ (a buffered answer, a thrown
 * error, a failed init, a streamed answer with its HTTP prelude, and streams that fail before and
 * after their first byte). For each case it prints what arrived at the Runtime API from each
 * runtime (the answer's kind, content type, status and body, the error type and message, the error
 * trailers) and exits 1 when they differ. Both run on the same Node, Lambda's major (the optional
 * Node 24 package, or LAMBDA_RUNTIME_NODE), which aws-lambda-ric needs (22 or later). Needs
 * LAMBDA_RUNTIME_RIC (aws-lambda-ric's index.mjs, installed with its install scripts allowed):
 * docs/decisions.md.
 */

const FIXTURES = join(ROOT, 'test', 'fixtures', 'functions');
interface Case {
  what: string;
  function: FunctionName;
  query: Record<string, string>;
  environment?: Record<string, string>;
}

const CASES: Case[] = [
  { what: 'a buffered answer', function: 'observations', query: { do: 'echo', x: 'y' } },
  { what: 'a thrown error', function: 'observations', query: { do: 'throw' } },
  { what: 'a failed init', function: 'observations', query: {}, environment: { FIXTURE_FAIL_INIT: 'true' } },
  { what: 'a streamed answer with its HTTP prelude', function: 'inventory', query: { bytes: '300000' } },
  { what: 'a stream that fails mid-way (error trailers)', function: 'inventory', query: { bytes: '300000', do: 'throw-mid-stream' } },
  { what: 'a stream that fails before its first byte', function: 'inventory', query: { do: 'throw-first' } },
];

/** What arrived at the Runtime API, without what differs by nature (request ids, process ids). */
async function received(outcome: InvocationOutcome): Promise<Record<string, unknown>> {
  if (outcome.type === 'throttled') return { kind: 'throttled' };
  if (outcome.type === 'failed') return { kind: 'error', errorType: outcome.error.errorType, errorMessage: outcome.error.errorMessage };
  if (outcome.type === 'buffered') {
    const payload = JSON.parse(outcome.payload.toString('utf8')) as { body?: string };
    const body = payload.body ? (JSON.parse(payload.body) as Record<string, unknown>) : undefined;
    if (body) delete body.requestId;
    return { kind: 'buffered', payload: { ...payload, body } };
  }
  const chunks: Buffer[] = [];
  for await (const chunk of outcome.body as AsyncIterable<Buffer>) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  const failed = await outcome.ended;
  const cut = body.indexOf(Buffer.alloc(8));
  return {
    kind: 'stream',
    contentType: outcome.contentType,
    prelude: cut >= 0 ? JSON.parse(body.subarray(0, cut).toString('utf8')) : null,
    bytes: body.length,
    sha256: createHash('sha256').update(body).digest('hex').slice(0, 16),
    trailers: failed ? { errorType: failed.errorType, errorMessage: failed.errorMessage } : null,
  };
}

async function run(
  runtime: LambdaRuntime,
  spec: LambdaFunctionSpec,
  specs: LambdaFunctionSpec[],
  c: Case,
): Promise<Record<string, unknown>> {
  const pool = new FunctionPool({
    spec,
    bundleDir: () => join(FIXTURES, spec.name),
    runtime,
    environment: () => ({ ...functionEnvironment(spec, specs, UNREACHABLE_STACK_VALUES, {}), ...c.environment }),
    userEnv: { PATH: process.env.PATH },
    log: () => undefined,
    say: () => undefined,
    idleMs: 60_000,
  });
  try {
    const event = { resource: '/', path: '/', httpMethod: 'GET', headers: {}, queryStringParameters: c.query, requestContext: {} };
    return await received(await pool.invoke(event, randomUUID()));
  } finally {
    await pool.stop();
  }
}

async function main(): Promise<number> {
  const ours = await lambdaRuntime({ ...process.env, LAMBDA_RUNTIME: 'local' });
  const aws = await lambdaRuntime({ ...process.env, LAMBDA_RUNTIME: 'aws-lambda-ric' });
  process.stdout.write(`ours: ${ours.description}\naws-lambda-ric: ${aws.description}\n`);
  const specs = readFunctionSpecs();
  let differences = 0;
  for (const c of CASES) {
    const spec = specs[c.function];
    const [a, b] = await Promise.all([run(ours, spec, Object.values(specs), c), run(aws, spec, Object.values(specs), c)]);
    const same = JSON.stringify(a) === JSON.stringify(b);
    if (!same) differences += 1;
    process.stdout.write(`${same ? 'same' : 'DIFF'}  ${c.what}\n`);
    if (!same || process.env.TEST_RIC_SHOW)
      process.stdout.write(`  ours:           ${JSON.stringify(a)}\n  aws-lambda-ric: ${JSON.stringify(b)}\n`);
  }
  process.stdout.write(
    `${CASES.length - differences} of ${CASES.length} cases arrive the same from both runtimes (${Object.keys(FUNCTIONS).length} functions' settings from serverless.yml).\n`,
  );
  return differences === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`test:ric: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
