import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadFleet } from '../../infra/local/fleet.js';
import { resetTenantClients, tenantDynamo } from '../../lib/store/tenant-client.js';
import { tenantLeadingKeysPattern, tenantSessionName } from '../../lib/store/tenant-fence.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine } from '../helpers/env.js';
import { invokeStreamed } from '../helpers/streaming.js';
import { eventFixture, testContext } from '../helpers/events.js';

/**
 * Tenant fencing by IAM, as the functions run it: each tenant's reads sign with the credentials of
 * a session of the tenant-read role, obtained by `sts:AssumeRole` with the tenant's session policy
 * and tag. STS is a stand-in here (a local HTTP server speaking its query protocol: AWS's STS is
 * not reachable from a test), which records what it is asked; DynamoDB is the real local engine.
 */

interface AssumeRoleCall {
  RoleArn: string;
  RoleSessionName: string;
  DurationSeconds: string;
  Policy: string;
  tag: string;
}

let engine: TestEngine;
let sts: Server;
let calls: AssumeRoleCall[] = [];
let answer: (res: ServerResponse) => void;
let expiresInMs = 3_600_000;
let inventory: (event: APIGatewayProxyEventV2WithJWTAuthorizer, context: Context) => Promise<{ statusCode: number; headers?: Record<string, unknown>; body?: string }>;
const ROLE = 'arn:aws:iam::123456789012:role/endpoint-read-service-test-tenant-read';

const credentials = (res: ServerResponse): void => {
  res.writeHead(200, { 'Content-Type': 'text/xml' });
  res.end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>
<AccessKeyId>ASIATESTKEY${calls.length}</AccessKeyId><SecretAccessKey>secret</SecretAccessKey><SessionToken>token</SessionToken>
<Expiration>${new Date(Date.now() + expiresInMs).toISOString()}</Expiration></Credentials>
<AssumedRoleUser><AssumedRoleId>AROATEST:s</AssumedRoleId><Arn>${ROLE}/s</Arn></AssumedRoleUser><PackedPolicySize>12</PackedPolicySize>
</AssumeRoleResult><ResponseMetadata><RequestId>r-${calls.length}</RequestId></ResponseMetadata></AssumeRoleResponse>`);
};

beforeAll(async () => {
  engine = await startTestEngine();
  sts = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      if (form.get('Action') === 'AssumeRole') {
        calls.push({
          RoleArn: form.get('RoleArn') ?? '',
          RoleSessionName: form.get('RoleSessionName') ?? '',
          DurationSeconds: form.get('DurationSeconds') ?? '',
          Policy: form.get('Policy') ?? '',
          tag: `${form.get('Tags.member.1.Key')}=${form.get('Tags.member.1.Value')}`,
        });
      }
      answer(res);
    });
  });
  await new Promise<void>((resolve) => sts.listen(0, '127.0.0.1', resolve));
  const tenants = ['acme', 'a*b'];
  await loadFleet(engine.db, engine.tables, { tenants: tenants.map((t) => ({ tenant_id: t, agents: [{ agent_id: `${t}-1`, hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] })) }, 8);
  // A streaming handler, called through the stand-in for the Lambda runtime's response stream (the helper installs it).
  const streaming = (await import('../../functions/inventory/handler.js')).handler;
  inventory = (event, context) => invokeStreamed(streaming, event, context);
});
afterAll(async () => {
  resetTenantClients();
  sts?.closeAllConnections();
  await new Promise((resolve) => sts?.close(resolve));
  await engine?.close();
});
beforeEach(() => {
  calls = [];
  answer = credentials;
  expiresInMs = 3_600_000;
  useEngine(engine, { TENANT_FENCING: 'iam', TENANT_READ_ROLE_ARN: ROLE, STS_ENDPOINT: `http://127.0.0.1:${(sts.address() as AddressInfo).port}` });
  resetTenantClients();
});

const listFor = (tenant: string) =>
  inventory(
    eventFixture<APIGatewayProxyEventV2WithJWTAuthorizer>('http-api', 'list-agents', (e) => {
      e.requestContext.authorizer.jwt.claims.tenant_id = tenant;
    }),
    testContext('inventory'),
  );

describe('Tenant fencing by IAM (an STS stand-in, the real local engine)', () => {
  it("reads a tenant's inventory with a session fenced to that tenant's key prefix, named and tagged for it", async () => {
    const res = await listFor('acme');

    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body!)).toMatchObject([{ agent_id: 'acme-1' }]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ RoleArn: ROLE, RoleSessionName: tenantSessionName('acme'), DurationSeconds: '3600', tag: 'tenant=acme' });
    expect(JSON.parse(calls[0]!.Policy).Statement[0].Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#acme#*'] } });
  });

  it('writes the wildcards of a tenant id literally in its fence, and tags it by digest', async () => {
    const res = await listFor('a*b');

    expect(res.statusCode).toBe(200);
    expect(JSON.parse(calls[0]!.Policy).Statement[0].Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys']).toEqual([tenantLeadingKeysPattern('a*b')]);
    expect(tenantLeadingKeysPattern('a*b')).toBe('T#a${*}b#*');
    expect(calls[0]!.tag).toMatch(/^tenant=sha256:/);
  });

  it('assumes the role once per tenant while its credentials last, and again shortly before they expire', async () => {
    await listFor('acme');
    await listFor('acme');
    await listFor('a*b');
    expect(calls.map((c) => c.RoleSessionName)).toEqual([tenantSessionName('acme'), tenantSessionName('a*b')]);

    resetTenantClients();
    calls = [];
    expiresInMs = 4 * 60_000; // inside the five minutes before expiry: renewed at the next read
    await listFor('acme');
    await listFor('acme');
    expect(calls).toHaveLength(2);
  });

  it('answers 503 with Retry-After, never an empty list, when STS is unavailable', async () => {
    answer = (res) => {
      res.writeHead(503, { 'Content-Type': 'text/xml' });
      res.end('<ErrorResponse><Error><Type>Receiver</Type><Code>ServiceUnavailable</Code><Message>down</Message></Error></ErrorResponse>');
    };

    const res = await listFor('acme');

    expect(res.statusCode).toBe(503);
    expect(res.headers?.['Retry-After']).toBeDefined();
    expect(res.body).toMatch(/unavailable right now/);
  });

  it('reads with the service client and asks STS nothing when fencing is off', async () => {
    useEngine(engine, { TENANT_FENCING: 'off' });

    const res = await listFor('acme');

    expect(res.statusCode).toBe(200);
    expect(calls).toHaveLength(0);
    expect(await tenantDynamo('acme')).toBe(await tenantDynamo('globex'));
  });
});
