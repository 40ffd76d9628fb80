import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import {
  apiGatewayAccount,
  ec2VpcEndpoint,
  ec2VpcEndpointNotFound,
  lambdaAccountSettings,
  lambdaFunctionConcurrency,
  lambdaFunctionNotFound,
  type RecordedAnswer,
  type VpcEndpointAnswer,
} from '../fixtures/aws-answers.js';
import { credentialFreeEnv } from '../helpers/package.js';
import { EXAMPLE, ofType, resource } from '../helpers/template.js';

/**
 * `npm run preflight` as a user runs it, on the example stage's packaged template, against AWS's
 * recorded answers (test/fixtures/aws-answers.ts, served over HTTP to the real SDK clients through
 * AWS_ENDPOINT_URL, never a live account) and an issuer stand-in on loopback serving a discovery
 * document and a key set. Each run is the CLI in a process of its own.
 */

interface Scenario {
  concurrency: { total: number; unreserved: number };
  /** What each function reserves today; a function not named does not exist yet. */
  reservedNow: Record<string, number>;
  cloudwatchRoleArn: string | undefined;
  endpoint: VpcEndpointAnswer | 'missing';
  issuer: { names?: string; keyType?: 'RSA' | 'EC'; tokenEndpoint?: string; grants?: string[] };
}

const functionNames = ofType('AWS::Lambda::Function').map(([, f]) => f.Properties.FunctionName as string);
const region = 'us-east-1';
const executeApi = `com.amazonaws.${region}.execute-api`;

let scenario: Scenario;
/** The operations the stand-in for AWS was asked, in order. */
let asked: string[] = [];
let awsServer: Server;
let awsUrl: string;
let issuerServer: Server;
let issuerUrl: string;
let packageDir: string;
let rsaKey: Record<string, unknown>;
let ecKey: Record<string, unknown>;

const listen = (server: Server): Promise<string> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

const bodyOf = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => resolve(text));
  });

/** The recorded answer to one request of the SDK, and the operation it asks (recorded in `asked`). */
async function awsAnswer(request: IncomingMessage): Promise<RecordedAnswer> {
  const path = new URL(request.url ?? '/', 'http://aws').pathname;
  const concurrency = /^\/2019-09-30\/functions\/([^/]+)\/concurrency$/.exec(path);
  if (request.method === 'GET' && path.startsWith('/2016-08-19/account-settings')) {
    asked.push('lambda:GetAccountSettings');
    return lambdaAccountSettings(scenario.concurrency.total, scenario.concurrency.unreserved);
  }
  if (request.method === 'GET' && concurrency) {
    const name = decodeURIComponent(concurrency[1]!);
    asked.push(`lambda:GetFunctionConcurrency ${name}`);
    return name in scenario.reservedNow ? lambdaFunctionConcurrency(scenario.reservedNow[name]!) : lambdaFunctionNotFound(name);
  }
  if (request.method === 'GET' && path === '/account') {
    asked.push('apigateway:GetAccount');
    return apiGatewayAccount(scenario.cloudwatchRoleArn);
  }
  const form = new URLSearchParams(await bodyOf(request));
  if (request.method === 'POST' && path === '/' && form.get('Action') === 'DescribeVpcEndpoints') {
    const id = form.get('VpcEndpointId.1') ?? '';
    asked.push(`ec2:DescribeVpcEndpoints ${id}`);
    return scenario.endpoint === 'missing' ? ec2VpcEndpointNotFound(id) : ec2VpcEndpoint(scenario.endpoint);
  }
  asked.push(`unexpected ${request.method} ${request.url} ${form.get('Action') ?? ''}`);
  return { status: 400, headers: { 'content-type': 'application/json' }, body: '{"message":"not a recorded answer"}' };
}

