import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { FUNCTIONS, ROOT } from '../../infra/build.js';
import { LAMBDA_RUNTIME_ID } from '../../infra/node-version.js';
import { canCutNetwork, fragmentResourceIds, type Json, LONGEST_STAGE, packagedVariant, WAF_RESOURCE_IDS } from '../helpers/package.js';
import { ofType, resource, state, template } from '../helpers/template.js';
import { readZip } from './zip.js';

/**
 * `npm run package` as a user runs it (build, then osls package), offline and without AWS
 * credentials: what it writes for the example stage, each function's bundle, and the stages it
 * refuses or changes by their parameters.
 */

describe('Template: npm run package', () => {
  it(`packages with no AWS credentials${canCutNetwork ? ' and no network' : ''} a template holding every resource of infra/*.yml and a function per bundle`, () => {
    const ids = Object.keys(template.Resources as Json);

    // Only the alarm topic's HTTPS subscription waits for a stage that names an endpoint (alarmHttpsEndpoint).
    expect(fragmentResourceIds().filter((id) => !ids.includes(id))).toEqual(['AlarmHttpsSubscription']);
    for (const id of WAF_RESOURCE_IDS) expect(ids).toContain(id);
    expect(
      ofType('AWS::Lambda::Function')
        .map(([id]) => id)
        .sort(),
    ).toEqual(expect.arrayContaining(Object.keys(FUNCTIONS).map((name) => `${name[0]!.toUpperCase()}${name.slice(1)}LambdaFunction`)));
  });

  it('publishes no Lambda version on each deploy (nothing invokes a version or an alias: versionFunctions is off)', () => {
    expect(ofType('AWS::Lambda::Version')).toEqual([]);
    expect(ofType('AWS::Lambda::Alias')).toEqual([]);
    expect(state.service.provider.versionFunctions).toBe(false);
  });

  describe('Bundles', () => {
    it.each([
      ['inventory', 'InventoryLambdaFunction'],
      ['observations', 'ObservationsLambdaFunction'],
      ['mcp', 'McpLambdaFunction'],
      ['authorizer', 'AuthorizerLambdaFunction'],
    ])(
      `ships %s as its own esbuild zip on ${LAMBDA_RUNTIME_ID}, the Node the local sandboxes run, with source maps enabled`,
      (name, id) => {
        const fn = resource(id).Properties;
        const artifact = state.service.functions[name].package.artifact as string;

        expect(fn.Runtime).toBe('nodejs24.x');
        expect(fn.Runtime).toBe(LAMBDA_RUNTIME_ID);
        expect(fn.Handler).toBe('index.handler');
        expect(fn.Environment.Variables.NODE_OPTIONS).toContain('--enable-source-maps');
        expect(fn.Code.S3Key).toMatch(new RegExp(`/${name}\\.zip$`));
        expect(artifact).toBe(`dist/${name}.zip`);
        const entries = readZip(readFileSync(join(ROOT, artifact))).map((e) => e.name);
        expect(entries).toEqual([...(name === 'mcp' ? ['endpoint-view.html'] : []), 'index.mjs', 'index.mjs.map']);
      },
    );
  });
});

describe('Template: a stage without its parameters', () => {
  it('refuses to package and names what is missing', async () => {
    expect(existsSync(join(ROOT, 'dist', 'private-api-deployment.json'))).toBe(true);

    const run = await packagedVariant(inject('packagingDir'), 'noParameters');

    expect(run.status).not.toBe(0);
    // Each function's own variables: the issuer of the functions that check tokens, the public URL of the doors.
    for (const [fn, variable] of [
      ['authorizer', 'JWT_ISSUER'],
      ['observations', 'JWT_ISSUER'],
      ['inventory', 'PUBLIC_URL'],
      ['mcp', 'PUBLIC_URL'],
      ['observations', 'BROKER_ALLOW_LIST'],
      ['mcp', 'TOKEN_ENDPOINT'],
    ])
      expect(run.output).toContain(`Cannot resolve variable at "functions.${fn}.environment.${variable}"`);
    // The 401s name the public URL too: a stage cannot be packaged with challenges that point nowhere.
    expect(run.output).toContain(
      'PublicApiGatewayResponseUnauthorized.Properties.ResponseParameters.gatewayresponse.header.WWW-Authenticate',
    );
    expect(run.output).toContain('Value not found at "param" source');
  }, 120_000);
});

