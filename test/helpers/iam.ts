import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { runSimulation as RunSimulation, Simulation } from '@cloud-copilot/iam-simulate';
import { intrinsicName, parseGetAtt } from '../tools/template-spec/intrinsics.js';
import type { Json } from './package.js';

/**
 * The IAM roles of a packaged template, as AWS would hold them once deployed, for an independent
 * evaluator (`@cloud-copilot/iam-simulate`) to judge requests against. Only CloudFormation's
 * intrinsics are resolved here, with a made-up account and region; every policy document is
 * otherwise passed on exactly as the template has it.
 */

export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';

export interface TemplateRole {
  id: string;
  /** The role's ARN: its RoleName, else its logical id standing in for the name CloudFormation makes. */
  arn: string;
  name: string;
  trustPolicy: Json;
  policies: Array<{ name: string; policy: Json }>;
}

/** The ARN of a session of a role (the principal of every request made with its credentials). */
export const sessionArn = (role: TemplateRole, sessionName = 'session'): string =>
  `arn:aws:sts::${ACCOUNT}:assumed-role/${role.name}/${sessionName}`;

/** Every AWS::IAM::Role of the template, its intrinsics resolved. */
export function templateRoles(template: Json): Record<string, TemplateRole> {
  const resources = template.Resources as Json;
  const resolve = (value: unknown): unknown => resolveIntrinsics(value, resources);
  const roles: Record<string, TemplateRole> = {};
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::IAM::Role') continue;
    const name = roleName(id, resources);
    roles[id] = {
      id,
      name,
      arn: `arn:aws:iam::${ACCOUNT}:role/${name}`,
      trustPolicy: resolve(r.Properties.AssumeRolePolicyDocument) as Json,
      policies: ((r.Properties.Policies ?? []) as Json[]).map((p) => ({
        name: p.PolicyName as string,
        policy: resolve(p.PolicyDocument) as Json,
      })),
    };
  }
  return roles;
}

function roleName(id: string, resources: Json): string {
  const name = resources[id]?.Properties?.RoleName;
  return name === undefined ? id : (resolveIntrinsics(name, resources) as string);
}

