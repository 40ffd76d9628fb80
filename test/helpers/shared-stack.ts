import { DeleteTableCommand, type DynamoDBClient, waitUntilTableNotExists } from '@aws-sdk/client-dynamodb';
import { expect } from 'vitest';
import { type Fleet, loadFleet } from '../../local/fleet.js';
import { ensureTables } from '../../local/tables.js';
import { startTestStack, type TestStack } from './stack.js';

/**
 * One local stack per test worker, for the end-to-end files that need a fleet and the stack as
 * `npm start` configures it: its engine, issuer, authorization server and listeners start once per
 * worker, and its function instances stay warm from one file to the next (the files of the
 * `service` project share a worker's modules: vitest.config.ts). Files run one after another in a
 * worker, and each begins on empty tables holding only its own fleet.
 *
 * A file may change the stack's variables (for the whole file, or within a test with
 * updateEnvironment), as long as it puts them back: `release()` puts back whatever is left and
 * fails, naming it, so the next file still starts from the stack's own configuration. A file that
 * needs a stack of its own keeps one (startTestStack): faults in the engine, shrunk time, the
 * sandboxes' own limits, a stack started with a setting it reads only at start.
 */
export interface SharedStack extends Omit<TestStack, 'stop'> {
  /** This file is done with the stack: its variables are put back; the stack runs on for the worker's next file. */
  release(): Promise<void>;
}

interface WorkerStack {
  stack: TestStack;
  /** The file using it now. */
  user: { file: string } | undefined;
}

/**
 * Kept on the worker's global object, not in this module: a file that loads modules afresh
 * (vi.resetModules, test/helpers/env.ts) would otherwise make the next file start a second stack.
 */
const workerGlobal = globalThis as { __sharedStack?: Promise<WorkerStack> };

/** Vitest's worker state: `onCleanup` runs when the worker stops, after its last file (no public hook exists for that). */
function onWorkerStop(stop: () => Promise<void>): void {
  const state = (globalThis as { __vitest_worker__?: { onCleanup?: (listener: () => Promise<void>) => void } }).__vitest_worker__;
  // Without it, the stack ends with the worker: its instances' Runtime API connections close, and each instance exits.
  state?.onCleanup?.(stop);
}

function startWorkerStack(): Promise<WorkerStack> {
  workerGlobal.__sharedStack ??= (async () => {
    const stack = await startTestStack('none');
    onWorkerStop(() => stack.stop());
    return { stack, user: undefined };
  })();
  return workerGlobal.__sharedStack;
}

/** Empties the stack's tables (dropped and made again as the stack makes them) and writes `fleet`. */
async function seedAfresh(stack: TestStack, fleet: Fleet | 'none'): Promise<void> {
  const { dataTable, auditTable, sampleRetentionDays } = stack.config;
  const client = stack.dynamo as unknown as DynamoDBClient;
  await Promise.all(
    [dataTable, auditTable].map(async (TableName) => {
      try {
        await client.send(new DeleteTableCommand({ TableName }));
      } catch (error) {
        // A file that dropped a table and failed before making it again: the table is made below.
        if ((error as { name?: string }).name !== 'ResourceNotFoundException') throw error;
      }
      // The engine answers DeleteTable while the table is still DELETING; a CreateTable before it is gone fails.
      await waitUntilTableNotExists({ client, minDelay: 0.05, maxDelay: 0.5, maxWaitTime: 10 }, { TableName });
    }),
  );
  await ensureTables(stack.dynamo, { dataTable, auditTable });
  if (fleet !== 'none') await loadFleet(stack.dynamo, { dataTable }, fleet, sampleRetentionDays);
}

/**
 * The worker's stack for this file, its tables holding `fleet` alone, with `env` set on top of its
 * own configuration until `release()`. For a file's beforeAll; `release()` in its afterAll.
 */
export async function sharedStack(fleet: Fleet | 'none', env: Record<string, string> = {}): Promise<SharedStack> {
  const shared = await startWorkerStack();
  const file = expect.getState().testPath ?? 'a test file';
  if (shared.user) throw new Error(`the worker's stack is still held by ${shared.user.file}, which did not release it`);
  const { stack } = shared;
  /** Each variable this file changed: its value before the file's first change, and its value now. */
  const original = new Map<string, string | undefined>();
  const now = new Map<string, string | undefined>();
  const updateEnvironment = (changes: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> => {
    const previous = stack.updateEnvironment(changes);
    for (const [name, value] of Object.entries(previous)) if (!original.has(name)) original.set(name, value);
    for (const [name, value] of Object.entries(changes)) now.set(name, value);
    return previous;
  };
  await seedAfresh(stack, fleet);
  updateEnvironment(env);
  shared.user = { file };
  const handle = Object.create(stack) as SharedStack;
  return Object.assign(handle, {
    updateEnvironment,
    stop(): never {
      throw new Error("the worker's stack is stopped when the worker stops: release() it");
    },
    async release() {
      shared.user = undefined;
      // Each variable must be as the file set it up: its own value for those it passed, the stack's for the others.
      const left = [...original].filter(([name, value]) => now.get(name) !== (name in env ? env[name] : value)).map(([name]) => name);
      stack.updateEnvironment(Object.fromEntries(original));
      if (left.length > 0)
        throw new Error(`${file} left ${left.join(', ')} changed on the worker's stack: a test puts back what it changes`);
    },
  });
}
