import type { Settings } from '../config.js';
import { HttpError } from '../errors.js';
import { logger } from '../observability/logger.js';
import { annotateTenant } from '../observability/tracer.js';
import { authorizerContextOf } from './caller.js';
import { type Door, doorAudience, doorOfResource } from './public-doors.js';
import { stageOfMethodArn, tenantUsageKey } from './usage-key.js';
import { bearerToken, remoteKeys, verifyBearerToken } from './verify.js';

/**
 * The token authorizer of the public REST API (a REQUEST authorizer, one per door, both this same
 * function): it verifies the bearer token exactly as lib/auth/verify.ts does for the door's own
 * audience, and answers as API Gateway expects a Lambda authorizer to answer.
 */

/** The one error message API Gateway turns into its UNAUTHORIZED gateway response (401). */
export const UNAUTHORIZED = 'Unauthorized';

/** The context key of a Deny's sentence, which the ACCESS_DENIED gateway response puts in its body. */
export const REFUSAL_CONTEXT_KEY = 'refusal';

/** What the authorizer judges of a request, as its handler reads it from API Gateway's event. */
export interface DoorRequest {
  /** The REST resource asked (`/api/agents`): which door. */
  resource: string;
  /** `arn:…:execute-api:region:account:api/stage/VERB/path`: the method asked, in its API and stage. */
  methodArn: string;
  /** Every `Authorization` header value sent, in order. */
  authorizations: readonly string[];
}

/** An IAM policy of one statement on execute-api, as API Gateway takes it from an authorizer. */
interface PolicyDocument {
  Version: '2012-10-17';
  Statement: Array<{ Action: 'execute-api:Invoke'; Effect: 'Allow' | 'Deny'; Resource: string[] }>;
}

/** The answer API Gateway expects of a Lambda authorizer: who, the policy, what the handler gets, and the usage identifier. */
export interface AuthorizerAnswer {
  principalId: string;
  policyDocument: PolicyDocument;
  /** What the handler reads (API Gateway hands every value on as a string; an absent key is not sent). */
  context: Readonly<Record<string, string | number | boolean | undefined>>;
  usageIdentifierKey?: string;
}

/**
 * `arn:…:execute-api:region:account:api/stage/VERB/path` → the ARNs of every method of `door` in
 * the same API and stage. An Allow names only those, so a cached answer can never open another door.
 */
function doorMethodArns(methodArn: string, door: Door): string[] {
  const [api, stage] = methodArn.split('/');
  if (!api || !stage) throw new Error('the authorizer was called without a method ARN');
  return door.methods.map((method) => `${api}/${stage}/${method}${door.resource}`);
}

function policy(effect: 'Allow' | 'Deny', resources: string[]): PolicyDocument {
  return { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resources }] };
}

/**
 * A refused token, the way this door refuses (lib/auth/public-doors.ts): a Deny whose context carries the
 * sentence, or the `Unauthorized` error. The token never appears in it.
 */
function refuse(door: Door, methodArn: string, sentence: string): AuthorizerAnswer {
  logger.info('token refused', { door: door.name, reason: sentence });
  if (door.refusal === 'unauthorized') throw new Error(UNAUTHORIZED);
  return { principalId: 'anonymous', policyDocument: policy('Deny', [methodArn]), context: { [REFUSAL_CONTEXT_KEY]: sentence } };
}

/**
 * Judges one request at a public door. Invariants: an Allow names only that door's methods and
 * carries tenant, `sub`, `exp`, the granted OAuth scopes (the handler judges them: a token without
 * the door's scope is the handler's 403, as a token without a tenant is) and the endpoint scope
 * when the token has the scope claim
 * (lib/auth/caller.ts; a bad claim is let through marked `invalid`, and the handler answers its 403), and the
 * tenant's usage identifier (lib/auth/usage-key.ts: the API key its requests are throttled by; a
 * token without a tenant gets the stage's no-tenant key); a token that fails any check of
 * verifyBearerToken (RSA only, `kid`, `iss` exact, the door's own audience, `exp`, `nbf`, `iat` at
 * most 60 s ahead), no token, or more than one `Authorization` header is refused; an issuer whose
 * key set cannot be read (keys fetched earlier still serve through an outage) makes it fail with
 * an error other than `Unauthorized`, which API Gateway answers as AUTHORIZER_FAILURE (503), never
 * as a refusal.
 */
export async function authorizeRequest(
  cfg: Pick<Settings, 'jwtIssuer' | 'jwksUrl' | 'jwtAudience' | 'mcpAudience' | 'tenantClaim' | 'scopeClaim' | 'oauthScopeClaim'>,
  request: DoorRequest,
  signal?: AbortSignal,
): Promise<AuthorizerAnswer> {
  const { resource, methodArn, authorizations } = request;
  const door = doorOfResource(resource);
  if (!door) throw new Error(`no public door is guarded at ${resource}`);
  if (authorizations.length > 1) return refuse(door, methodArn, 'The Authorization header was sent more than once.');
  let claims: Awaited<ReturnType<typeof verifyBearerToken>>;
  try {
    claims = await verifyBearerToken(bearerToken(authorizations[0]), {
      issuer: cfg.jwtIssuer,
      audience: doorAudience(cfg, door.name),
      keys: remoteKeys(cfg),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (error instanceof HttpError && error.statusCode === 401) return refuse(door, methodArn, error.message);
    throw error;
  }
  const context = authorizerContextOf(claims, cfg.tenantClaim, cfg.scopeClaim, cfg.oauthScopeClaim);
  if (context.tenant !== '') annotateTenant(context.tenant);
  return {
    principalId: context.sub || 'unknown',
    policyDocument: policy('Allow', doorMethodArns(methodArn, door)),
    context,
    usageIdentifierKey: tenantUsageKey(stageOfMethodArn(methodArn), context.tenant),
  };
}
