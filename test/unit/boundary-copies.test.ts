import fc from 'fast-check';
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWTHeaderParameters, SignJWT } from 'jose';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { GATEWAY_RESPONSES, type GatewayResponseType as TemplateGatewayResponseType } from '../../infra/gateway-responses.js';
import type { MockMethod as TemplateMockMethod } from '../../infra/static-answers.js';
import { DOORS, doorAudience, doorResource } from '../../lib/auth/public-doors.js';
import { verifyBearerToken } from '../../lib/auth/verify.js';
import { FUNCTION_CONFIGS, OBSERVATIONS_CONFIG } from '../../lib/config.js';
import { parseFailureBody, failureBody as serviceFailureBody } from '../../lib/responses.js';
import { isAwsEndpoint as serviceIsAwsEndpoint } from '../../lib/store/client.js';
import { failureText, sentenceOf } from '../../local/failure.js';
import { GATEWAY_RESPONSE_TYPES, type GatewayResponseType, type MockMethod } from '../../local/public-api-answers.js';
import { audienceAt, DOOR_PATHS, doorResources, readStackConfig, SERVICE_DEFAULTS } from '../../local/settings.js';
import { isAwsEndpoint } from '../../local/store-client.js';
import { checkToken, TokenRefusal } from '../../local/token-check.js';
import { FUNCTION_ENVIRONMENT } from '../helpers/function-environment.js';
import { fixtureGatewayAnswers } from '../helpers/sandbox.js';

/**
 * The copies across the boundary: the local stack takes nothing of lib/ but the data format
 * (test/unit/stack-boundary.test.ts), so where it must agree with the service on a rule it keeps
 * its own copy, named at the copy, and each is held here to its original, on the inputs that tell
 * them apart. A change to either side that the other does not follow fails here.
 */

describe('Copy: isAwsEndpoint (local/store-client.ts, of lib/store/client.ts)', () => {
  it('tells AWS endpoints from engines as the service does, on named cases and on any host', () => {
    const named = [
      'https://dynamodb.us-east-1.amazonaws.com',
      'https://dynamodb.cn-north-1.amazonaws.com.cn',
      'https://vpce-1.dynamodb.eu-west-1.vpce.amazonaws.com',
      'https://dynamodb.us-east-1.api.aws',
      'http://127.0.0.1:8000',
      'http://localhost:8000',
      'http://dynamodb-local:8000',
      'https://amazonaws.com.example.org',
      'https://notamazonaws.com',
      'HTTPS://DYNAMODB.US-EAST-1.AMAZONAWS.COM',
    ];
    for (const endpoint of named) expect(isAwsEndpoint(endpoint), endpoint).toBe(serviceIsAwsEndpoint(endpoint));

    const label = fc.stringMatching(/^[a-z0-9-]{1,12}$/);
    const host = fc
      .tuple(
        fc.array(label, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('', '.amazonaws.com', '.amazonaws.com.cn', '.api.aws', '.aws', '.com'),
      )
      .map(([labels, suffix]) => `${labels.join('.')}${suffix}`);
    fc.assert(
      fc.property(host, fc.constantFrom('http', 'https'), (name, scheme) => {
        const endpoint = `${scheme}://${name}:443`;
        const verdict = (check: (e: string) => boolean): boolean | 'not a URL' => {
          try {
            return check(endpoint);
          } catch {
            return 'not a URL';
          }
        };
        return verdict(isAwsEndpoint) === verdict(serviceIsAwsEndpoint);
      }),
    );
  });
});

describe('Copy: the list rule of a comma-separated variable (local/settings.ts, of lib/config.ts)', () => {
  it('reads BROKER_ALLOW_LIST into the same names as the functions do, whatever the commas and spaces', () => {
    const piece = fc.constantFrom('a', 'broker-1', ' ', ',', ' , ', ',,', 'mcp broker', '\t');
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 8 }).map((pieces) => pieces.join('')),
        (value) => {
          let service: readonly string[];
          try {
            service = OBSERVATIONS_CONFIG.parse({ ...FUNCTION_ENVIRONMENT, BROKER_ALLOW_LIST: value }).brokerAllowList;
          } catch {
            // The function refuses a list that names no broker; the stack reads a blank one as its own
            // broker and one of commas only as none (the functions it starts then refuse it the same way).
            expect(value.split(',').every((name) => name.trim() === '')).toBe(true);
            expect(readStackConfig({ BROKER_ALLOW_LIST: value }, 3000).brokerAllowList).toEqual(
              value.trim() === '' ? readStackConfig({}, 3000).brokerAllowList : [],
            );
            return true;
          }
          expect(readStackConfig({ BROKER_ALLOW_LIST: value }, 3000).brokerAllowList).toEqual(service);
          return true;
        },
      ),
    );
  });
});