beforeAll(async () => {
  const { publicKey: rsa } = await generateKeyPair('RS256');
  const { publicKey: ec } = await generateKeyPair('ES256');
  rsaKey = { ...(await exportJWK(rsa)), kid: 'rsa-1', use: 'sig', alg: 'RS256' };
  ecKey = { ...(await exportJWK(ec)), kid: 'ec-1', use: 'sig', alg: 'ES256' };

  awsServer = createServer((request, response) => {
    void awsAnswer(request).then((answer) => {
      response.writeHead(answer.status, answer.headers);
      response.end(answer.body);
    });
  });
  issuerServer = createServer((request, response) => {
    const { issuer } = scenario;
    const send = (value: unknown) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    if (request.url === '/.well-known/openid-configuration') {
      send({
        issuer: issuer.names ?? `${issuerUrl}/`,
        jwks_uri: `${issuerUrl}/keys`,
        token_endpoint: issuer.tokenEndpoint ?? `${issuerUrl}/oauth2/token`,
        grant_types_supported: issuer.grants ?? ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      });
    } else if (request.url === '/keys') {
      send({ keys: [issuer.keyType === 'EC' ? ecKey : rsaKey] });
    } else {
      response.writeHead(404).end();
    }
  });
  awsUrl = await listen(awsServer);
  issuerUrl = await listen(issuerServer);

  // The example stage as `npm run package` wrote it, its issuer (and token endpoint) at the stand-in.
  packageDir = mkdtempSync(join(tmpdir(), 'preflight-'));
  for (const file of ['cloudformation-template-update-stack.json', 'serverless-state.json']) {
    const text = readFileSync(join(inject('packagingDir'), file), 'utf8');
    writeFileSync(join(packageDir, file), text.replaceAll(EXAMPLE.issuer, `${issuerUrl}/`));
  }
});

afterAll(async () => {
  await Promise.all([awsServer, issuerServer].map((server) => new Promise((resolve) => server?.close(resolve))));
});

/**
 * `npm run preflight -- --package DIR` pointed at the stand-in, with credentials for it (or none:
 * then whatever it still asks AWS reaches the stand-in and is recorded), its exit and its lines.
 */
function preflight(
  dir = packageDir,
  credentials = true,
): Promise<{ status: number | string; lines: string[]; stderr: string; asked: string[] }> {
  asked = [];
  const env: NodeJS.ProcessEnv = { ...credentialFreeEnv(), AWS_EC2_METADATA_DISABLED: 'true', AWS_ENDPOINT_URL: awsUrl };
  if (credentials) {
    Object.assign(env, {
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    });
  }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'infra', 'preflight.ts'), '--package', dir],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : String(error.code)) : 0;
        resolve({ status, lines: stdout.trim().split('\n'), stderr, asked });
      },
    );
  });
}

const READY: Scenario = {
  concurrency: { total: 1000, unreserved: 1000 },
  reservedNow: {},
  cloudwatchRoleArn: 'arn:aws:iam::123456789012:role/api-gateway-cloudwatch-logs',
  endpoint: { id: EXAMPLE.vpce, serviceName: executeApi },
  issuer: {},
};

