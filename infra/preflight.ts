/**
 * `npm run preflight [-- --package DIR]`: what a stage's first deploy needs from the account and the
 * issuer, checked before CloudFormation is asked, one line each (`ok`, `warn` or `FAIL` and what to
 * do), from the template `npm run package -- --stage … --param=…` wrote (DIR, default `.serverless`).
 * Exit 1 when a check fails, 2 when there is no packaged template.
 *
 * Read-only calls only, with the AWS SDK's usual credentials and the stage's region (docs/deploying.md
 * lists the permissions): Lambda GetAccountSettings and GetFunctionConcurrency (what the stage's
 * reservations leave unreserved), API Gateway GetAccount (the CloudWatch Logs role access logs need),
 * EC2 DescribeVpcEndpoints (the execute-api endpoint named for the private API), and plain HTTPS GETs
 * of the issuer's discovery document and key set, judged by the functions' own rules
 * (lib/auth/discovery.ts). The SDK clients are tooling: no function bundles them.
 */
import './node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { APIGatewayClient, GetAccountCommand } from '@aws-sdk/client-api-gateway';
import { DescribeVpcEndpointsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DiscoveryError, discoveryUrls, isAbsentDocument, jwksUriOf } from '../lib/auth/discovery.js';

// biome-ignore lint/suspicious/noExplicitAny: a CloudFormation template read as JSON; stagePlan picks what it needs and checks it.
type Json = Record<string, any>;

/** Lambda keeps at least this much of an account's concurrency unreserved (a reservation that would leave less is refused). */
export const LAMBDA_MIN_UNRESERVED = 100;

/** What the packaged stage asks of the account and the issuer. */
export interface StagePlan {
  region: string;
  /** Every function with its name and the concurrency it reserves. */
  functions: Array<{ name: string; reserved: number }>;
  /** Whether a REST stage writes access logs (which need API Gateway's CloudWatch Logs role). */
  accessLogs: boolean;
  /** The execute-api VPC endpoint the private API is bound to. */
  vpcEndpointId: string | undefined;
  issuer: string;
  /** `jwksUrl`, when the stage sets one instead of the discovery document's `jwks_uri`. */
  jwksUrl: string | undefined;
  /** The token endpoint the MCP function exchanges tokens at. */
  tokenEndpoint: string | undefined;
  /** How many subscriptions the alarm topic gets. */
  alarmSubscriptions: number;
}

export type Outcome = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  check: string;
  outcome: Outcome;
  /** One sentence: what was found, and for a warning or failure what to do. */
  detail: string;
}

/** The plan of the stage packaged into `dir` (the template and osls's state). */
export function readStagePlan(dir: string): StagePlan {
  const read = (file: string): Json => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Json;
  return stagePlan(read('cloudformation-template-update-stack.json'), read('serverless-state.json'));
}

export function stagePlan(template: Json, state: Json): StagePlan {
  const resources = Object.values((template.Resources ?? {}) as Record<string, Json>);
  const ofType = (type: string): Json[] => resources.filter((r) => r.Type === type);
  const functions = ofType('AWS::Lambda::Function').map((f) => ({
    name: String(f.Properties.FunctionName),
    reserved: Number(f.Properties.ReservedConcurrentExecutions ?? 0),
  }));
  const environment = (name: string): string | undefined => {
    for (const f of ofType('AWS::Lambda::Function')) {
      const value = f.Properties.Environment?.Variables?.[name];
      if (typeof value === 'string' && value !== '') return value;
    }
    return undefined;
  };
  const privateApi = ofType('AWS::ApiGateway::RestApi').find((api) => api.Properties.EndpointConfiguration?.Types?.includes('PRIVATE'));
  const issuer = environment('JWT_ISSUER');
  if (!issuer) throw new Error('the packaged template gives no function a JWT_ISSUER');
  return {
    region: String(state.service.provider.region),
    functions,
    accessLogs: ofType('AWS::ApiGateway::Stage').some((stage) => stage.Properties.AccessLogSetting !== undefined),
    vpcEndpointId: privateApi?.Properties.EndpointConfiguration.VpcEndpointIds?.[0],
    issuer,
    jwksUrl: environment('JWKS_URL'),
    tokenEndpoint: environment('TOKEN_ENDPOINT'),
    alarmSubscriptions: ofType('AWS::SNS::Subscription').length,
  };
}