describe("Copy: the service's defaults the stack reads too (SERVICE_DEFAULTS, local/settings.ts, of lib/config.ts)", () => {
  it("agrees with the service's own defaults where it reads a variable the functions read too", () => {
    // Every function's settings, each with the service's defaults where nothing is set.
    const service = Object.assign({}, ...Object.values(FUNCTION_CONFIGS).map((schema) => schema.parse({ ...FUNCTION_ENVIRONMENT })));

    expect(SERVICE_DEFAULTS).toEqual({
      region: service.region,
      dataTable: service.dataTable,
      auditTable: service.auditTable,
      jwtAudience: service.jwtAudience,
      onlineGraceSeconds: service.onlineGraceSeconds,
      sampleRetentionDays: service.sampleRetentionDays,
      dynamoTimeoutMs: service.dynamoTimeoutMs,
      dynamoMaxAttempts: service.dynamoMaxAttempts,
      requiredScope: service.requiredScope,
      observationsScope: service.observationsScope,
      observationsAudience: service.observationsAudience,
      tenantClaim: service.tenantClaim,
      scopeClaim: service.scopeClaim,
    });
  });
});

describe('Copy: the doors (DOOR_PATHS, doorResources, audienceAt in local/settings.ts, of lib/auth/public-doors.ts)', () => {
  it('names the same paths, resource identifiers and audiences as the service', () => {
    const cfg = {
      publicUrl: 'https://api.example.com',
      jwtAudience: 'endpoint-read-service',
      mcpAudience: 'https://api.example.com/api/mcp',
    };

    expect(DOOR_PATHS).toEqual({ inventory: DOORS.inventory.resource, mcp: DOORS.mcp.resource });
    expect([...doorResources(cfg)]).toEqual(
      expect.arrayContaining([
        [doorResource(cfg, 'mcp'), doorAudience(cfg, 'mcp')],
        [doorResource(cfg, 'inventory'), doorAudience(cfg, 'inventory')],
      ]),
    );
    expect(doorResources(cfg).size).toBe(2);
    for (const door of Object.values(DOORS)) expect(audienceAt(cfg, door.resource)).toBe(doorAudience(cfg, door.name));
    expect(audienceAt(cfg, '/api/mcp/endpoint')).toBeUndefined();
  });
});

describe('Copy: the failure form (local/failure.ts, of lib/responses.ts)', () => {
  it('writes and reads a failure body as the service does', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.uuid(), (sentence, requestId) => {
        expect(failureText(sentence, requestId)).toBe(serviceFailureBody(sentence, requestId));
        return true;
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (body) => {
        expect(sentenceOf(body)).toBe(parseFailureBody(body)?.sentence);
        return true;
      }),
    );
  });
});

