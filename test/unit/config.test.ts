import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import {
  AUTHORIZER_CONFIG,
  ConfigError,
  FUNCTION_CONFIGS,
  INVENTORY_CONFIG,
  MCP_CONFIG,
  OBSERVATIONS_CONFIG,
  STATIC_ANSWERS_CONFIG,
} from '../../lib/config.js';
import { FUNCTION_ENVIRONMENT } from '../helpers/function-environment.js';

/**
 * Each function's configuration holds what a deployed function is given and nothing of the local
 * stack's: no ports, no address on this machine to fall back on, no default naming the local
 * broker. What a function needs is required of that function, and refused at its init, naming the
 * variable; what it does not read is not its configuration.
 */

describe('Constant: FUNCTION_CONFIGS (a schema per function)', () => {
  it('reads for each function only its own variables: the authorizer no table, role or ticket system, the inventory no issuer', () => {
    expect(AUTHORIZER_CONFIG.variables).toEqual([
      'TENANT_CLAIM',
      'ENDPOINT_SCOPE_CLAIM',
      'SCOPE_CLAIM',
      'JWT_ISSUER',
      'JWT_AUDIENCE',
      'JWKS_URL',
      'MCP_AUDIENCE',
      'PUBLIC_URL',
    ]);
    expect(INVENTORY_CONFIG.variables).toEqual([
      'AWS_REGION',
      'DATA_TABLE',
      'DYNAMODB_ENDPOINT',
      'DYNAMODB_TIMEOUT_MS',
      'DYNAMODB_MAX_ATTEMPTS',
      'TENANT_CLAIM',
      'ENDPOINT_SCOPE_CLAIM',
      'REQUIRED_SCOPE',
      'ONLINE_GRACE_SECONDS',
      'PUBLIC_URL',
      'TENANT_FENCING',
      'TENANT_READ_ROLE_ARN',
    ]);
    for (const name of ['AUDIT_TABLE', 'TENANT_AUDIT_ROLE_ARN', 'TICKET_SYSTEM', 'DATA_TABLE', 'TENANT_READ_ROLE_ARN', 'BROKER_ALLOW_LIST'])
      expect(AUTHORIZER_CONFIG.variables).not.toContain(name);
    expect(MCP_CONFIG.variables).not.toContain('JWT_ISSUER');
    expect(MCP_CONFIG.variables).not.toContain('AUDIT_TABLE');
    expect(OBSERVATIONS_CONFIG.variables).not.toContain('PUBLIC_URL');
    expect(OBSERVATIONS_CONFIG.variables).toEqual(expect.arrayContaining(['AUDIT_TABLE', 'TENANT_AUDIT_ROLE_ARN', 'BROKER_ALLOW_LIST']));
  });

  it('gives each function exactly the settings its schema names, frozen', () => {
    for (const schema of Object.values(FUNCTION_CONFIGS)) {
      const cfg = schema.parse({ ...FUNCTION_ENVIRONMENT });
      expect(Object.isFrozen(cfg)).toBe(true);
    }
    const settingsOf = (schema: (typeof FUNCTION_CONFIGS)[keyof typeof FUNCTION_CONFIGS]): string[] =>
      Object.keys(schema.parse({ ...FUNCTION_ENVIRONMENT })).sort();
    const store = ['region', 'dynamoEndpoint', 'dynamoTimeoutMs', 'dynamoMaxAttempts', 'tenantFencing', 'tenantReadRoleArn'];
    const publicCaller = ['publicUrl', 'requiredScope', 'tenantClaim', 'scopeClaim'];

    expect(settingsOf(AUTHORIZER_CONFIG)).toEqual(
      ['jwtIssuer', 'jwksUrl', 'jwtAudience', 'mcpAudience', 'tenantClaim', 'scopeClaim', 'oauthScopeClaim'].sort(),
    );
    expect(settingsOf(INVENTORY_CONFIG)).toEqual([...publicCaller, ...store, 'dataTable', 'onlineGraceSeconds'].sort());
    expect(settingsOf(OBSERVATIONS_CONFIG)).toEqual(
      [
        ...['jwtIssuer', 'jwksUrl', 'observationsAudience', 'observationsScope', 'oauthScopeClaim', 'tenantClaim', 'scopeClaim'],
        ...['brokerClaim', 'brokerAllowList', 'ticketSystem', ...store, 'dataTable', 'auditTable', 'tenantAuditRoleArn'],
        ...['onlineGraceSeconds', 'observationTtlSeconds', 'sampleRetentionDays'],
      ].sort(),
    );
    expect(settingsOf(MCP_CONFIG)).toEqual(
      [
        ...[...publicCaller, 'mcpAllowedOrigins', 'upstreamTimeoutMs', 'ticketSystem', ...store, 'dataTable', 'onlineGraceSeconds'],
        ...['brokerClientId', 'brokerSecret', 'tokenEndpoint', 'observationsUrl', 'observationsAudience', 'observationsScope'],
      ].sort(),
    );
  });
});

