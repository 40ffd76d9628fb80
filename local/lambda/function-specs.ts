import { join } from 'node:path';
import { FUNCTIONS, type FunctionName, ROOT } from '../../infra/build.js';
import { readTemplateSource, type YamlValue } from '../template-sources.js';

/**
 * The deployed functions as serverless.yml declares them, read from serverless.yml itself (never a
 * second list that could drift): each one's memory, timeout, reserved concurrency, handler and the
 * environment Lambda gives it (provider-level variables, then the function's own), with the
 * framework's variables (`${param:…}`, `${self:…}`, `${sls:stage}`) and CloudFormation's
 * (`!Ref`, `!Sub`) resolved for the local stage. What the local stack runs each sandbox with.
 */

/** The stage the local stack stands for: `${sls:stage}` and the `stage` part of every name. */
export const LOCAL_STAGE = 'local';
/** The account id in the ARNs `!Sub` makes locally (AWS's documentation account). */
const LOCAL_ACCOUNT_ID = '000000000000';

export interface LambdaFunctionSpec {
  /** The name in serverless.yml `functions` (and the bundle folder dist/<name>/). */
  name: FunctionName;
  /** The deployed function's name, as osls names it: `<service>-<stage>-<name>`. */
  functionName: string;
  /** `index.handler`: the module (index.mjs in the bundle folder) and its export. */
  handler: string;
  memorySizeMb: number;
  timeoutSeconds: number;
  reservedConcurrency: number;
  /** The region the provider deploys to (the stage's default, `us-east-1`). */
  region: string;
  /**
   * The function's variables (provider-level, then its own), resolved as far as serverless.yml can be
   * read without AWS: `undefined` for a value only AWS knows (a `${param:…}` without a default, a
   * resource of the stack), which the local stack either supplies or leaves out.
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** API Gateway's integration timeout of its `http` events where one is set (`timeoutInMillis`), in ms. */
  integrationTimeoutMs: number | undefined;
}

interface ServerlessFile {
  service: string;
  params?: { default?: Record<string, YamlValue> };
  custom?: Record<string, YamlValue>;
  provider: { region?: string; memorySize?: number; timeout?: number; environment?: Record<string, YamlValue> };
  functions: Record<
    string,
    {
      handler: string;
      memorySize?: number;
      timeout?: number;
      reservedConcurrency?: YamlValue;
      environment?: Record<string, YamlValue>;
      events?: Array<{ http?: { timeoutInMillis?: YamlValue } }>;
    }
  >;
}

/** The local values of the CloudFormation names `!Sub` and `!Ref` use (resources the stack stands in for). */
export type LocalResources = Readonly<Record<string, string>>;

/**
 * Resolves the framework's variables in a string: `${param:NAME}` from `params.default`, `${self:PATH}`
 * from the file, `${sls:stage}` as the local stage, `${opt:…}` as absent (no command-line option),
 * quoted literals, and comma-separated fallbacks. `undefined` when a variable has no value here.
 * CloudFormation's `${AWS::…}` and `${Resource}` are left for `!Sub`.
 */
function resolveVariables(text: string, file: ServerlessFile): string | undefined {
  const lookup = (source: string): string | undefined => {
    const s = source.trim();
    const quoted = /^'([^']*)'$|^"([^"]*)"$/.exec(s);
    if (quoted) return quoted[1] ?? quoted[2];
    const [kind, ...rest] = s.split(':');
    const path = rest.join(':');
    if (kind === 'sls' && path === 'stage') return LOCAL_STAGE;
    if (kind === 'param') return scalar(file.params?.default?.[path]);
    if (kind === 'self') {
      let value: unknown = file;
      for (const key of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
      return scalar(value as YamlValue | undefined);
    }
    return undefined;
  };
  let unresolved = false;
  let current = text;
  // A value may bring variables of its own (`${self:custom.serviceName}`): resolve until none are left.
  for (let round = 0; round < 10 && /\$\{(param|self|sls|opt|env):/.test(current); round += 1) {
    current = current.replace(/\$\{((?:param|self|sls|opt|env):[^{}]*)\}/g, (_whole, inner: string) => {
      for (const source of inner.split(',')) {
        const value = lookup(source);
        if (value !== undefined) return value;
      }
      unresolved = true;
      return '';
    });
  }
  return unresolved ? undefined : current;
}