describe("Copy: the shape of the public API's own answers (local/public-api-answers.ts, of infra/gateway-responses.ts and infra/static-answers.ts)", () => {
  it("reads what infra makes: the template's methods and response types, as the type checker sees them", () => {
    expectTypeOf<TemplateMockMethod>().toMatchTypeOf<MockMethod>();
    expectTypeOf<GatewayResponseType>().toMatchTypeOf<TemplateGatewayResponseType>();
  });

  it("has an answer for every type the local gateway answers with, worded as the template's", async () => {
    const answers = await fixtureGatewayAnswers();

    for (const name of GATEWAY_RESPONSE_TYPES) {
      const definition = GATEWAY_RESPONSES.find((r) => r.type === name);
      expect(answers.gatewayResponses[name], name).toMatchObject({
        sentence: definition?.sentence,
        ...(definition?.status ? { status: definition.status } : {}),
      });
    }
    expect(answers.staticAnswers.length).toBeGreaterThan(0);
    for (const { method } of answers.staticAnswers) expect(method.Integration.IntegrationResponses.length).toBeGreaterThan(0);
  });
});

describe('Copy: the token check (local/token-check.ts, of lib/auth/verify.ts verifyBearerToken)', () => {
  const ISSUER = 'http://localhost:4500';
  const AUDIENCE = 'endpoint-read-service';
  let cases: Array<[string, string]>;
  let jwks: ReturnType<typeof createLocalJWKSet>;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const other = await generateKeyPair('RS256', { extractable: true });
    jwks = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] });
    const now = Math.floor(Date.now() / 1000);
    const token = (
      claims: Record<string, unknown>,
      header: Partial<JWTHeaderParameters> = { alg: 'RS256', kid: 'k1' },
      key: Parameters<SignJWT['sign']>[0] = privateKey,
    ): Promise<string> =>
      new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 300, tenant_id: 'acme', ...claims })
        .setProtectedHeader(header as JWTHeaderParameters)
        .sign(key);
    const hs256 = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, exp: now + 300 })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(new TextEncoder().encode('a shared secret of thirty-two bytes!'));
    const unsigned = `${Buffer.from('{"alg":"none","kid":"k1"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: now + 300 })).toString('base64url')}.`;
    cases = [
      ['a good token', await token({})],
      ['a token for its client_id, without aud', await token({ aud: undefined, client_id: AUDIENCE })],
      ['a token for another audience', await token({ aud: 'another-service' })],
      ['a token of another issuer', await token({ iss: 'http://localhost:3000' })],
      ['an expired token', await token({ exp: now - 60 })],
      ['a token not valid yet', await token({ nbf: now + 600 })],
      ['a token issued two minutes ahead', await token({ iat: now + 120 })],
      ['a token issued half a minute ahead', await token({ iat: now + 30 })],
      ['a token without exp', await token({ exp: undefined })],
      ['a token without a key id', await token({}, { alg: 'RS256' })],
      ['a token of an unknown key id', await token({}, { alg: 'RS256', kid: 'k2' })],
      ['a token signed by another key', await token({}, { alg: 'RS256', kid: 'k1' }, other.privateKey)],
      ['an HS256 token', hs256],
      ['an unsigned token (alg none)', unsigned],
      ['no JWT at all', 'not-a-jwt'],
    ];
  });

  it('accepts and refuses the same tokens as the service, with the same sentence (the stack adds how to match its issuer)', async () => {
    for (const [name, token] of cases) {
      const service = await verifyBearerToken(token, {
        issuer: ISSUER,
        audience: AUDIENCE,
        keys: { getKey: async (header) => jwks(header, { payload: '', signature: '' } as never) },
      }).then(
        () => 'accepted',
        (error: Error) => error.message,
      );
      const local = await checkToken(token, { issuer: ISSUER, audience: AUDIENCE, keys: jwks }).then(
        () => 'accepted',
        (error: Error) => {
          expect(error, name).toBeInstanceOf(TokenRefusal);
          return error.message;
        },
      );

      if (service === 'accepted') expect(local, name).toBe('accepted');
      else expect(local.startsWith(service.replace(/\.$/, '')), `${name}: "${local}" for the service's "${service}"`).toBe(true);
    }
    expect(cases.filter(([, token]) => token).length).toBe(15);
  });
});
