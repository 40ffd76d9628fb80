import { createHash } from 'node:crypto';
import { auditPartition, tenantKeyPart, tenantKeyPrefix } from '../data-format/keys.js';

/**
 * Tenant fencing by IAM (defence in depth): with `TENANT_FENCING=iam`, a tenant's data-table reads
 * and audit puts sign with the credentials of a session of a tenant role (tenant-read, or
 * tenant-audit), assumed for that tenant, so a bug in key building meets AccessDenied, not another
 * tenant's data or trail.
 *
 * Two fences, each enough on its own:
 * - the role's own policy (infra/iam.yml) allows only keys under the tenant named by the session's
 *   `tenant` tag: `T#${aws:PrincipalTag/tenant}#*` in `dynamodb:LeadingKeys` (`ForAllValues`, with
 *   a `Null` guard so a request without keys is denied). The tag holds `tenantKeyPart`, the very
 *   string every key holds (lib/data-format/keys.ts), and the trust policy refuses a session without it;
 * - the inline session policy built here allows the same keys, written literally, so the session
 *   stays fenced if the role's policy is ever widened, and the role's fence holds if this code is
 *   ever wrong. A session's permissions are the intersection of both.
 *
 * A tenant part holds no `*`, `?` or `$` (only a tag's characters), so both patterns are the key
 * prefix followed by one wildcard, with nothing that IAM could read as a wildcard or a variable.
 */

/** The session-tag key that names the tenant (the role policies read `aws:PrincipalTag/tenant`). */
export const TENANT_TAG = 'tenant';

/** The data-table reads a fenced session may make. */
const FENCED_READ_ACTIONS = Object.freeze(['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem']);

/** The `dynamodb:LeadingKeys` pattern of a tenant's data: its key prefix, then anything. */
export function tenantLeadingKeysPattern(tenantId: string): string {
  return `${tenantKeyPrefix(tenantId)}*`;
}

/** The inline session policy that fences a read session to one tenant's data-table partitions. */
export function tenantSessionPolicy(tenantId: string): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'OneTenantsPartitions',
        Effect: 'Allow',
        Action: [...FENCED_READ_ACTIONS],
        Resource: '*',
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [tenantLeadingKeysPattern(tenantId)] },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      },
    ],
  };
}

/** The inline session policy that lets an audit session put items only into one tenant's audit partition. */
export function tenantAuditSessionPolicy(tenantId: string): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'OneTenantsAuditPartition',
        Effect: 'Allow',
        Action: ['dynamodb:PutItem'],
        Resource: '*',
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [auditPartition(tenantId)] },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      },
    ],
  };
}

/** AWS's limit on an inline session policy's plain text. */
export const SESSION_POLICY_MAX_CHARS = 2048;

export type FenceKind = 'read' | 'audit';

/** What `sts:AssumeRole` is asked for a tenant's session, besides the role and the duration. */
export interface TenantSessionRequest {
  RoleSessionName: string;
  Policy: string;
  Tags: Array<{ Key: string; Value: string }>;
}

/**
 * The session a fenced client asks STS for: the `tenant` tag holding `tenantKeyPart` (the very
 * string every key of the tenant holds, which the role's own policy fences to) and the session
 * policy of the fence. The IAM evaluator tests evaluate exactly this.
 */
export function tenantSessionRequest(tenantId: string, fence: FenceKind): TenantSessionRequest {
  return {
    RoleSessionName: tenantSessionName(tenantId, fence),
    Policy: JSON.stringify(fence === 'read' ? tenantSessionPolicy(tenantId) : tenantAuditSessionPolicy(tenantId)),
    Tags: [{ Key: TENANT_TAG, Value: tenantKeyPart(tenantId) }],
  };
}

/** A role session name (`[\w+=,.@-]`, at most 64): the fence's kind and a digest of the tenant, for CloudTrail. */
export function tenantSessionName(tenantId: string, fence: FenceKind = 'read'): string {
  return `${fence === 'read' ? 'tenant' : 'audit'}-${createHash('sha256').update(tenantKeyPart(tenantId)).digest('hex').slice(0, 32)}`;
}
