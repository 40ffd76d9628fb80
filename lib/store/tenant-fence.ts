import { createHash } from 'node:crypto';
import { tenantKeyPrefix } from './keys.js';

/**
 * Tenant fencing by IAM (defence in depth): with `TENANT_FENCING=iam`, data-table reads run with
 * credentials that may read only the caller's tenant's partitions, whatever the code asks for. A
 * bug in key building then meets an AccessDenied, not another tenant's data.
 *
 * The fence is an inline session policy given to `sts:AssumeRole` on the tenant-read role: it
 * allows `Query`, `GetItem` and `BatchGetItem` only when every partition key of the request
 * (`dynamodb:LeadingKeys`) begins with the tenant's key prefix, taken from the key builder itself
 * (`tenantKeyPrefix`). The session's permissions are the intersection of that policy and the
 * role's own (the data table, partitions beginning `T#`).
 *
 * Why a session policy and not a condition on a session tag (`${aws:PrincipalTag/tenant}`): tag
 * values allow only letters, digits, spaces and `_ . : / = + - @`, and keys must keep holding the
 * tenant as the key builder writes it (a `#`, a `%`, a `*` or a `?` included). In a `StringLike`
 * pattern `*` and `?` are wildcards, so the prefix is written with IAM's literal-character
 * variables (`${*}`, `${?}`, `${$}`): a tenant named `a*` is allowed `T#a${*}#*`, which matches
 * `T#a*#AGENTS` and never `T#ab#AGENTS`. The tenant still goes along as a session tag, encoded to
 * fit, for CloudTrail.
 */

/** A string as a `StringLike` pattern that matches exactly it: wildcards and `$` written as IAM's literal-character variables. */
export function iamLiteral(value: string): string {
  return value.replace(/[$*?]/g, (c) => `\${${c}}`);
}

/** The `dynamodb:LeadingKeys` pattern of a tenant: its key prefix, literally, then anything. */
export function tenantLeadingKeysPattern(tenantId: string): string {
  return `${iamLiteral(tenantKeyPrefix(tenantId))}*`;
}

/** The data-table reads a fenced session may make. */
const FENCED_READ_ACTIONS = Object.freeze(['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem']);

/** The inline session policy that fences a session to one tenant's partitions. */
export function tenantSessionPolicy(tenantId: string): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'OneTenantsPartitions',
        Effect: 'Allow',
        Action: [...FENCED_READ_ACTIONS],
        Resource: '*',
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [tenantLeadingKeysPattern(tenantId)] } },
      },
    ],
  };
}

/** AWS's limit on a packed inline session policy. */
export const SESSION_POLICY_MAX_CHARS = 2048;

const TAG_VALUE = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u;

/**
 * The tenant as a session-tag value (for CloudTrail): itself when it fits a tag's character set
 * and length, else `sha256:` and the base64url of its SHA-256 (opaque, but the same for the same
 * tenant, and findable from the tenant id).
 */
export function tenantTagValue(tenantId: string): string {
  if (TAG_VALUE.test(tenantId) && tenantId.length > 0) return tenantId;
  return `sha256:${createHash('sha256').update(tenantId).digest('base64url')}`;
}

/** A role session name (`[\w+=,.@-]`, at most 64): `tenant-` and a digest of the tenant. */
export function tenantSessionName(tenantId: string): string {
  return `tenant-${createHash('sha256').update(tenantId).digest('hex').slice(0, 32)}`;
}
