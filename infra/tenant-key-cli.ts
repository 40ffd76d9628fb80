/**
 * `npm run tenant-key -- --tenant T [--stage S]`: the API key a tenant needs at a stage of the
 * public API, and the two AWS CLI commands that set it up (docs/operations.md, Throttling per
 * tenant). API Gateway throttles a tenant by the API key the token authorizer names for it
 * (lib/auth/usage-key.ts), and refuses a tenant whose key is in no usage plan of the stage (403);
 * this prints the key's value (derived from the stage and the tenant, no secret) and the commands
 * that create it and add it to the tenants' default plan. It calls no AWS API itself.
 */
import { parseArgs } from 'node:util';
import { tenantUsageKey } from '../lib/auth/usage-key.js';

const SERVICE = 'endpoint-read-service';
const usage = 'usage: npm run tenant-key -- --tenant T [--stage S] (S: the stage deployed, example by default)';

/** The lines printed for one tenant at one stage: the key's value, then the commands that set it up. */
export function tenantKeyLines(tenant: string, stage: string): string[] {
  const value = tenantUsageKey(stage, tenant);
  const name = `${SERVICE}-${stage}-tenant-${createName(tenant)}`;
  return [
    `API key value of tenant ${JSON.stringify(tenant)} at stage ${stage}: ${value}`,
    'Set it up once (the plan id is the stack output TenantUsagePlanId):',
    `  KEY_ID=$(aws apigateway create-api-key --name '${name}' --value ${value} --enabled --query id --output text)`,
    '  aws apigateway create-usage-plan-key --usage-plan-id "$TENANT_USAGE_PLAN_ID" --key-id "$KEY_ID" --key-type API_KEY',
  ];
}

/** A key name from a tenant id: the characters API key names take, the rest as `_`, at most 64 of them. */
function createName(tenant: string): string {
  return tenant.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || '_';
}

function main(argv: string[]): number {
  let values: { tenant?: string; stage?: string };
  try {
    ({ values } = parseArgs({ args: argv, options: { tenant: { type: 'string' }, stage: { type: 'string' } }, strict: true }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  if (values.tenant === undefined || values.tenant === '') {
    process.stderr.write(`--tenant is required (the tenant id as the tokens' tenant claim carries it).\n${usage}\n`);
    return 2;
  }
  const stage = values.stage ?? 'example';
  if (!/^[A-Za-z0-9_-]+$/.test(stage)) {
    process.stderr.write(`--stage must be a stage name (letters, digits, - and _), not ${JSON.stringify(stage)}.\n${usage}\n`);
    return 2;
  }
  process.stdout.write(`${tenantKeyLines(values.tenant, stage).join('\n')}\n`);
  return 0;
}

if (process.argv[1]?.endsWith('tenant-key-cli.ts')) process.exit(main(process.argv.slice(2)));