function scalar(value: YamlValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'object' ? undefined : String(value);
}

/** A CloudFormation value (`Ref`, `Fn::Sub`) with the local stack's names, or `undefined` when it names something AWS alone has. */
function resolveCloudFormation(value: YamlValue, file: ServerlessFile, region: string, resources: LocalResources): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const text = scalar(value);
    return text === undefined ? undefined : resolveVariables(text, file);
  }
  if (typeof value.Ref === 'string') return resources[value.Ref];
  const sub = value['Fn::Sub'];
  if (typeof sub === 'string') {
    const text = resolveVariables(sub, file);
    if (text === undefined) return undefined;
    const pseudo: Record<string, string> = {
      'AWS::Partition': 'aws',
      'AWS::AccountId': LOCAL_ACCOUNT_ID,
      'AWS::Region': region,
      'AWS::URLSuffix': 'amazonaws.com',
      ...resources,
    };
    let missing = false;
    const out = text.replace(/\$\{([A-Za-z0-9:]+)\}/g, (_whole, name: string) => {
      const v = pseudo[name];
      if (v === undefined) missing = true;
      return v ?? '';
    });
    return missing ? undefined : out;
  }
  return undefined;
}

/**
 * Reads every deployed function of serverless.yml (infra/build.ts FUNCTIONS names them) with its
 * settings for the local stage. `resources` are the values the stack has for the CloudFormation
 * resources the variables name (`DataTable`, `AuditTable`); others resolve to `undefined`.
 */
export function readFunctionSpecs(
  resources: LocalResources = {},
  file: string = join(ROOT, 'serverless.yml'),
): Readonly<Record<FunctionName, LambdaFunctionSpec>> {
  const doc = readTemplateSource<ServerlessFile>(file);
  const region = resolveVariables(doc.provider.region ?? 'us-east-1', doc) ?? 'us-east-1';
  const specs = {} as Record<FunctionName, LambdaFunctionSpec>;
  for (const name of Object.keys(FUNCTIONS) as FunctionName[]) {
    const fn = doc.functions[name];
    if (!fn) throw new Error(`serverless.yml declares no function "${name}" (infra/build.ts FUNCTIONS has it)`);
    const environment: Record<string, string | undefined> = {};
    for (const [key, value] of Object.entries({ ...doc.provider.environment, ...fn.environment }))
      environment[key] = resolveCloudFormation(value, doc, region, resources);
    const concurrency = fn.reservedConcurrency === undefined ? undefined : resolveCloudFormation(fn.reservedConcurrency, doc, region, {});
    const integrationTimeouts = (fn.events ?? [])
      .map((event) =>
        event.http?.timeoutInMillis === undefined ? undefined : resolveCloudFormation(event.http.timeoutInMillis, doc, region, {}),
      )
      .filter((v): v is string => v !== undefined)
      .map(Number);
    specs[name] = Object.freeze({
      name,
      functionName: `${doc.service}-${LOCAL_STAGE}-${name}`,
      handler: fn.handler,
      memorySizeMb: fn.memorySize ?? doc.provider.memorySize ?? 1024,
      timeoutSeconds: fn.timeout ?? doc.provider.timeout ?? 6,
      // Without a reservation a function shares the account's pool (1,000 by default).
      reservedConcurrency: concurrency === undefined ? 1000 : Number(concurrency),
      region,
      environment: Object.freeze(environment),
      integrationTimeoutMs: integrationTimeouts.length > 0 ? Math.max(...integrationTimeouts) : undefined,
    });
  }
  return Object.freeze(specs);
}

/**
 * One value of the template's sources (`${param:…}` from `params.default`, `${self:…}`,
 * `${sls:stage}`, `!Sub`) as the local stage resolves it; `undefined` when only AWS knows it.
 */
export function resolveLocalValue(value: YamlValue, file: string = join(ROOT, 'serverless.yml')): string | undefined {
  const doc = readTemplateSource<ServerlessFile>(file);
  return resolveCloudFormation(value, doc, resolveVariables(doc.provider.region ?? 'us-east-1', doc) ?? 'us-east-1', {});
}
