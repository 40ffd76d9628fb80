import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { INVENTORY_HEAP_FLAGS } from '../../infra/inventory-heap.js';
import { SDK_NODE_MAJOR } from '../../infra/node-version.js';
import { readFunctionSpecs } from '../../local/lambda/function-specs.js';
import { localDirWithKey } from '../helpers/local-dir.js';
import { environmentOf } from '../helpers/sandbox.js';
import { startOnFreePorts, startTestStack, type TestStack, withTokens } from '../helpers/stack.js';

/** A tools/list at the MCP door: one invocation of the MCP function (its preflight and the RFC 9728 documents are static answers, no function's). */
const toolsList = async (stack: TestStack): Promise<Response> =>
  fetch(`${stack.publicUrl}/api/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${await stack.mcpToken()}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

/**
 * The deployed functions in their sandboxes on the local stack: each instance a process of its
 * own with exactly the environment serverless.yml gives its function, and `npm start`'s rebuild:
 * an edited source file served by the next instance, without a restart.
 */

/** The variables Lambda's runtime sets in every execution environment (AWS's "defined runtime environment variables"). */
const LAMBDA_RUNTIME_VARIABLES = [
  '_HANDLER',
  'AWS_ACCESS_KEY_ID',
  'AWS_DEFAULT_REGION',
  'AWS_EXECUTION_ENV',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_INITIALIZATION_TYPE',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  'AWS_LAMBDA_LOG_STREAM_NAME',
  'AWS_LAMBDA_RUNTIME_API',
  'AWS_REGION',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_XRAY_DAEMON_ADDRESS',
  'LAMBDA_RUNTIME_DIR',
  'LAMBDA_TASK_ROOT',
  'LANG',
  'PATH',
  'TZ',
];

/**
 * The local stack's own additions (docs/local-stack.md), and the Powertools switches the test run
 * sets; the runtime client's token to its Runtime API, which it takes out of the environment before
 * the handler loads, is in the environment the process started with.
 */
const LOCAL_ONLY = [
  'DYNAMODB_ENDPOINT',
  'LAMBDA_RUNTIME_LOCAL_TOKEN',
  'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
  'POWERTOOLS_DEV',
  'POWERTOOLS_METRICS_DISABLED',
];

describe('E2E: each function in a sandbox of its own, with its own environment', () => {
  let stack: TestStack;
  const specs = readFunctionSpecs();
  /** What the stack says (access lines, and its lines about the functions). */
  const said: string[] = [];

  beforeAll(async () => {
    stack = await startTestStack(
      { tenants: [{ tenant_id: 'acme', agents: [{ agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] }] },
      {},
      { quiet: false, say: (line) => said.push(line) },
    );
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const instancePid = (name: 'inventory' | 'mcp'): number => {
    const [instance] = stack.functions.stats(name).instances;
    if (!instance) throw new Error(`no instance of ${name} runs`);
    return instance.pid;
  };

  it('starts the inventory with its own variables and memory, none of the MCP function’s, and nothing else but Lambda’s and the few local ones', async () => {
    const res = await fetch(`${stack.publicUrl}/api/agents`, { headers: { Authorization: `Bearer ${await stack.token()}` } });
    await res.arrayBuffer();
    await toolsList(stack).then((r) => r.arrayBuffer());

    const inventory = environmentOf(instancePid('inventory'));
    const mcp = environmentOf(instancePid('mcp'));
    const providerAndOwn = Object.keys(specs.inventory.environment);
    const mcpOwn = Object.keys(specs.mcp.environment).filter((name) => !providerAndOwn.includes(name));

    expect(res.status).toBe(200);
    expect(mcpOwn).toEqual(
      expect.arrayContaining(['MCP_ALLOWED_ORIGINS', 'TOKEN_ENDPOINT', 'BROKER_CLIENT_ID', 'OBSERVATIONS_URL', 'UPSTREAM_TIMEOUT_MS']),
    );
    for (const name of [...mcpOwn, 'BROKER_CLIENT_SECRET']) expect(inventory, name).not.toHaveProperty(name);
    for (const name of Object.keys(inventory))
      expect([...providerAndOwn, ...LAMBDA_RUNTIME_VARIABLES, ...LOCAL_ONLY], name).toContain(name);
    // The SDK's Node-version notice is switched off only where the sandbox's own Node would print it.
    const sandboxNode = execFileSync(readlinkSync(`/proc/${instancePid('inventory')}/exe`), ['-p', 'process.versions.node'], {
      encoding: 'utf8',
    });
    expect(inventory.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe(
      Number.parseInt(sandboxNode, 10) < SDK_NODE_MAJOR ? 'true' : undefined,
    );
    expect(inventory).toMatchObject({
      NODE_OPTIONS: ['--enable-source-maps', ...INVENTORY_HEAP_FLAGS].join(' '),
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
      AWS_LAMBDA_FUNCTION_NAME: 'endpoint-read-service-local-inventory',
      DATA_TABLE: stack.config.dataTable,
      TENANT_FENCING: 'off',
    });
    // The MCP door's own: its secret in place of the ARN only AWS can read.
    expect(mcp).toMatchObject({ TOKEN_ENDPOINT: stack.config.tokenEndpoint, BROKER_CLIENT_SECRET: stack.brokerSecret });
    // Each only what it reads: no MCP audience (the authorizer's), no audit table (the observations function's).
    expect(mcp).not.toHaveProperty('MCP_AUDIENCE');
    expect(mcp).not.toHaveProperty('AUDIT_TABLE');
    expect(mcp).not.toHaveProperty('BROKER_CLIENT_SECRET_ARN');
    expect(mcp.NODE_OPTIONS).toBe('--enable-source-maps');
    // The door admits no origin it is not given: the stack gives it its own, by each loopback name.
    expect(mcp.MCP_ALLOWED_ORIGINS?.split(',')).toEqual(stack.config.ownOrigins);
  });
  it('answers a function whose variable is bad with the text/plain 502 and says why in one sentence, and goes on serving the others', async () => {
    // UPSTREAM_TIMEOUT_MS is the MCP function's own: its next instance cannot start.
    const previous = stack.updateEnvironment({ UPSTREAM_TIMEOUT_MS: 'soon' });
    let failed: Response;
    let inventory: Response;
    try {
      failed = await toolsList(stack);
      inventory = await fetch(`${stack.publicUrl}/api/agents`, { headers: { Authorization: `Bearer ${await stack.token()}` } });
    } finally {
      stack.updateEnvironment(previous);
    }
    const next = await toolsList(stack);

    expect(failed.status).toBe(502);
    expect(failed.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await failed.text()).toMatch(/^The service failed to answer; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
    expect(said).toContainEqual(
      'mcp: init failed (ConfigError: Invalid configuration: UPSTREAM_TIMEOUT_MS: must be a whole number above 0, not "soon"); the next request starts a new instance.',
    );
    expect(inventory.status).toBe(200);
    expect(next.status).toBe(200);
  });
});

describe('E2E: npm start rebuilds a function whose source changed', () => {
  let stack: TestStack;
  let sources: string;
  /** The title of the MCP door's first tool, as its function answers tools/list. */
  const firstToolTitle = async (): Promise<string> =>
    ((await (await toolsList(stack)).json()) as { result: { tools: Array<{ title: string }> } }).result.tools[0]!.title;

  beforeAll(async () => {
    // A copy of the sources to edit, under node_modules so that their imports find the project's packages.
    sources = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'rebuild-'));
    for (const folder of ['functions', 'lib']) cpSync(join(ROOT, folder), join(sources, folder), { recursive: true });
    stack = withTokens(
      await startOnFreePorts({
        seed: 'none',
        localDir: await localDirWithKey('rebuild-'),
        bundlesDir: undefined,
        // The MCP function (the one this test calls) and the token authorizer in front of its door, built from the copy and watched.
        build: { dir: join(sources, 'dist'), root: sources, functions: ['mcp', 'authorizer'] },
      }),
    );
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(sources, { recursive: true, force: true });
  });

  it('serves an edited lib/ file from the next instance, without a restart, once esbuild rebuilt the bundle', async () => {
    const before = await firstToolTitle();
    const file = join(sources, 'lib', 'mcp', 'tools.ts');

    writeFileSync(file, readFileSync(file, 'utf8').replaceAll("'Endpoint health dashboard'", "'Endpoint health dashboard (edited)'"));
    let after = before;
    for (let waited = 0; waited < 30_000 && after === before; waited += 200) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      after = await firstToolTitle();
    }

    expect(before).toBe('Endpoint health dashboard');
    expect(after).toBe('Endpoint health dashboard (edited)');
    expect(stack.functions.stats('mcp').coldStarts).toBe(2);
  });
});
