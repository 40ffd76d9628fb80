import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { FUNCTIONS, ROOT } from '../../infra/build.js';
import { LAMBDA_RUNTIME_ID } from '../../infra/local/node-version.js';
import { canCutNetwork, fragmentResourceIds, type Json, packagedVariant, WAF_RESOURCE_IDS } from '../helpers/package.js';
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

    // Only the web ACL's resources wait for a stage that asks for them (wafRateLimit).
    expect(fragmentResourceIds().filter((id) => !ids.includes(id))).toEqual(WAF_RESOURCE_IDS);
    expect(
      ofType('AWS::Lambda::Function')
        .map(([id]) => id)
        .sort(),
    ).toEqual(expect.arrayContaining(Object.keys(FUNCTIONS).map((name) => `${name[0]!.toUpperCase()}${name.slice(1)}LambdaFunction`)));
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
    expect(run.output).toContain('Cannot resolve variable at "provider.environment.JWT_ISSUER"');
    expect(run.output).toContain('Cannot resolve variable at "provider.environment.PUBLIC_URL"');
    // The 401s name the public URL too: a stage cannot be packaged with challenges that point nowhere.
    expect(run.output).toContain(
      'PublicApiGatewayResponseUnauthorized.Properties.ResponseParameters.gatewayresponse.header.WWW-Authenticate',
    );
    expect(run.output).toContain('Value not found at "param" source');
  }, 120_000);
});

describe('Template: a stage that turns AWS WAF on (wafRateLimit)', () => {
  it('attaches a web ACL to the public stage that blocks a token past its rate, keyed on the Authorization header', async () => {
    const run = await packagedVariant(inject('packagingDir'), 'waf');
    if (!run.template) throw new Error(`osls package failed:\n${run.output}`);
    const waf = run.template;
    const acl = waf.Resources.PublicApiWebAcl;

    expect(waf.Conditions).toBeUndefined();
    expect(acl.Condition).toBeUndefined();
    expect(acl.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    expect(acl.Properties.Rules).toEqual([
      expect.objectContaining({
        Action: { Block: {} },
        Statement: {
          RateBasedStatement: {
            Limit: '2000',
            EvaluationWindowSec: 300,
            AggregateKeyType: 'CUSTOM_KEYS',
            CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
          },
        },
      }),
    ]);
    expect(waf.Resources.PublicApiWebAclAssociation).toMatchObject({
      DependsOn: ['PublicApiStage'],
      Properties: {
        ResourceArn: { 'Fn::Sub': 'arn:${AWS::Partition}:apigateway:${AWS::Region}::/restapis/${ApiGatewayRestApi}/stages/example' },
        WebACLArn: { 'Fn::GetAtt': ['PublicApiWebAcl', 'Arn'] },
      },
    });
    // What the web ACL blocks is answered in the contract's words: the WAF_FILTERED gateway response.
    expect(waf.Resources.PublicApiGatewayResponseWafFiltered.Properties).toMatchObject({ ResponseType: 'WAF_FILTERED', StatusCode: '429' });
  }, 120_000);

  it('refuses a rate AWS WAF would refuse, naming the parameter', async () => {
    const run = await packagedVariant(inject('packagingDir'), 'wafTooLow');

    expect(run.status).not.toBe(0);
    expect(run.output).toContain('wafRateLimit must be 0 (no web ACL) or a whole number from 10 to 2000000000, not "5"');
  }, 120_000);
});