/** The line of a check whose question AWS did not answer: no credentials, or not allowed (`permission`), or anything else. */
function couldNotAsk(check: string, service: string, error: unknown, permission: string): CheckResult {
  const e = error as { name?: string; message?: string };
  const detail =
    e.name === 'CredentialsProviderError'
      ? `no AWS credentials to ask ${service} with: set AWS_PROFILE (or the usual AWS_ variables) for the target account.`
      : `could not ask ${service} (${e.name ?? 'Error'}: ${(e.message ?? String(error)).split('\n')[0]}): the preflight needs ${permission}.`;
  return { check, outcome: 'fail', detail };
}

/** The stage's reservations against what the account leaves unreserved (a redeploy's current reservations given back first). */
export async function checkConcurrency(plan: StagePlan, lambda: LambdaClient): Promise<CheckResult> {
  const check = 'Lambda concurrency';
  try {
    const { AccountLimit } = await lambda.send(new GetAccountSettingsCommand({}));
    const unreserved = AccountLimit?.UnreservedConcurrentExecutions ?? 0;
    const total = AccountLimit?.ConcurrentExecutions ?? 0;
    let current = 0;
    for (const fn of plan.functions) {
      try {
        const answer = await lambda.send(new GetFunctionConcurrencyCommand({ FunctionName: fn.name }));
        current += answer.ReservedConcurrentExecutions ?? 0;
      } catch (error) {
        // A function the stage has not deployed yet reserves nothing.
        if ((error as Error).name !== 'ResourceNotFoundException') throw error;
      }
    }
    const reserved = plan.functions.reduce((sum, fn) => sum + fn.reserved, 0);
    const left = unreserved - (reserved - current);
    if (left >= LAMBDA_MIN_UNRESERVED) {
      return {
        check,
        outcome: 'ok',
        detail: `the stage reserves ${reserved} of the account's ${total}; ${left} stay unreserved (Lambda keeps at least ${LAMBDA_MIN_UNRESERVED}).`,
      };
    }
    // The quota at which the stage's reservations, beside everything else the account reserves, leave the minimum.
    const needed = LAMBDA_MIN_UNRESERVED + reserved + (total - unreserved - current);
    return {
      check,
      outcome: 'fail',
      detail:
        `the stage reserves ${reserved} (${reserved - current} more than now), but the account has ${unreserved} of ${total} unreserved and Lambda keeps ${LAMBDA_MIN_UNRESERVED}: ` +
        `ask for a "Concurrent executions" quota of at least ${needed} (Service Quotas, AWS Lambda, ${plan.region}) or lower the stage's *ReservedConcurrency parameters.`,
    };
  } catch (error) {
    return couldNotAsk(check, 'Lambda', error, 'lambda:GetAccountSettings and lambda:GetFunctionConcurrency');
  }
}

/** API Gateway's CloudWatch Logs role, which REST stages need for access logs. */
export async function checkApiGatewayLogsRole(plan: StagePlan, apiGateway: APIGatewayClient): Promise<CheckResult> {
  const check = 'API Gateway CloudWatch Logs role';
  if (!plan.accessLogs) return { check, outcome: 'ok', detail: 'not needed: the stage writes no access logs (restApiAccessLogs=false).' };
  try {
    const account = await apiGateway.send(new GetAccountCommand({}));
    if (account.cloudwatchRoleArn) return { check, outcome: 'ok', detail: `${account.cloudwatchRoleArn} (the access logs need it).` };
    return {
      check,
      outcome: 'fail',
      detail:
        `the account has none in ${plan.region}, and the stages' access logs need it: ` +
        'aws apigateway update-account --patch-operations op=replace,path=/cloudwatchRoleArn,value=<a role trusting apigateway.amazonaws.com with AmazonAPIGatewayPushToCloudWatchLogs>, or package with --param="restApiAccessLogs=false".',
    };
  } catch (error) {
    return couldNotAsk(check, 'API Gateway', error, 'apigateway:GET on the account (/account)');
  }
}