describe('Template: a stage that turns AWS WAF off (waf=false)', () => {
  it('emits no web ACL, no WAF log group and no association, and nothing else changes', async () => {
    const run = await packagedVariant(inject('packagingDir'), 'noWaf');
    if (!run.template) throw new Error(`osls package failed:\n${run.output}`);
    // Each packaging names its public API deployment anew (osls): the rest is compared by logical id.
    const idsOf = (t: Json): string[] => Object.keys(t.Resources as Json).filter((id) => !id.startsWith('ApiGatewayDeployment'));
    const ids = idsOf(run.template);

    expect(
      idsOf(template)
        .filter((id) => !ids.includes(id))
        .sort(),
    ).toEqual(WAF_RESOURCE_IDS);
    expect(ids.filter((id) => !idsOf(template).includes(id))).toEqual([]);
    expect(run.template.Conditions).toBeUndefined();
  }, 120_000);

  it('refuses a rate AWS WAF would refuse, naming the parameter', async () => {
    const run = await packagedVariant(inject('packagingDir'), 'wafTooLow');

    expect(run.status).not.toBe(0);
    expect(run.output).toContain(
      'wafIpRateLimit must be a whole number from 10 to 2000000000 (requests in 5 minutes; waf=false turns AWS WAF off), not "5"',
    );
  }, 120_000);
});

describe('Template: a customer managed key for the tables and an HTTPS endpoint for the alarms', () => {
  it('puts both tables under the key, lets only the roles that read or write them use it through DynamoDB, and subscribes the endpoint', async () => {
    const run = await packagedVariant(inject('packagingDir'), 'customerKey');
    if (!run.template) throw new Error(`osls package failed:\n${run.output}`);
    const key = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    const resources = run.template.Resources as Json;
    const usesKey = (roleId: string): boolean =>
      (resources[roleId].Properties.Policies as Json[]).some((p) =>
        (p.PolicyDocument.Statement as Json[]).some((st) => st.Resource === key && st.Effect === 'Allow'),
      );

    for (const table of ['DataTable', 'AuditTable'])
      expect(resources[table].Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: key });
    expect(
      Object.keys(resources)
        .filter((id) => resources[id].Type === 'AWS::IAM::Role' && usesKey(id))
        .sort(),
    ).toEqual(['ObservationsRole', 'TenantAuditRole', 'TenantReadRole']);
    const statement = (resources.TenantReadRole.Properties.Policies[0].PolicyDocument.Statement as Json[]).find(
      (st) => st.Resource === key,
    )!;
    expect(statement.Condition).toEqual({ StringEquals: { 'kms:ViaService': { 'Fn::Sub': 'dynamodb.${AWS::Region}.${AWS::URLSuffix}' } } });
    expect(resources.AlarmHttpsSubscription.Properties).toEqual({
      TopicArn: { Ref: 'AlarmTopic' },
      Protocol: 'https',
      Endpoint: 'https://pager.example.com/sns',
    });
    expect(resources.AlarmEmailSubscription.Properties).toEqual({
      TopicArn: { Ref: 'AlarmTopic' },
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
    expect(run.template.Conditions).toBeUndefined();
  }, 120_000);
});

describe('Template: a stage name too long for the names it makes', () => {
  it(`packages the longest stage name that fits (${LONGEST_STAGE.length} characters), its longest function and role names 64 long`, async () => {
    const run = await packagedVariant(inject('packagingDir'), 'longestStage');
    if (!run.template) throw new Error(`osls package failed:\n${run.output}`);
    const names = Object.values(run.template.Resources as Json)
      .map((r) => r.Properties?.FunctionName ?? (r.Type === 'AWS::IAM::Role' ? r.Properties.RoleName : undefined))
      .filter((name): name is string => typeof name === 'string');

    expect(Math.max(...names.map((name) => name.length))).toBe(64);
  }, 120_000);

  it('refuses one character more, in one sentence that names the limit and the longest name', async () => {
    const run = await packagedVariant(inject('packagingDir'), 'tooLongStage');
    const stage = `${LONGEST_STAGE}b`;

    expect(run.status).not.toBe(0);
    expect(run.output).toContain(
      `The stage name "${stage}" makes the Lambda function name "endpoint-read-service-${stage}-observations" 65 characters long, ` +
        `past AWS's limit of 64 for function and role names: use a stage name of at most ${LONGEST_STAGE.length} characters.`,
    );
  }, 120_000);
});
