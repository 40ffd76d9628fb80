import { LAMBDA_NODE_MAJOR, LAMBDA_RUNTIME_ID, SDK_NODE_MAJOR, SDK_NODE_VERSION_WARNING_SWITCH } from '../../infra/node-version.js';
import type { LambdaFunctionSpec } from './function-specs.js';

/**
 * The environment of one local function sandbox: exactly what serverless.yml gives that function
 * (provider-level variables, then its own), resolved for the local stack, and nothing another
 * function is given. docs/local-stack.md lists the rules; in short, for each variable serverless.yml
 * gives the function:
 *   0. the MCP door's allowed origins: MCP_ALLOWED_ORIGINS as set, and the stack's own (its public
 *      listener's origin by each loopback name), since the door admits no origin it is not given;
 *   1. the value set in `npm start`'s environment, when set (the user's configuration);
 *   2. else the stack's own value where the deployed one names AWS or a stage parameter the issuer
 *      must agree with (localReplacements: the public URL, the issuer, its endpoints and audiences,
 *      the broker's client id, the private API's URL, tenant fencing off, the secret's ARN left out
 *      for the secret itself);
 *   3. else serverless.yml's value (a literal, a `params.default`, a table name);
 *   4. else nothing, and the service's default applies (as it would for a stage that leaves it out).
 * Then the service's tuning variables serverless.yml gives no function (TUNING_VARIABLES, and
 * POWERTOOLS_*), when set in `npm start`'s environment, go to every function,
 * and the few LOCAL_ADDITIONS every local function needs. What Lambda's runtime sets itself
 * (AWS_LAMBDA_FUNCTION_NAME, _HANDLER, AWS_LAMBDA_RUNTIME_API…) is added by the sandbox
 * (runtimeEnvironment).
 */

/** What only the local stack knows, where AWS would give an address or a resource of its own. */
export interface LocalStackValues {
  /** The public listener, as clients reach it. */
  publicUrl: string;
  /** The local issuer (`iss` of its tokens). */
  issuer: string;
  /**
   * Its key set, only where the functions cannot find it through the issuer's discovery document
   * (local/stack.ts says when); undefined, JWKS_URL is left out, as a stage leaves it empty.
   */
  jwksUrl?: string | undefined;
  /** Its token endpoint, by loopback address (the stack calls itself). */
  tokenEndpoint: string;
  /** The private listener's GET /api/mcp/endpoint (on AWS, the private API through its VPC endpoint). */
  observationsUrl: string;
  /** The DynamoDB API the functions use (the embedded engine, or the one given). */
  dynamoEndpoint: string;
  /** The broker's client secret at the local issuer (on AWS, read from Secrets Manager by its ARN). */
  brokerSecret: string;
  /**
   * The audiences and the broker the local issuer signs and registers (the stack's configuration):
   * stage parameters without a default in serverless.yml, so the functions agree with the issuer.
   */
  jwtAudience: string;
  mcpAudience: string;
  brokerClientId: string;
  brokerAllowList: readonly string[];
  /** The public listener's own browser origins (its public URL's, and by each loopback name), which the MCP door admits. */
  ownOrigins: readonly string[];
  /** The major version of the Node the sandboxes run (Lambda's, unless its package is not installed here). */
  sandboxNodeMajor: number;
}

/**
 * Values for a function's environment where no stack listens (the fixture functions, and the
 * runtime comparison of `npm run test:ric`): addresses nothing calls, the audiences and broker the
 * local stack would give.
 */
export const UNREACHABLE_STACK_VALUES: Readonly<LocalStackValues> = Object.freeze({
  publicUrl: 'http://localhost:1',
  issuer: 'http://localhost:1',
  tokenEndpoint: 'http://127.0.0.1:1/oauth2/token',
  observationsUrl: 'http://127.0.0.1:2/api/mcp/endpoint',
  dynamoEndpoint: 'http://127.0.0.1:3',
  brokerSecret: 'fixture-secret',
  jwtAudience: 'endpoint-read-service',
  mcpAudience: 'http://localhost:1/api/mcp',
  brokerClientId: 'local-broker',
  brokerAllowList: ['local-broker'],
  ownOrigins: ['http://localhost:1'],
  sandboxNodeMajor: LAMBDA_NODE_MAJOR,
});