describe('Function: a schema’s parse (at the function’s init)', () => {
  it('refuses an environment without what the function cannot do without, naming every variable (no localhost to fall back on)', () => {
    expect(() => AUTHORIZER_CONFIG.parse({})).toThrow(
      new ConfigError(
        'Invalid configuration: JWT_ISSUER: is required (serverless.yml gives it to this function); PUBLIC_URL: is required (serverless.yml gives it to this function)',
      ),
    );
    expect(() => INVENTORY_CONFIG.parse({})).toThrow(
      new ConfigError('Invalid configuration: PUBLIC_URL: is required (serverless.yml gives it to this function)'),
    );
    expect(() => OBSERVATIONS_CONFIG.parse({})).toThrow(
      new ConfigError(
        'Invalid configuration: JWT_ISSUER: is required (serverless.yml gives it to this function); BROKER_ALLOW_LIST: is required (serverless.yml gives it to this function)',
      ),
    );
  });

  it("checks the MCP door's hop at init: its client id, secret, token endpoint and the private operation's URL", () => {
    expect(() => MCP_CONFIG.parse({ PUBLIC_URL: 'https://api.example.com' })).toThrow(
      new ConfigError(
        'Invalid configuration: BROKER_CLIENT_ID: is required (serverless.yml gives it to this function); ' +
          'TOKEN_ENDPOINT: is required (serverless.yml gives it to this function); ' +
          'OBSERVATIONS_URL: is required (serverless.yml gives it to this function)',
      ),
    );
    // The rule across the two secret variables is judged once every variable is valid on its own.
    const { BROKER_CLIENT_SECRET_ARN: _arn, ...withoutSecret } = FUNCTION_ENVIRONMENT;
    expect(() => MCP_CONFIG.parse(withoutSecret)).toThrow(
      new ConfigError(
        'Invalid configuration: BROKER_CLIENT_SECRET_ARN: is required (or BROKER_CLIENT_SECRET, the secret itself, where no secret store holds it)',
      ),
    );
    expect(() => MCP_CONFIG.parse({ ...FUNCTION_ENVIRONMENT, TOKEN_ENDPOINT: 'issuer.example.com/token' })).toThrow(
      'TOKEN_ENDPOINT: must be an http:// or https:// URL, not "issuer.example.com/token"; write it with its scheme, e.g. http://issuer.example.com/token',
    );
  });

  it('names no broker by default: an observations function must be told the brokers it accepts', () => {
    expect(() => OBSERVATIONS_CONFIG.parse({ ...FUNCTION_ENVIRONMENT, BROKER_ALLOW_LIST: ' , ' })).toThrow(
      'BROKER_ALLOW_LIST: must name at least one broker client id',
    );
    expect(OBSERVATIONS_CONFIG.parse({ ...FUNCTION_ENVIRONMENT, BROKER_ALLOW_LIST: 'mcp-broker, other' }).brokerAllowList).toEqual([
      'mcp-broker',
      'other',
    ]);
  });

  it('derives the MCP audience from what it is given, and invents no key set path', () => {
    const cfg = AUTHORIZER_CONFIG.parse({ ...FUNCTION_ENVIRONMENT });

    expect(cfg).toMatchObject({
      jwtIssuer: 'https://issuer.example.com/',
      // No guessed `<issuer>/.well-known/jwks.json`: the keys are where the issuer's discovery document says.
      jwksUrl: undefined,
      mcpAudience: 'https://api.example.com/api/mcp',
    });
    for (const schema of Object.values(FUNCTION_CONFIGS))
      expect(Object.keys(schema.parse({ ...FUNCTION_ENVIRONMENT })).filter((key) => /port/i.test(key))).toEqual([]);
  });

  it('takes JWKS_URL as the key set, over discovery, when it is set (empty is unset)', () => {
    expect(AUTHORIZER_CONFIG.parse({ ...FUNCTION_ENVIRONMENT, JWKS_URL: 'https://keys.example.com/certs' }).jwksUrl).toBe(
      'https://keys.example.com/certs',
    );
    expect(AUTHORIZER_CONFIG.parse({ ...FUNCTION_ENVIRONMENT, JWKS_URL: '' }).jwksUrl).toBeUndefined();
  });

  it('refuses an issuer that is no http(s) URL, whose discovery document cannot be asked, unless JWKS_URL says where the keys are', () => {
    for (const schema of [AUTHORIZER_CONFIG, OBSERVATIONS_CONFIG]) {
      expect(() => schema.parse({ ...FUNCTION_ENVIRONMENT, JWT_ISSUER: 'my-issuer' })).toThrow(
        new ConfigError(
          'Invalid configuration: JWT_ISSUER: must be an http:// or https:// URL, whose discovery document says where its keys are (or set JWKS_URL), not "my-issuer"; write it with its scheme, e.g. http://my-issuer',
        ),
      );
      expect(schema.parse({ ...FUNCTION_ENVIRONMENT, JWT_ISSUER: 'my-issuer', JWKS_URL: 'https://keys.example.com/certs' }).jwtIssuer).toBe(
        'my-issuer',
      );
    }
  });

  it('asks for the tenant roles a function assumes when fencing is on, and only those', () => {
    const fenced = { ...FUNCTION_ENVIRONMENT, TENANT_FENCING: 'iam' };

    expect(() => INVENTORY_CONFIG.parse(fenced)).toThrow(
      new ConfigError('Invalid configuration: TENANT_READ_ROLE_ARN: is required when TENANT_FENCING is iam'),
    );
    expect(() => OBSERVATIONS_CONFIG.parse(fenced)).toThrow(
      new ConfigError(
        'Invalid configuration: TENANT_READ_ROLE_ARN: is required when TENANT_FENCING is iam; TENANT_AUDIT_ROLE_ARN: is required when TENANT_FENCING is iam',
      ),
    );
    expect(INVENTORY_CONFIG.parse({ ...fenced, TENANT_READ_ROLE_ARN: 'arn:aws:iam::123456789012:role/read' }).tenantFencing).toBe('iam');
  });

  it('ignores the variables a function does not read, as Lambda gives it more (its runtime, Powertools)', () => {
    expect(INVENTORY_CONFIG.parse({ ...FUNCTION_ENVIRONMENT, TOKEN_ENDPOINT: 'not a url', AUDIT_TABLE: 'x' })).not.toHaveProperty(
      'auditTable',
    );
  });
});

