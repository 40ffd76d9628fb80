import { ForbiddenError } from '../errors.js';

/** The IAM identity API Gateway puts in a REST (payload 1.0) event for an AWS_IAM-authorized call. */
export interface InvocationIdentity {
  userArn?: string | null;
  user?: string | null;
  caller?: string | null;
}

/**
 * The broker's name from the invocation: for an assumed role
 * (`arn:aws:sts::123456789012:assumed-role/mcp-broker/session`) or a role ARN, the role name;
 * otherwise the user ARN as it is.
 */
export function brokerName(identity: InvocationIdentity | null | undefined): string | undefined {
  const arn = identity?.userArn ?? undefined;
  if (!arn) return identity?.user ?? undefined;
  const assumed = /^arn:aws[a-z-]*:sts::[0-9]{12}:assumed-role\/([^/]+)\//.exec(arn);
  if (assumed?.[1]) return assumed[1];
  const role = /^arn:aws[a-z-]*:iam::[0-9]{12}:role\/(?:.*\/)?([^/]+)$/.exec(arn);
  if (role?.[1]) return role[1];
  return arn;
}

/**
 * The broker calling the private operation, checked against the allow-list (role names or full
 * ARNs). Anything else, including a missing identity, is a 403.
 */
export function allowedBroker(identity: InvocationIdentity | null | undefined, allowList: readonly string[]): string {
  const name = brokerName(identity);
  const arn = identity?.userArn ?? undefined;
  if (name && (allowList.includes(name) || (arn !== undefined && allowList.includes(arn)))) return name;
  throw new ForbiddenError('The caller is not an allowed broker for this operation.');
}