/**
 * Variables whose deployed value names AWS, with what stands for it locally (`undefined`: left out).
 * Each applies only to a function serverless.yml gives it to.
 */
export function localReplacements(values: LocalStackValues): Readonly<Record<string, string | undefined>> {
  return {
    PUBLIC_URL: values.publicUrl,
    JWT_ISSUER: values.issuer,
    JWKS_URL: values.jwksUrl,
    TOKEN_ENDPOINT: values.tokenEndpoint,
    OBSERVATIONS_URL: values.observationsUrl,
    JWT_AUDIENCE: values.jwtAudience,
    MCP_AUDIENCE: values.mcpAudience,
    BROKER_CLIENT_ID: values.brokerClientId,
    BROKER_ALLOW_LIST: values.brokerAllowList.join(','),
    // No STS here to assume the fenced roles (a test that has one sets TENANT_FENCING=iam and AWS_ENDPOINT_URL_STS).
    TENANT_FENCING: 'off',
    // No Secrets Manager here: the secret itself is given instead (LOCAL_ADDITIONS).
    BROKER_CLIENT_SECRET_ARN: undefined,
  };
}

/**
 * The variables the local stack adds that serverless.yml does not give, and to which functions:
 * the one list of local-only variables (docs/local-stack.md; the sandbox test checks no other
 * variable appears).
 */
export function localAdditions(
  spec: LambdaFunctionSpec,
  values: LocalStackValues,
  userEnv: NodeJS.ProcessEnv = {},
): Record<string, string> {
  return {
    // On AWS the SDK finds DynamoDB's regional endpoint itself; here, to each function that reads the store.
    ...('DATA_TABLE' in spec.environment ? { DYNAMODB_ENDPOINT: values.dynamoEndpoint } : {}),
    // In place of BROKER_CLIENT_SECRET_ARN, for the function that has it (the MCP door): the one given, else the issuer's.
    ...('BROKER_CLIENT_SECRET_ARN' in spec.environment
      ? { BROKER_CLIENT_SECRET: userEnv.BROKER_CLIENT_SECRET?.trim() || values.brokerSecret }
      : {}),
    // Lambda's Node has no SDK Node-version notice to print; a sandbox on an older Node (where Lambda's is not installed) would (infra/node-version.ts).
    ...(values.sandboxNodeMajor < SDK_NODE_MAJOR ? { [SDK_NODE_VERSION_WARNING_SWITCH]: 'true' } : {}),
  };
}

/**
 * The service's variables that serverless.yml gives no function: their deployed value is the
 * function's default (its schema in lib/config.ts; AWS_REGION is Lambda's), and a value set in
 * `npm start`'s environment goes to every function. With what serverless.yml gives each function,
 * DYNAMODB_ENDPOINT and BROKER_CLIENT_SECRET (local additions), these are every variable each
 * function's schema reads: test/unit/stack-settings.test.ts holds the lists together.
 */
export const TUNING_VARIABLES: readonly string[] = Object.freeze([
  'AWS_REGION',
  'DYNAMODB_TIMEOUT_MS',
  'DYNAMODB_MAX_ATTEMPTS',
  'ONLINE_GRACE_SECONDS',
  'OBSERVATION_TTL_SECONDS',
  'SAMPLE_RETENTION_DAYS',
]);

/**
 * The AWS SDK's own variables for a service at another address (a stand-in), which the functions'
 * clients read themselves: set in `npm start`'s environment, each goes to every function, as a
 * tuning variable does. Secrets Manager's is left out: locally the secret itself is given.
 */
const SDK_ENDPOINT_VARIABLES: readonly string[] = Object.freeze(['AWS_ENDPOINT_URL_STS']);

