import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { SDK_NODE_MAJOR, SDK_NODE_VERSION_WARNING_SWITCH } from '../../infra/node-version.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

const run = promisify(execFile);
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const olderThanSdkThreshold = Number.parseInt(process.versions.node, 10) < SDK_NODE_MAJOR;

/**
 * `npm run audit` as its own process: it makes an AWS SDK client and queries the audit table, the
 * moment the SDK prints its Node-version notice. The variable is removed from the environment first
 * (this test process has it, from vitest's config), so only the CLI's own entry point can set it.
 */
async function audit(engine: TestEngine, extra: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DYNAMODB_ENDPOINT: engine.endpoint, AUDIT_TABLE: engine.tables.auditTable };
  delete env[SDK_NODE_VERSION_WARNING_SWITCH];
  return run(TSX, ['local/audit-cli.ts', '--tenant', 'acme'], { cwd: ROOT, env: { ...env, ...extra } });
}

describe('Node versions: the AWS SDK notice that it will need Node 22', () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine();
  });

  afterAll(async () => {
    await engine?.close();
  });

  it(`is not printed by a CLI that reads DynamoDB, here on Node ${process.versions.node}`, async () => {
    const { stderr } = await audit(engine);

    expect(stderr).not.toContain('NodeVersionSupportWarning');
  }, 60_000);

  it.skipIf(!olderThanSdkThreshold)(
    'comes back when the SDK switch is set to false (so the check above would see it)',
    async () => {
      const { stderr } = await audit(engine, { [SDK_NODE_VERSION_WARNING_SWITCH]: 'false' });

      expect(stderr).toContain('NodeVersionSupportWarning');
      expect(stderr).toContain(`will require node >=${SDK_NODE_MAJOR}`);
    },
    60_000,
  );
});