/** The execute-api interface endpoint the private API admits requests through. */
export async function checkVpcEndpoint(plan: StagePlan, ec2: EC2Client): Promise<CheckResult> {
  const check = 'execute-api VPC endpoint';
  const id = plan.vpcEndpointId;
  if (!id) return { check, outcome: 'fail', detail: 'the template binds the private API to no VPC endpoint: set executeApiVpcEndpointId.' };
  const service = `com.amazonaws.${plan.region}.execute-api`;
  const create = `create an interface endpoint for ${service} with private DNS in the MCP function's VPC and name it in executeApiVpcEndpointId`;
  try {
    const { VpcEndpoints = [] } = await ec2.send(new DescribeVpcEndpointsCommand({ VpcEndpointIds: [id] }));
    const endpoint = VpcEndpoints[0];
    if (!endpoint) return { check, outcome: 'fail', detail: `${id} does not exist in ${plan.region}: ${create}.` };
    const problems = [
      endpoint.ServiceName !== service && `it serves ${endpoint.ServiceName}, not ${service}`,
      endpoint.VpcEndpointType !== 'Interface' && `it is a ${endpoint.VpcEndpointType} endpoint, not an interface endpoint`,
      String(endpoint.State).toLowerCase() !== 'available' && `its state is ${endpoint.State}, not available`,
      endpoint.PrivateDnsEnabled !== true && 'its private DNS is off, so the API name the MCP function calls does not resolve to it',
    ].filter((p): p is string => typeof p === 'string');
    if (problems.length === 0)
      return { check, outcome: 'ok', detail: `${id} serves ${service} in ${endpoint.VpcId}, available, with private DNS.` };
    return { check, outcome: 'fail', detail: `${id}: ${problems.join('; ')}: ${create}.` };
  } catch (error) {
    if ((error as Error).name === 'InvalidVpcEndpointId.NotFound')
      return { check, outcome: 'fail', detail: `${id} does not exist in ${plan.region}: ${create}.` };
    return couldNotAsk(check, 'EC2', error, 'ec2:DescribeVpcEndpoints');
  }
}

/** How long each request to the issuer may take. */
const ISSUER_TIMEOUT_MS = 5_000;

async function get(url: string): Promise<Response> {
  try {
    return await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(ISSUER_TIMEOUT_MS) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${url} did not answer (${cause?.code ?? cause?.message ?? (error as Error).name})`);
  }
}

async function json(response: Response, url: string): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    throw new Error(`${url} did not answer JSON`);
  }
}

/**
 * The issuer's discovery document, found by the functions' own rules (lib/auth/discovery.ts):
 * OpenID Connect's, else RFC 8414's, the second asked only when the first is absent.
 */
async function discoveryDocument(issuer: string): Promise<{ url: string; document: unknown }> {
  const absent: string[] = [];
  for (const url of discoveryUrls(issuer)) {
    const response = await get(url);
    if (isAbsentDocument(response.status)) {
      absent.push(`${url} answered ${response.status}`);
      continue;
    }
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    return { url, document: await json(response, url) };
  }
  throw new Error(absent.join('; '));
}

/** The RSA signing keys of the key set at `url` (the functions verify RS256 only). */
async function rsaSigningKeys(url: string): Promise<number> {
  const response = await get(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const keySet = (await json(response, url)) as { keys?: Array<{ kty?: string; use?: string }> } | null;
  return (keySet?.keys ?? []).filter((key) => key.kty === 'RSA' && (key.use === undefined || key.use === 'sig')).length;
}

/** The issuer as the functions will find it: its discovery document naming it exactly, and a key set with an RSA signing key. */
export async function checkIssuer(plan: StagePlan): Promise<CheckResult[]> {
  const check = plan.jwksUrl ? 'Issuer keys' : 'Issuer discovery';
  let keysUrl = plan.jwksUrl;
  let found: { url: string; document: Json } | undefined;
  if (!keysUrl) {
    try {
      const { url, document } = await discoveryDocument(plan.issuer);
      keysUrl = jwksUriOf(document, plan.issuer);
      found = { url, document: document as Json };
    } catch (error) {
      const e = error as Error;
      const fix =
        e instanceof DiscoveryError
          ? "set jwtIssuer to the issuer's own value (its tokens' iss), or jwksUrl to its key set"
          : 'check jwtIssuer, and that the issuer is reachable from the internet';
      return [{ check, outcome: 'fail', detail: `no usable discovery document for ${plan.issuer} (${e.message}): ${fix}.` }];
    }
  }
  const results: CheckResult[] = [];
  try {
    const keys = await rsaSigningKeys(keysUrl);
    const where = found ? `${found.url} names ${plan.issuer}; its key set ${keysUrl}` : `the key set ${keysUrl} (jwksUrl)`;
    results.push(
      keys === 0
        ? {
            check,
            outcome: 'fail',
            detail: `${where} holds no RSA signing key, and the functions verify RS256 only: use an issuer that signs with RSA.`,
          }
        : { check, outcome: 'ok', detail: `${where} holds ${keys} RSA signing key${keys === 1 ? '' : 's'}.` },
    );
  } catch (error) {
    results.push({
      check,
      outcome: 'fail',
      detail: `the key set could not be read (${(error as Error).message}): check jwksUrl, or the issuer's jwks_uri.`,
    });
  }
  if (found) results.push(tokenEndpointCheck(plan, found.document));
  return results;
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