/** The tuning variables set in `npm start`'s environment, the SDK's endpoint variables, and Powertools' own switches (POWERTOOLS_*). */
function tuningVariables(userEnv: NodeJS.ProcessEnv, givenByServerless: ReadonlySet<string>): Record<string, string> {
  const tuning: Record<string, string> = {};
  for (const [name, value] of Object.entries(userEnv)) {
    if (value === undefined || givenByServerless.has(name)) continue;
    if (TUNING_VARIABLES.includes(name) || SDK_ENDPOINT_VARIABLES.includes(name) || name.startsWith('POWERTOOLS_')) tuning[name] = value;
  }
  return tuning;
}

/**
 * A function's environment for its sandbox (the rules above), without the runtime's own variables.
 * `allSpecs` tells which variables serverless.yml gives some function (those never go to others).
 */
export function functionEnvironment(
  spec: LambdaFunctionSpec,
  allSpecs: readonly LambdaFunctionSpec[],
  values: LocalStackValues,
  userEnv: NodeJS.ProcessEnv,
): Record<string, string> {
  const replacements = localReplacements(values);
  const env: Record<string, string> = {};
  for (const [name, deployed] of Object.entries(spec.environment)) {
    const value =
      name === 'MCP_ALLOWED_ORIGINS'
        ? [userEnv[name]?.trim() || deployed, ...values.ownOrigins].filter(Boolean).join(',')
        : (userEnv[name] ?? (name in replacements ? replacements[name] : deployed));
    if (value !== undefined) env[name] = value;
  }
  const givenByServerless = new Set(allSpecs.flatMap((s) => Object.keys(s.environment)));
  return { ...env, ...tuningVariables(userEnv, givenByServerless), ...localAdditions(spec, values, userEnv) };
}

/** Credentials the functions sign with: the ones in `npm start`'s environment, else dummies (local engines take any). */
function credentials(userEnv: NodeJS.ProcessEnv): Record<string, string> {
  if (userEnv.AWS_ACCESS_KEY_ID && userEnv.AWS_SECRET_ACCESS_KEY) {
    return {
      AWS_ACCESS_KEY_ID: userEnv.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: userEnv.AWS_SECRET_ACCESS_KEY,
      ...(userEnv.AWS_SESSION_TOKEN ? { AWS_SESSION_TOKEN: userEnv.AWS_SESSION_TOKEN } : {}),
    };
  }
  return { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_SESSION_TOKEN: 'local' };
}

/**
 * What Lambda's runtime sets in every execution environment of a function (Lambda's "defined
 * runtime environment variables"), for one local instance: its Runtime API, the bundle folder as
 * task root, name, memory, region, log group and stream, and the execution role's credentials
 * (here the environment's, or dummies). A value of the function's own environment is not replaced,
 * except the reserved names Lambda sets itself.
 */
export function runtimeEnvironment(
  spec: LambdaFunctionSpec,
  instance: { runtimeApi: string; taskRoot: string; runtimeDir: string; logStream: string },
  userEnv: NodeJS.ProcessEnv,
): Record<string, string> {
  const region = userEnv.AWS_REGION || spec.region;
  return {
    _HANDLER: spec.handler,
    AWS_LAMBDA_RUNTIME_API: instance.runtimeApi,
    LAMBDA_TASK_ROOT: instance.taskRoot,
    LAMBDA_RUNTIME_DIR: instance.runtimeDir,
    AWS_EXECUTION_ENV: `AWS_Lambda_${LAMBDA_RUNTIME_ID}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_FUNCTION_NAME: spec.functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memorySizeMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${spec.functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: instance.logStream,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    ...credentials(userEnv),
    // Where the X-Ray SDK sends segments: Lambda names its daemon; locally one `npm start`'s environment names, else the SDK's default.
    AWS_XRAY_DAEMON_ADDRESS: userEnv.AWS_XRAY_DAEMON_ADDRESS?.trim() || '127.0.0.1:2000',
    LANG: 'en_US.UTF-8',
    TZ: 'UTC',
    PATH: userEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  };
}
