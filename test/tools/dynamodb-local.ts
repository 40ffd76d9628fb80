import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../lib/store/client.js';

/**
 * AWS's DynamoDB Local (the Java jar shipped inside amplify-dynamodb-simulator) as a second,
 * independent DynamoDB engine for the integration and e2e suites: what passes on dynalite must
 * also pass on AWS's own emulator. In memory, one shared database, on a free loopback port.
 */

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`, for TEST_DYNAMODB_ENDPOINT or DYNAMODB_ENDPOINT. */
  endpoint: string;
  port: number;
  /** The Java process id, so callers can tell which process is theirs. */
  pid: number;
  /** Stops Java (SIGTERM, then SIGKILL after a grace) and removes its scratch directory; idempotent. */
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** Port to listen on; a free one is picked when absent. */
  port?: number;
  /** How long to wait until it answers ListTables. */
  readyTimeoutMs?: number;
  /** Where its output goes; by default it is kept and shown only when it fails to start. */
  onOutput?: (chunk: string) => void;
  /** Told the Java pid as soon as it exists, so a caller interrupted during start can still stop it. */
  onSpawn?: (pid: number) => void;
}

/** Raised when Java is missing or DynamoDB Local does not come up; the message says what to do. */
export class DynamoDbLocalError extends Error {
  override name = 'DynamoDbLocalError';
}

/** Java exited before answering, most likely because its port was taken meanwhile. */
class PortLostError extends DynamoDbLocalError {}

const require = createRequire(import.meta.url);

/** The directory holding DynamoDBLocal.jar and its native libraries (DynamoDBLocal_lib). */
export function dynamoDbLocalDirectory(): string {
  const dir = join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
  if (!existsSync(join(dir, 'DynamoDBLocal.jar'))) {
    throw new DynamoDbLocalError(`DynamoDBLocal.jar is not in ${dir}; run npm ci to install amplify-dynamodb-simulator.`);
  }
  return dir;
}

/** The `java -version` banner, or undefined when no `java` is on the PATH. */
export function javaVersion(): string | undefined {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return undefined;
  return (result.stderr || result.stdout).split('\n')[0]?.trim();
}

export const JAVA_MISSING_MESSAGE =
  'Java was not found on the PATH. DynamoDB Local is a Java program: install a Java runtime (11 or newer), ' +
  'for example `apt-get install default-jre-headless` on Debian or Ubuntu, then run this again.';

/** A port that is free right now on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (exited(child)) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (!exited(child)) child.kill('SIGKILL');
  }, graceMs);
  await gone;
  clearTimeout(timer);
}

async function waitUntilAnswering(endpoint: string, child: ChildProcess, timeoutMs: number, output: () => string): Promise<void> {
  const client = createDocumentClient({ region: 'us-east-1', endpoint, maxAttempts: 1, timeoutMs: 2000 });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited(child)) {
        throw new PortLostError(`DynamoDB Local exited (code ${child.exitCode ?? child.signalCode}) before answering:\n${output()}`);
      }
      try {
        await (client as unknown as DynamoDBClient).send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new DynamoDbLocalError(
            `DynamoDB Local did not answer ListTables at ${endpoint} within ${timeoutMs} ms (${(error as Error).name}):\n${output()}`,
          );
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    client.destroy();
  }
}

/**
 * Starts DynamoDB Local (`-inMemory -sharedDb`, telemetry off) and resolves once it answers a
 * ListTables call. Always pair with `stop()`: the caller owns the Java process. Fails with a clear
 * DynamoDbLocalError when Java is missing or the emulator does not come up, stopping what it started.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  if (!javaVersion()) throw new DynamoDbLocalError(JAVA_MISSING_MESSAGE);
  const dir = dynamoDbLocalDirectory();
  if (options.port !== undefined) return launch(dir, options.port, options);
  // A free port can be taken between the probe and Java's bind: try a fresh one a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(dir, await freePort(), options);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof PortLostError)) throw error;
    }
  }
}

async function launch(dir: string, port: number, options: DynamoDbLocalOptions): Promise<DynamoDbLocal> {
  // -inMemory writes no database, but Java may leave logs or native-library copies in its cwd.
  const scratch = await mkdtemp(join(tmpdir(), 'dynamodb-local-'));
  const child = spawn(
    'java',
    [
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: scratch, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  const collect = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    if (options.onOutput) options.onOutput(text);
    else log = (log + text).slice(-8000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', () => {
      // A spawned child has its pid ('spawn' fires only once it is running).
      if (child.pid !== undefined) options.onSpawn?.(child.pid);
      resolve();
    });
    child.once('error', (error) => reject(new DynamoDbLocalError(`Could not start java: ${error.message}`)));
  });

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= stopChild(child).finally(() => rm(scratch, { recursive: true, force: true }));
    return stopped;
  };

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await spawned;
    await waitUntilAnswering(endpoint, child, options.readyTimeoutMs ?? 30_000, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, port, pid: child.pid ?? 0, stop };
}