function tokenEndpointCheck(plan: StagePlan, document: Json): CheckResult {
  const check = 'Token exchange';
  const grants = Array.isArray(document.grant_types_supported) ? (document.grant_types_supported as string[]) : undefined;
  const problems = [
    plan.tokenEndpoint !== undefined &&
      typeof document.token_endpoint === 'string' &&
      document.token_endpoint !== plan.tokenEndpoint &&
      `tokenEndpoint is ${plan.tokenEndpoint}, but the issuer names ${document.token_endpoint}`,
    grants !== undefined &&
      !grants.includes(TOKEN_EXCHANGE) &&
      'the issuer does not list the token exchange grant (RFC 8693) among its grant types',
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length === 0)
    return { check, outcome: 'ok', detail: `the MCP service exchanges tokens at ${plan.tokenEndpoint ?? document.token_endpoint}.` };
  return {
    check,
    outcome: 'warn',
    detail: `${problems.join('; ')}: the MCP door's observations calls need both (docs/deploying.md, Issuers).`,
  };
}

function checkAlarmSubscription(plan: StagePlan): CheckResult {
  const check = 'Alarm subscription';
  if (plan.alarmSubscriptions > 0)
    return {
      check,
      outcome: 'ok',
      detail: `${plan.alarmSubscriptions} subscription${plan.alarmSubscriptions === 1 ? '' : 's'} (to be confirmed once deployed).`,
    };
  return { check, outcome: 'warn', detail: 'nobody is told when an alarm fires: set alarmEmail or alarmHttpsEndpoint.' };
}

/** Every check of a stage, in order. */
export async function preflight(plan: StagePlan): Promise<CheckResult[]> {
  const region = plan.region;
  const lambda = new LambdaClient({ region });
  const apiGateway = new APIGatewayClient({ region });
  const ec2 = new EC2Client({ region });
  try {
    return [
      await checkConcurrency(plan, lambda),
      await checkApiGatewayLogsRole(plan, apiGateway),
      await checkVpcEndpoint(plan, ec2),
      ...(await checkIssuer(plan)),
      checkAlarmSubscription(plan),
    ];
  } finally {
    for (const client of [lambda, apiGateway, ec2]) client.destroy();
  }
}

const MARK: Record<Outcome, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

export const formatResult = (result: CheckResult): string => `${MARK[result.outcome]} ${result.check}: ${result.detail}`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { package: { type: 'string', default: '.serverless' } }, strict: true });
  const dir = resolve(process.cwd(), values.package as string);
  if (!existsSync(join(dir, 'cloudformation-template-update-stack.json'))) {
    console.error(
      `preflight: no packaged template in ${dir}: run npm run package -- --stage STAGE --param=… first, with the stage's parameters.`,
    );
    return 2;
  }
  const plan = readStagePlan(dir);
  const results = await preflight(plan);
  for (const result of results) console.log(formatResult(result));
  return results.some((r) => r.outcome === 'fail') ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`preflight: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(2);
    },
  );
}