function attribute(id: string, attr: string, resources: Json): string {
  const r = resources[id];
  if (!r) throw new Error(`Fn::GetAtt names no resource: ${id}`);
  if (attr !== 'Arn') throw new Error(`Fn::GetAtt ${id}.${attr} is not resolved by this helper`);
  const p = r.Properties ?? {};
  switch (r.Type) {
    case 'AWS::DynamoDB::Table':
      return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${resolveIntrinsics(p.TableName ?? id, resources) as string}`;
    case 'AWS::IAM::Role':
      return `arn:aws:iam::${ACCOUNT}:role/${roleName(id, resources)}`;
    case 'AWS::Logs::LogGroup':
      return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${resolveIntrinsics(p.LogGroupName ?? id, resources) as string}:*`;
    case 'AWS::Lambda::Function':
      return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${resolveIntrinsics(p.FunctionName ?? id, resources) as string}`;
    default:
      // Any other resource: an ARN of its own that no table, role or log group can equal.
      return `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stand-in/${r.Type as string}/${id}`;
  }
}

function reference(name: string, resources: Json): string {
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::AccountId': ACCOUNT,
    'AWS::Region': REGION,
    'AWS::URLSuffix': 'amazonaws.com',
  };
  if (pseudo[name]) return pseudo[name];
  const r = resources[name];
  if (!r) throw new Error(`Ref names nothing known: ${name}`);
  if (r.Type === 'AWS::DynamoDB::Table') return resolveIntrinsics(r.Properties.TableName, resources) as string;
  if (r.Type === 'AWS::IAM::Role') return roleName(name, resources);
  return name;
}

/** Resolves Ref, Fn::GetAtt (Arn), Fn::Sub and Fn::Join; any other intrinsic is an error, never a guess. */
export function resolveIntrinsics(value: unknown, resources: Json): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveIntrinsics(v, resources));
  if (value === null || typeof value !== 'object') return value;
  const fn = intrinsicName(value);
  if (fn !== undefined) {
    const arg = (value as Json)[fn];
    if (fn === 'Ref') return reference(arg as string, resources);
    if (fn === 'Fn::GetAtt') {
      const getAtt = parseGetAtt(arg);
      if (!getAtt || typeof getAtt.attribute !== 'string') throw new Error('Fn::GetAtt with arguments this helper does not resolve');
      return attribute(getAtt.logicalId, getAtt.attribute, resources);
    }
    if (fn === 'Fn::Join') {
      const [sep, parts] = arg as [string, unknown[]];
      return (resolveIntrinsics(parts, resources) as string[]).join(sep);
    }
    if (fn === 'Fn::Sub') {
      const [text, vars] = typeof arg === 'string' ? [arg, {}] : (arg as [string, Json]);
      return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
        if (name.startsWith('!')) return `\${${name.slice(1)}}`;
        if (name in vars) return resolveIntrinsics(vars[name], resources) as string;
        const getAtt = parseGetAtt(name);
        return getAtt ? attribute(getAtt.logicalId, getAtt.attribute as string, resources) : reference(name, resources);
      });
    }
    throw new Error(`${fn} is not resolved by this helper`);
  }
  return Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, resolveIntrinsics(v, resources)]));
}

/**
 * The evaluator, its resource-type matching remembered. For each request iam-simulate matches the
 * resource ARN against every resource type of the action, character class against character class
 * (@cloud-copilot/iam-utils), and the tests ask thousands of requests of the same few actions on
 * the same few ARNs: that matching was 3 of the IAM file's 7.7 s of CPU. Both matchers are pure
 * functions of their strings, so each answer is computed once and given again; the evaluator's
 * decisions are unchanged. Its CommonJS build is loaded, whose modules call each other through
 * their `exports` objects, where the remembering functions are put.
 */
const runSimulation: typeof RunSimulation = (() => {
  const require = createRequire(import.meta.url);
  const matching = require(join(dirname(require.resolve('@cloud-copilot/iam-utils')), 'resourceTypes.js')) as {
    mostSpecificMatchingResourceTypePatterns: (resource: string, patterns: string[]) => string[];
    resourceStringMatchesResourceTypePattern: (resource: string, pattern: string) => boolean;
  };
  const remembered = <A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) => {
    const answers = new Map<string, R>();
    return (...args) => {
      const key = JSON.stringify(args);
      if (!answers.has(key)) answers.set(key, fn(...args));
      return answers.get(key) as R;
    };
  };
  const mostSpecific = remembered(matching.mostSpecificMatchingResourceTypePatterns);
  matching.mostSpecificMatchingResourceTypePatterns = (resource, patterns) => [...mostSpecific(resource, patterns)];
  matching.resourceStringMatchesResourceTypePattern = remembered(matching.resourceStringMatchesResourceTypePattern);
  return (require('@cloud-copilot/iam-simulate') as { runSimulation: typeof RunSimulation }).runSimulation;
})();

export type Decision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

export interface Ask {
  /** Whose credentials sign the request: an assumed-role session ARN. */
  principal: string;
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
  /** The role's own policies. */
  identityPolicies: Array<{ name: string; policy: Json }>;
  sessionPolicy?: Json;
  /** A trust policy, when the request is sts:AssumeRole / sts:TagSession on a role. */
  resourcePolicy?: Json;
}

/**
 * The evaluator's decision on one request. Refuses to answer (throws) when the evaluator finds the
 * input invalid, or left out a context key as not applying to the action: a test must never pass
 * because a condition key it relies on was silently ignored.
 */
export async function decide(ask: Ask): Promise<Decision> {
  const simulation: Simulation = {
    request: {
      principal: ask.principal,
      action: ask.action,
      resource: { resource: ask.resource, accountId: ACCOUNT },
      contextVariables: ask.context ?? {},
    },
    identityPolicies: ask.identityPolicies,
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(ask.sessionPolicy ? { sessionPolicy: ask.sessionPolicy } : {}),
    ...(ask.resourcePolicy ? { resourcePolicy: ask.resourcePolicy } : {}),
  };
  const answer = await runSimulation(simulation, { simulationMode: 'Strict' });
  if (answer.resultType === 'error') throw new Error(`the evaluator refused the request: ${JSON.stringify(answer.errors)}`);
  if (answer.resultType !== 'single') throw new Error(`expected one resource, got ${answer.resultType}`);
  const ignored = answer.result.ignoredContextKeys ?? [];
  if (ignored.length > 0) throw new Error(`the evaluator ignored context keys for ${ask.action}: ${ignored.join(', ')}`);
  return answer.overallResult as Decision;
}
