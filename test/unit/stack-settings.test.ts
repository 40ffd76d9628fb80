import { describe, expect, it } from 'vitest';
import type { FunctionName } from '../../infra/build.js';
import { FUNCTION_CONFIGS } from '../../lib/config.js';
import { TUNING_VARIABLES } from '../../local/lambda/environment.js';
import { readFunctionSpecs } from '../../local/lambda/function-specs.js';
import { readStackConfig, readStackPorts, StackConfigError } from '../../local/settings.js';

/**
 * The stack's own configuration (local/settings.ts): what it reads of `npm start`'s
 * environment, the one sentence for a bad variable, and where its values come from when none is
 * set: serverless.yml's stage defaults, else the stack's own choice, else the service's defaults,
 * which it must agree on with lib/config.ts (checked here, since it may not import it).
 */

describe('Function: readStackPorts', () => {
  it('takes the default ports and the embedded engine when nothing is set, and an empty variable as unset', () => {
    expect(readStackPorts({ PORT: ' ' })).toEqual({ port: 3000, privatePort: 3001, dynamoPort: 8000, dynamoEndpoint: undefined });
  });

  it('names every bad variable in one sentence, with the URL a scheme-less endpoint likely meant', () => {
    expect(() => readStackPorts({ PORT: 'abc', PRIVATE_PORT: '70000', DYNAMODB_ENDPOINT: 'localhost:8000' })).toThrow(
      new StackConfigError(
        'Invalid configuration: PORT: must be a port number from 0 to 65535, not "abc"; PRIVATE_PORT: must be a port number from 0 to 65535, not "70000"; DYNAMODB_ENDPOINT: must be an http:// or https:// URL, not "localhost:8000"; write it with its scheme, e.g. http://localhost:8000',
      ),
    );
  });
});

describe('Function: readStackConfig', () => {
  it("signs as the public listener's own issuer, with serverless.yml's stage defaults for the claims and audience it gives the functions", () => {
    const cfg = readStackConfig({}, 4300);

    expect(cfg).toMatchObject({
      jwtIssuer: 'http://localhost:4300',
      publicUrl: 'http://localhost:4300',
      mcpAudience: 'http://localhost:4300/api/mcp',
      jwtAudience: 'endpoint-read-service',
      tenantClaim: 'tenant_id',
      scopeClaim: 'endpoint_groups',
      observationsAudience: 'endpoint-observations',
      brokerClientId: 'local-broker',
      brokerAllowList: ['local-broker'],
      mcpAllowedOrigins: [],
      ownOrigins: ['http://localhost:4300', 'http://127.0.0.1:4300', 'http://[::1]:4300'],
      clientIdDocumentDevOrigins: [],
    });
  });

  it('takes what the variables say, an allow list falling back to the broker it registers as serverless.yml does', () => {
    const cfg = readStackConfig(
      {
        PUBLIC_URL: 'https://api.example.test/',
        TENANT_CLAIM: 'org',
        BROKER_CLIENT_ID: 'mcp-broker',
        MCP_ALLOWED_ORIGINS: 'https://app.example',
      },
      4300,
    );

    expect(cfg).toMatchObject({
      publicUrl: 'https://api.example.test',
      mcpAudience: 'https://api.example.test/api/mcp',
      tenantClaim: 'org',
      brokerAllowList: ['mcp-broker'],
      mcpAllowedOrigins: ['https://app.example'],
      ownOrigins: ['https://api.example.test'],
    });
  });

  it('refuses browser origins that are not exact ones, as the MCP door would', () => {
    expect(() => readStackConfig({ MCP_ALLOWED_ORIGINS: '*' }, 4300)).toThrow(
      'Invalid configuration: MCP_ALLOWED_ORIGINS: must list exact browser origins such as https://app.example.com, comma-separated (* and null are refused), not "*"',
    );
  });

  it('takes the development origins of client ID metadata documents as exact origins only', () => {
    const cfg = readStackConfig({ CLIENT_ID_DOCUMENT_DEV_ORIGINS: 'http://localhost:6274, http://127.0.0.1:8080' }, 4300);

    expect(cfg.clientIdDocumentDevOrigins).toEqual(['http://localhost:6274', 'http://127.0.0.1:8080']);
    for (const value of ['*', 'null', 'http://localhost:6274/client.json'])
      expect(() => readStackConfig({ CLIENT_ID_DOCUMENT_DEV_ORIGINS: value }, 4300)).toThrow(
        `Invalid configuration: CLIENT_ID_DOCUMENT_DEV_ORIGINS: must list exact origins such as https://app.example.com, comma-separated (* and null are refused), not ${JSON.stringify(value)}`,
      );
  });
});

describe('Constant: TUNING_VARIABLES (local/lambda/environment.ts)', () => {
  it("with what serverless.yml gives each function, the region and the local additions, passes on every variable each function's schema reads", () => {
    const specs = readFunctionSpecs();
    const given = new Set(Object.values(specs).flatMap((spec) => Object.keys(spec.environment)));
    const read = new Set<string>(Object.values(FUNCTION_CONFIGS).flatMap((schema) => schema.variables));

    for (const [name, schema] of Object.entries(FUNCTION_CONFIGS) as Array<[FunctionName, (typeof FUNCTION_CONFIGS)[FunctionName]]>) {
      const spec = specs[name];
      // AWS_REGION is the runtime's (runtimeEnvironment); DYNAMODB_ENDPOINT and BROKER_CLIENT_SECRET the stack's additions.
      const passed = new Set([
        ...Object.keys(spec.environment),
        ...TUNING_VARIABLES,
        'AWS_REGION',
        ...('DATA_TABLE' in spec.environment ? ['DYNAMODB_ENDPOINT'] : []),
        ...('BROKER_CLIENT_SECRET_ARN' in spec.environment ? ['BROKER_CLIENT_SECRET'] : []),
      ]);
      expect(
        schema.variables.filter((variable) => !passed.has(variable)),
        name,
      ).toEqual([]);
    }
    expect(TUNING_VARIABLES.filter((name) => given.has(name) || !read.has(name))).toEqual([]);
  });
});
