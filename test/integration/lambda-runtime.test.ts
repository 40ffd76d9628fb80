import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { functionEnvironment, UNREACHABLE_STACK_VALUES } from '../../infra/local/lambda/environment.js';
import { readFunctionSpecs } from '../../infra/local/lambda/function-specs.js';
import { lambdaRuntime } from '../../infra/local/lambda/runtimes.js';
import { FunctionPool } from '../../infra/local/lambda/sandbox.js';
import { LAMBDA_NODE_MAJOR, LAMBDA_RUNTIME_ID } from '../../infra/local/node-version.js';
import { FIXTURE_FUNCTIONS, fixtureFunctions } from '../helpers/sandbox.js';

/**
 * An instance confined to CPUs by LAMBDA_RUNTIME_CPUS (the bench gives the function a core of its
 * own so): the runtime's Node under taskset, which becomes that Node, so the instance's own process
 * is the one confined, and the sandbox still reads its memory and CPU and stops it by its pid.
 */

const pools: FunctionPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.stop()));
});

/** Lines of /proc/<pid>/status (Linux). */
const status = (pid: number, field: string): string | undefined =>
  new RegExp(`^${field}:\\s+(.+)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim();

describe('Local sandbox: LAMBDA_RUNTIME_CPUS', () => {
  it('runs each instance on the CPUs it lists, as its own process (pid, memory and CPU read from it)', async () => {
    const specs = readFunctionSpecs({ DataTable: 'fixture-data', AuditTable: 'fixture-audit' });
    const spec = specs.observations;
    const runtime = await lambdaRuntime({ LAMBDA_RUNTIME_CPUS: '0' });
    const pool = new FunctionPool({
      spec,
      bundleDir: () => join(FIXTURE_FUNCTIONS, 'observations'),
      runtime,
      environment: () => functionEnvironment(spec, Object.values(specs), UNREACHABLE_STACK_VALUES, {}),
      userEnv: { PATH: process.env.PATH },
      log: () => undefined,
      say: () => undefined,
      idleMs: 60_000,
    });
    pools.push(pool);

    const outcome = await pool.invoke({ queryStringParameters: { do: 'environment' }, requestContext: {} }, randomUUID());

    expect(outcome.type).toBe('buffered');
    const payload = outcome.type === 'buffered' ? (JSON.parse(outcome.payload.toString('utf8')) as { body: string }) : { body: '{}' };
    const { pid, node } = JSON.parse(payload.body) as { pid: number; node: string };
    const [instance] = pool.stats().instances;
    expect(instance?.pid).toBe(pid);
    expect(node).toBe(runtime.node.version);
    expect(status(pid, 'Cpus_allowed_list')).toBe('0');
    expect(readlinkSync(`/proc/${pid}/exe`)).toBe(realpathSync(runtime.node.path));
    expect(instance?.cpuMs).toBeGreaterThan(0);
  });
});

describe("Local functions: the Node they run on, said where it is not Lambda's", () => {
  it.each([
    [
      '20.20.2',
      'machine',
      [`functions run on this machine's Node 20.20.2, not Lambda's Node ${LAMBDA_NODE_MAJOR} (${LAMBDA_RUNTIME_ID}),`],
    ],
    [`${LAMBDA_NODE_MAJOR}.21.0`, 'package', []],
  ] as const)(
    "says once, as they start on Node %s (%s), which Node that is only when it is not Lambda's major",
    async (version, source, said) => {
      const functions = await fixtureFunctions({}, await lambdaRuntime({}, () => ({ path: process.execPath, version, source })));
      await functions.stop();

      expect(functions.said.map((line) => line.slice(0, line.indexOf(' under')))).toEqual(said);
    },
  );
});
