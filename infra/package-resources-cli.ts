/**
 * The template resources `npm run package` takes from the service's own code with the stage's
 * values, run by infra/osls-public-api-stage.mjs once osls has compiled the template (osls loads
 * its plugins as plain JavaScript; this runs under tsx). It reads one JSON object on stdin:
 * - `variables`: the MCP function's environment as the template gives it, from which the static
 *   answers' values are read by lib/config.ts itself (STATIC_ANSWER_VARIABLES only), exactly as
 *   the function read them when it answered these routes;
 * - `resources`: the public REST API's resources osls made, by path (`/api/mcp` → its logical id);
 * - `service` and `stage`;
 * and writes a CloudFormation `Resources` map on stdout: the static answers (infra/static-answers.ts)
 * and the API key of tokens that name no tenant in the tenants' usage plan (lib/auth/usage-key.ts).
 */
import { readFileSync } from 'node:fs';
import { tenantUsageKey } from '../lib/auth/usage-key.js';
import { STATIC_ANSWER_VARIABLES, staticAnswerResources } from './static-answers.js';

interface Input {
  variables: Record<string, unknown>;
  resources: Record<string, string>;
  service: string;
  stage: string;
}

/** The API key of tokens that name no tenant (the handler refuses them with its 403, after the gateway counted them on this key). */
function noTenantKey(service: string, stage: string): Record<string, unknown> {
  return {
    NoTenantUsageKey: {
      Type: 'AWS::ApiGateway::ApiKey',
      Properties: {
        Name: `${service}-${stage}-no-tenant`,
        Description: 'Usage identifier of tokens that name no tenant (refused by the handlers with a 403)',
        Enabled: true,
        Value: tenantUsageKey(stage, ''),
      },
    },
    NoTenantUsagePlanKey: {
      Type: 'AWS::ApiGateway::UsagePlanKey',
      Properties: { KeyId: { Ref: 'NoTenantUsageKey' }, KeyType: 'API_KEY', UsagePlanId: { Ref: 'TenantUsagePlan' } },
    },
  };
}

async function main(): Promise<void> {
  const input = JSON.parse(readFileSync(0, 'utf8')) as Input;
  for (const name of STATIC_ANSWER_VARIABLES) {
    const value = input.variables[name];
    if (value === undefined) delete process.env[name];
    else if (typeof value === 'string') process.env[name] = value;
    else throw new Error(`the MCP function's ${name} is not a literal the static answers can be made from: ${JSON.stringify(value)}`);
  }
  // Read as the function reads its configuration: lib/config.ts parses the environment when it loads.
  const { config } = await import('../lib/config.js');
  const resources = { ...staticAnswerResources(config(), input.resources), ...noTenantKey(input.service, input.stage) };
  process.stdout.write(JSON.stringify(resources));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