describe('Constant: STATIC_ANSWERS_CONFIG (the public API’s own answers)', () => {
  it("reads the doors' values: the issuer and audience the authorizer checks, the scope and origins the MCP door admits", () => {
    expect([...STATIC_ANSWERS_CONFIG.variables].sort()).toEqual(
      ['JWT_ISSUER', 'MCP_ALLOWED_ORIGINS', 'MCP_AUDIENCE', 'PUBLIC_URL', 'REQUIRED_SCOPE'].sort(),
    );
    const doors = new Set([...AUTHORIZER_CONFIG.variables, ...MCP_CONFIG.variables]);
    expect(STATIC_ANSWERS_CONFIG.variables.filter((name) => !doors.has(name))).toEqual([]);
  });
});

describe("Docs: the README's table of the service's variables", () => {
  it('says which functions read each variable, as their schemas do, and names every variable a schema reads', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('| variable | read by | default | meaning |'));
    const rows = table
      .split('\n')
      .slice(2)
      .filter((line) => line.startsWith('| `'));
    const LETTERS: Record<string, keyof typeof FUNCTION_CONFIGS> = { i: 'inventory', o: 'observations', m: 'mcp', a: 'authorizer' };
    const documented = new Map<string, string[]>();
    for (const row of rows) {
      const [names = '', readBy = ''] = row.split(' | ');
      if (!/^[ioma ]+$/.test(readBy.trim())) continue;
      for (const [, name] of names.matchAll(/`([A-Z][A-Z0-9_]*)`/g))
        documented.set(
          name!,
          readBy
            .trim()
            .split(' ')
            .map((letter) => LETTERS[letter]!)
            .sort(),
        );
    }
    const read = new Map<string, string[]>();
    for (const [fn, schema] of Object.entries(FUNCTION_CONFIGS))
      for (const name of schema.variables) read.set(name, [...(read.get(name) ?? []), fn]);

    expect(Object.fromEntries([...documented].sort())).toEqual(Object.fromEntries([...read].map(([n, fns]) => [n, fns.sort()]).sort()));
  });
});