describe('npm run preflight (recorded AWS answers, an issuer on loopback)', () => {
  it('reports a ready account and issuer as one ok line per check, asking AWS only the read-only questions it names', async () => {
    scenario = READY;
    const run = await preflight();

    expect(run.status).toBe(0);
    expect(run.lines).toEqual([
      "ok   Lambda concurrency: the stage reserves 90 of the account's 1000; 910 stay unreserved (Lambda keeps at least 100).",
      'ok   API Gateway CloudWatch Logs role: arn:aws:iam::123456789012:role/api-gateway-cloudwatch-logs (the access logs need it).',
      `ok   execute-api VPC endpoint: ${EXAMPLE.vpce} serves ${executeApi} in vpc-0a1b2c3d4e5f67890, available, with private DNS.`,
      `ok   Issuer discovery: ${issuerUrl}/.well-known/openid-configuration names ${issuerUrl}/; its key set ${issuerUrl}/keys holds 1 RSA signing key.`,
      `ok   Token exchange: the MCP service exchanges tokens at ${issuerUrl}/oauth2/token.`,
      'ok   Alarm subscription: 1 subscription (to be confirmed once deployed).',
    ]);
    expect(run.asked).toEqual([
      'lambda:GetAccountSettings',
      ...functionNames.map((name) => `lambda:GetFunctionConcurrency ${name}`),
      'apigateway:GetAccount',
      `ec2:DescribeVpcEndpoints ${EXAMPLE.vpce}`,
    ]);
    // What it sums is what the template reserves.
    const reserved = ofType('AWS::Lambda::Function').reduce((sum, [, f]) => sum + (f.Properties.ReservedConcurrentExecutions as number), 0);
    expect(reserved).toBe(90);
  }, 60_000);

  it('fails a new account on each precondition it misses, one line each saying what to do, and exits 1', async () => {
    scenario = {
      concurrency: { total: 150, unreserved: 150 },
      reservedNow: {},
      cloudwatchRoleArn: undefined,
      endpoint: 'missing',
      issuer: { names: 'https://login.example.com/' },
    };
    const run = await preflight();

    expect(run.status).toBe(1);
    expect(run.lines).toEqual([
      'FAIL Lambda concurrency: the stage reserves 90 (90 more than now), but the account has 150 of 150 unreserved and Lambda keeps 100: ' +
        `ask for a "Concurrent executions" quota of at least 190 (Service Quotas, AWS Lambda, ${region}) or lower the stage's *ReservedConcurrency parameters.`,
      expect.stringMatching(
        /^FAIL API Gateway CloudWatch Logs role: the account has none in us-east-1, .*aws apigateway update-account .*restApiAccessLogs=false/,
      ),
      `FAIL execute-api VPC endpoint: ${EXAMPLE.vpce} does not exist in ${region}: create an interface endpoint for ${executeApi} with private DNS in the MCP function's VPC and name it in executeApiVpcEndpointId.`,
      `FAIL Issuer discovery: no usable discovery document for ${issuerUrl}/ (the discovery document names the issuer "https://login.example.com/", not the configured "${issuerUrl}/"): ` +
        "set jwtIssuer to the issuer's own value (its tokens' iss), or jwksUrl to its key set.",
      'ok   Alarm subscription: 1 subscription (to be confirmed once deployed).',
    ]);
  }, 60_000);

  it("counts what a redeploy's functions already reserve, and names every fault of an endpoint and an issuer's keys", async () => {
    // 110 unreserved would not spare 90 more, but the stage's functions hold those 90 already.
    scenario = {
      concurrency: { total: 200, unreserved: 110 },
      reservedNow: Object.fromEntries(
        ofType('AWS::Lambda::Function').map(([, f]) => [f.Properties.FunctionName, f.Properties.ReservedConcurrentExecutions]),
      ),
      cloudwatchRoleArn: 'arn:aws:iam::123456789012:role/api-gateway-cloudwatch-logs',
      endpoint: { id: EXAMPLE.vpce, serviceName: `com.amazonaws.${region}.s3`, type: 'Gateway', privateDnsEnabled: false },
      issuer: { keyType: 'EC', tokenEndpoint: 'https://login.example.com/token', grants: ['authorization_code'] },
    };
    const run = await preflight();

    expect(run.status).toBe(1);
    expect(run.lines[0]).toBe(
      "ok   Lambda concurrency: the stage reserves 90 of the account's 200; 110 stay unreserved (Lambda keeps at least 100).",
    );
    expect(run.lines[2]).toBe(
      `FAIL execute-api VPC endpoint: ${EXAMPLE.vpce}: it serves com.amazonaws.${region}.s3, not ${executeApi}; it is a Gateway endpoint, not an interface endpoint; ` +
        'its private DNS is off, so the API name the MCP function calls does not resolve to it: create an interface endpoint for ' +
        `${executeApi} with private DNS in the MCP function's VPC and name it in executeApiVpcEndpointId.`,
    );
    expect(run.lines[3]).toBe(
      `FAIL Issuer discovery: ${issuerUrl}/.well-known/openid-configuration names ${issuerUrl}/; its key set ${issuerUrl}/keys holds no RSA signing key, and the functions verify RS256 only: use an issuer that signs with RSA.`,
    );
    expect(run.lines[4]).toBe(
      `warn Token exchange: tokenEndpoint is ${issuerUrl}/oauth2/token, but the issuer names https://login.example.com/token; ` +
        "the issuer does not list the token exchange grant (RFC 8693) among its grant types: the MCP door's observations calls need both (docs/deploying.md, Issuers).",
    );
  }, 60_000);

  it('says where credentials are missing rather than guessing, and refuses to run without a packaged template', async () => {
    scenario = READY;
    const offline = await preflight(packageDir, false);
    const unpackaged = await preflight(mkdtempSync(join(tmpdir(), 'no-package-')));

    expect(offline.status).toBe(1);
    expect(offline.lines.slice(0, 3)).toEqual([
      'FAIL Lambda concurrency: no AWS credentials to ask Lambda with: set AWS_PROFILE (or the usual AWS_ variables) for the target account.',
      'FAIL API Gateway CloudWatch Logs role: no AWS credentials to ask API Gateway with: set AWS_PROFILE (or the usual AWS_ variables) for the target account.',
      'FAIL execute-api VPC endpoint: no AWS credentials to ask EC2 with: set AWS_PROFILE (or the usual AWS_ variables) for the target account.',
    ]);
    expect(offline.asked).toEqual([]);
    expect(unpackaged.status).toBe(2);
    expect(unpackaged.stderr).toMatch(/^preflight: no packaged template in .*: run npm run package -- --stage STAGE --param=… first/);
  }, 60_000);

  it('reads the stage it checks from the template: its functions, the private API endpoint and its issuer', () => {
    expect(functionNames).toHaveLength(4);
    expect(resource('PrivateApi').Properties.EndpointConfiguration.VpcEndpointIds).toEqual([EXAMPLE.vpce]);
  });
});
