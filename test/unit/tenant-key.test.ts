import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { tenantKeyLines } from '../../infra/tenant-key-cli.js';
import { tenantUsageKey } from '../../lib/auth/usage-key.js';

/** `npm run tenant-key`: the API key a tenant needs at a stage, the very value the token authorizer names for it. */
describe('CLI: tenant-key', () => {
  it("prints the value the authorizer names for the tenant at that stage, and the commands that add it to the tenants' plan", () => {
    const lines = tenantKeyLines('acme corp/東京', 'prod');

    expect(lines[0]).toBe(`API key value of tenant "acme corp/東京" at stage prod: ${tenantUsageKey('prod', 'acme corp/東京')}`);
    expect(lines[2]).toContain(
      `--name 'endpoint-read-service-prod-tenant-acme_corp___' --value ${tenantUsageKey('prod', 'acme corp/東京')} --enabled`,
    );
    expect(lines[3]).toContain('create-usage-plan-key --usage-plan-id "$TENANT_USAGE_PLAN_ID"');
  });

  it('refuses a missing tenant and a stage that is no stage name, with the usage and exit code 2', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'infra', 'tenant-key-cli.ts'), ...args], { cwd: ROOT, encoding: 'utf8' });

    const missing = run();
    const badStage = run('--tenant', 'acme', '--stage', 'pr od');

    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^--tenant is required .*\nusage: npm run tenant-key/);
    expect(badStage.status).toBe(2);
    expect(badStage.stderr).toMatch(/^--stage must be a stage name/);
    expect(missing.stdout + badStage.stdout).toBe('');
  });
});
