import { createHash } from 'node:crypto';

/**
 * Per-tenant throttling on the public REST API (docs/operations.md, Throttling per tenant): the
 * API takes its API keys from the token authorizer (`ApiKeySourceType: AUTHORIZER`), whose Allow
 * names the caller's tenant by its usage identifier (`usageIdentifierKey`), and API Gateway
 * throttles each key of the stage's usage plan on its own bucket. API Gateway counts a request
 * only against an API key that exists in a usage plan of the stage, with exactly that value, so
 * the value is one anybody can work out from the stage and the tenant: the tenant's key is made
 * once, when the tenant is set up (`npm run tenant-key`), and the template makes the one key of
 * tokens that name no tenant (refused by the handler, after the gateway counted them).
 *
 * Not a secret: with the authorizer as the key source, API Gateway ignores any `X-API-Key` a
 * client sends, so knowing a value opens nothing.
 */

/** The API Gateway API key value of a tenant at a stage: 64 hexadecimal digits (API Gateway takes 20 to 128 characters). */
export function tenantUsageKey(stage: string, tenantId: string): string {
  return createHash('sha256').update(`endpoint-read-service usage key\n${stage}\n${tenantId}`, 'utf8').digest('hex');
}

/** The stage a method ARN names (`arn:…:execute-api:region:account:api/stage/VERB/path`). */
export function stageOfMethodArn(methodArn: string): string {
  const stage = methodArn.split('/')[1];
  if (!stage) throw new Error('the authorizer was called without a method ARN');
  return stage;
}
