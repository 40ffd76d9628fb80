import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../lib/config.js';
import { FUNCTION_ENVIRONMENT } from '../helpers/function-environment.js';

/**
 * The service's configuration holds what a deployed function is given and nothing of the local
 * stack's: no ports, no address on this machine to fall back on. What every function needs is
 * required, as serverless.yml gives it to every function.
 */

describe('Function: parseConfig', () => {
  it('refuses an environment without the issuer and the public URL, naming both (no localhost to fall back on)', () => {
    expect(() => parseConfig({})).toThrow(
      new ConfigError(
        'Invalid configuration: JWT_ISSUER: is required (serverless.yml gives it to every function); PUBLIC_URL: is required (serverless.yml gives it to every function)',
      ),
    );
  });

  it('derives the key set, and the MCP audience, from what it is given, and invents no address of the broker hop', () => {
    const cfg = parseConfig({ ...FUNCTION_ENVIRONMENT });

    expect(cfg).toMatchObject({
      jwtIssuer: 'https://issuer.example.com/',
      jwksUrl: 'https://issuer.example.com/.well-known/jwks.json',
      publicUrl: 'https://api.example.com',
      mcpAudience: 'https://api.example.com/api/mcp',
      tokenEndpoint: undefined,
      observationsUrl: undefined,
    });
    expect(Object.keys(cfg).filter((key) => /port/i.test(key))).toEqual([]);
  });
});
