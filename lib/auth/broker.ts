import { ForbiddenError } from '../errors.js';

/** The IAM identity API Gateway puts in a REST (payload 1.0) event for an AWS_IAM-authorized call. */
export interface InvocationIdentity {
  userArn?: string | null;
  user?: string | null;
  caller?: string | null;
}

/**
 * An assumed-role session ARN (`arn:aws:sts::123456789012:assumed-role/mcp-broker/session`) or a
 * role ARN (`arn:aws:iam::123456789012:role/[path/]mcp-broker`) as its account and role name.
 */
function roleOf(arn: string): { account: string; name: string } | undefined {
  const match =
    /^arn:aws[a-z-]*:sts::([0-9]{12}):assumed-role\/([^/]+)\//.exec(arn) ??
    /^arn:aws[a-z-]*:iam::([0-9]{12}):role\/(?:.*\/)?([^/]+)$/.exec(arn);
  return match ? { account: match[1]!, name: match[2]! } : undefined;
}

/** The broker's name from the invocation: the role name of a role, otherwise the caller's ARN or user. */
export function brokerName(identity: InvocationIdentity | null | undefined): string | undefined {
  const arn = identity?.userArn ?? undefined;
  if (!arn) return identity?.user ?? undefined;
  return roleOf(arn)?.name ?? arn;
}

/**
 * The broker calling the private operation, checked against the allow-list. An entry may be a role
 * name, a role ARN (matched by account and role name, since an assumed-role session ARN carries no
 * role path) or the caller's exact ARN. Anything else, including a missing identity, is a 403.
 */
export function allowedBroker(identity: InvocationIdentity | null | undefined, allowList: readonly string[]): string {
  const name = brokerName(identity);
  const arn = identity?.userArn ?? undefined;
  const callerRole = arn ? roleOf(arn) : undefined;
  const allowed = allowList.some((entry) => {
    if (entry === name || (arn !== undefined && entry === arn)) return true;
    const entryRole = roleOf(entry);
    return entryRole !== undefined && callerRole !== undefined && entryRole.account === callerRole.account && entryRole.name === callerRole.name;
  });
  if (name && allowed) return name;
  throw new ForbiddenError('The caller is not an allowed broker for this operation.');
}
