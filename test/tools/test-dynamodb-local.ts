import '../../infra/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type DynamoDbLocal, DynamoDbLocalError, JAVA_MISSING_MESSAGE, javaVersion, startDynamoDbLocal } from './dynamodb-local.js';

/**
 * `npm run test:dynamodb-local`: the integration and e2e suites against AWS's DynamoDB Local
 * instead of the embedded dynalite. Starts Java on a free port, runs
 * `vitest run test/integration test/e2e` with TEST_DYNAMODB_ENDPOINT set, stops Java whatever
 * happens (Ctrl-C included) and exits with vitest's exit code. Extra arguments go to vitest.
 *
 * `--passWithNoTests` is passed here only: a file filter given as an extra argument that names
 * nothing under those two folders (a unit file, say) is not a failure of this runner. `npm test`
 * keeps vitest's default.
 */
const require = createRequire(import.meta.url);
// vitest's bin is not an export, so find it beside its package.json.
const VITEST = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');

let engine: DynamoDbLocal | undefined;
/** Java's pid from the moment it is spawned until it is stopped, even while still starting. */
let javaPid: number | undefined;
let vitest: ChildProcess | undefined;
let interrupted = false;

function killJava(): void {
  if (javaPid === undefined) return;
  try {
    process.kill(javaPid, 'SIGKILL');
  } catch {
    // already gone
  }
  javaPid = undefined;
}

async function stopJava(): Promise<void> {
  const running = engine;
  engine = undefined;
  if (running) await running.stop();
  else killJava(); // interrupted while starting: no handle yet, only the pid
  javaPid = undefined;
}

/** Ctrl-C or a kill: let vitest finish its own teardown briefly, stop Java, exit 128 + signal. */
async function interrupt(signal: NodeJS.Signals): Promise<void> {
  if (interrupted) return;
  interrupted = true;
  if (vitest && vitest.exitCode === null && vitest.signalCode === null) {
    const running = vitest;
    const gone = new Promise((resolve) => running.once('exit', resolve));
    vitest.kill(signal);
    await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 5000))]);
  }
  await stopJava();
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
process.on('SIGINT', () => void interrupt('SIGINT'));
process.on('SIGTERM', () => void interrupt('SIGTERM'));
process.on('SIGHUP', () => void interrupt('SIGHUP'));
// Last resort if this process ends any other way: never leave Java behind.
process.on('exit', killJava);

function runVitest(endpoint: string): Promise<number> {
  return new Promise((resolve) => {
    vitest = spawn(
      process.execPath,
      // One worker: every file shares the one Java engine, whose writes take a lock; two files at once
      // (a large seeding beside a streamed listing) held a page past its per-attempt timeout.
      [VITEST, 'run', 'test/integration', 'test/e2e', '--passWithNoTests', '--maxWorkers=1', ...process.argv.slice(2)],
      { stdio: 'inherit', env: { ...process.env, TEST_DYNAMODB_ENDPOINT: endpoint } },
    );
    vitest.once('error', (error) => {
      console.error(`Could not start vitest: ${error.message}`);
      resolve(1);
    });
    vitest.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main(): Promise<number> {
  const java = javaVersion();
  if (!java) {
    console.error(JAVA_MISSING_MESSAGE);
    return 1;
  }
  const started = Date.now();
  try {
    engine = await startDynamoDbLocal({ onSpawn: (pid) => (javaPid = pid) });
  } catch (error) {
    javaPid = undefined; // startDynamoDbLocal has already stopped what it started
    console.error(error instanceof DynamoDbLocalError ? error.message : error);
    return 1;
  }
  console.log(`DynamoDB Local (${java}) answers at ${engine.endpoint} after ${Date.now() - started} ms (pid ${engine.pid}).`);
  try {
    return await runVitest(engine.endpoint);
  } finally {
    if (!interrupted) await stopJava();
  }
}

const code = await main();
if (!interrupted) process.exit(code);
