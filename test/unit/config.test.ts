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

  it('derives the MCP audience from what it is given, and invents no key set path nor address of the broker hop', () => {
    const cfg = parseConfig({ ...FUNCTION_ENVIRONMENT });

    expect(cfg).toMatchObject({
      jwtIssuer: 'https://issuer.example.com/',
      // No guessed `<issuer>/.well-known/jwks.json`: the keys are where the issuer's discovery document says.
      jwksUrl: undefined,
      publicUrl: 'https://api.example.com',
      mcpAudience: 'https://api.example.com/api/mcp',
      tokenEndpoint: undefined,
      observationsUrl: undefined,
    });
    expect(Object.keys(cfg).filter((key) => /port/i.test(key))).toEqual([]);
  });

  it('takes JWKS_URL as the key set, over discovery, when it is set (empty is unset)', () => {
    expect(parseConfig({ ...FUNCTION_ENVIRONMENT, JWKS_URL: 'https://keys.example.com/certs' }).jwksUrl).toBe(
      'https://keys.example.com/certs',
    );
    expect(parseConfig({ ...FUNCTION_ENVIRONMENT, JWKS_URL: '' }).jwksUrl).toBeUndefined();
  });

  it('refuses an issuer that is no http(s) URL, whose discovery document cannot be asked, unless JWKS_URL says where the keys are', () => {
    expect(() => parseConfig({ ...FUNCTION_ENVIRONMENT, JWT_ISSUER: 'my-issuer' })).toThrow(
      new ConfigError(
        'Invalid configuration: JWT_ISSUER: must be an http:// or https:// URL, whose discovery document says where its keys are (or set JWKS_URL), not "my-issuer"; write it with its scheme, e.g. http://my-issuer',
      ),
    );
    expect(parseConfig({ ...FUNCTION_ENVIRONMENT, JWT_ISSUER: 'my-issuer', JWKS_URL: 'https://keys.example.com/certs' }).jwtIssuer).toBe(
      'my-issuer',
    );
  });
});
