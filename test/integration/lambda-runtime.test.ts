import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LAMBDA_NODE_MAJOR, LAMBDA_RUNTIME_ID } from '../../infra/node-version.js';
import { runtimeClientModule } from '../../local/lambda/bundles.js';
import { functionEnvironment, UNREACHABLE_STACK_VALUES } from '../../local/lambda/environment.js';
import { readFunctionSpecs } from '../../local/lambda/function-specs.js';
import { lambdaRuntime } from '../../local/lambda/runtimes.js';
import { FunctionPool } from '../../local/lambda/sandbox.js';
import { FIXTURE_FUNCTIONS, fixtureFunctions } from '../helpers/sandbox.js';

/**
 * The local runtime client run by itself against a Runtime API that refuses and fails it. And an
 * instance confined to CPUs by LAMBDA_RUNTIME_CPUS (the bench gives the function a core of its
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

describe('Local runtime client: a Runtime API that refuses or fails its GET /next (a fault injector: the stack’s own Runtime API does not, on demand)', () => {
  it('waits and asks again after a 409, a 500 and a dropped connection, never reading their bodies as an event, then runs the event it is given', async () => {
    const asked: Array<{ method: string; url: string; token: string | undefined }> = [];
    let answer: (body: string) => void = () => undefined;
    const answered = new Promise<string>((resolve) => {
      answer = resolve;
    });
    const faults = ['409', '500', 'drop'];
    const server = createServer((req, res) => {
      asked.push({ method: req.method ?? '', url: req.url ?? '', token: req.headers['lambda-runtime-local-token'] as string | undefined });
      if (req.method === 'GET' && req.url === '/2018-06-01/runtime/invocation/next') {
        const fault = faults.shift();
        if (fault === 'drop') return req.socket.destroy();
        if (fault) {
          res.writeHead(Number(fault), { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
          return res.end('This Runtime API already has a runtime waiting for the next event; an instance asks for one event at a time.\n');
        }
        // The event, once; the runtime's next request is left waiting, as a Runtime API without events leaves it.
        if (asked.filter((a) => a.url.endsWith('/next')).length > 4) return;
        res.writeHead(200, {
          'Content-Type': 'application/json',
          'Lambda-Runtime-Aws-Request-Id': 'event-1',
          'Lambda-Runtime-Deadline-Ms': String(Date.now() + 30_000),
          'Lambda-Runtime-Invoked-Function-Arn': 'arn:aws:lambda:us-east-1:000000000000:function:fixture',
        });
        return res.end(JSON.stringify({ queryStringParameters: { do: 'echo', x: 'y' }, requestContext: {} }));
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        res.writeHead(202, { 'Content-Type': 'application/json' });
        res.end('{"status":"OK"}');
        if (req.url === '/2018-06-01/runtime/invocation/event-1/response') answer(Buffer.concat(chunks).toString('utf8'));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const child = spawn(process.execPath, [await runtimeClientModule()], {
      cwd: join(FIXTURE_FUNCTIONS, 'observations'),
      env: {
        PATH: process.env.PATH,
        AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${(server.address() as AddressInfo).port}`,
        LAMBDA_TASK_ROOT: join(FIXTURE_FUNCTIONS, 'observations'),
        _HANDLER: 'index.handler',
        LAMBDA_RUNTIME_LOCAL_TOKEN: 'the-instance-token',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let exited: number | null | undefined;
    const died = new Promise<never>((_, reject) =>
      child.once('exit', (code) => {
        exited = code;
        reject(new Error(`the runtime client ended (exit code ${code}) before it answered the event`));
      }),
    );
    died.catch(() => undefined);
    try {
      const body = JSON.parse(await Promise.race([answered, died])) as { statusCode: number; body: string };

      expect(body.statusCode).toBe(200);
      expect(JSON.parse(body.body)).toMatchObject({ query: { do: 'echo', x: 'y' } });
      expect(asked.filter((a) => a.url.endsWith('/next')).length).toBeGreaterThanOrEqual(4);
      // A refusal's body taken for an event would have been answered (a response or an error POST of its own):
      // the only answer is the real event's, after exactly the three refused asks and the one that got it.
      expect(asked.filter((a) => a.method === 'POST').map((a) => a.url)).toEqual(['/2018-06-01/runtime/invocation/event-1/response']);
      expect(asked.slice(0, 5).map((a) => `${a.method} ${a.url}`)).toEqual([
        ...Array<string>(4).fill('GET /2018-06-01/runtime/invocation/next'),
        'POST /2018-06-01/runtime/invocation/event-1/response',
      ]);
      expect(new Set(asked.map((a) => a.token))).toEqual(new Set(['the-instance-token']));
      expect(exited).toBeUndefined();
    } finally {
      child.kill();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
