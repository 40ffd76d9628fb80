/**
 * The template resources `npm run package` takes from the service's own code with the stage's
 * values, run by infra/osls-public-api-stage.mjs once osls has compiled the template (osls loads
 * its plugins as plain JavaScript; this runs under tsx). It reads one JSON object on stdin:
 * - `variables`: the environments the template gives the functions behind the doors (the token
 *   authorizer's and the MCP function's), from which lib/config.ts reads the static answers' values
 *   (STATIC_ANSWERS_CONFIG);
 * - `resources`: the public REST API's resources osls made, by path (`/api/mcp` → its logical id);
 * - `service` and `stage`;
 * and writes a CloudFormation `Resources` map on stdout: the static answers (infra/static-answers.ts)
 * and the API key of tokens that name no tenant in the tenants' usage plan (lib/auth/usage-key.ts).
 */
import { readFileSync } from 'node:fs';
import { tenantUsageKey } from '../lib/auth/usage-key.js';
import { STATIC_ANSWERS_CONFIG } from '../lib/config.js';
import { staticAnswerResources } from './static-answers.js';

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

function main(): void {
  const input = JSON.parse(readFileSync(0, 'utf8')) as Input;
  const env: Record<string, string> = {};
  for (const name of STATIC_ANSWERS_CONFIG.variables) {
    const value = input.variables[name];
    if (typeof value === 'string') env[name] = value;
    else if (value !== undefined)
      throw new Error(`the doors' ${name} is not a literal the static answers can be made from: ${JSON.stringify(value)}`);
  }
  const resources = {
    ...staticAnswerResources(STATIC_ANSWERS_CONFIG.parse(env), input.resources),
    ...noTenantKey(input.service, input.stage),
  };
  process.stdout.write(JSON.stringify(resources));
}

try {
  main();
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
