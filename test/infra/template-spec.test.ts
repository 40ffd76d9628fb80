import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAwsServiceSpec } from '@aws-cdk/aws-service-spec';
import type { SpecDatabase } from '@aws-cdk/service-spec-types';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { fragmentResourceIds, type Json, packagedTemplate, packagedVariant, WAF_RESOURCE_IDS } from '../helpers/package.js';
import { formatProblem, type TemplateProblem } from '../tools/template-spec/problems.js';
import { validateTemplate } from '../tools/template-spec/validate.js';

/**
 * The template `npm run package` writes, checked offline against AWS's CloudFormation resource
 * specification (test/tools/template-spec/), and a hand-written template with one mistake per
 * resource to show that the check does refuse what CloudFormation would.
 */

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'templates', 'one-mistake-per-resource.json');

let spec: SpecDatabase;

// Packaged once per run, started by the template project's global setup (test/helpers/template-setup.ts).
const { template } = await packagedTemplate(inject('packagingDir'));

beforeAll(async () => {
  spec = await loadAwsServiceSpec();
}, 60_000);

describe('Template: checked against AWS resource specification', () => {
  describe('the template npm run package writes', () => {
    it('has only known resource types and properties, every required property, and no reference to anything undeclared', () => {
      const problems = validateTemplate(template, spec);

      // The check ran over the whole template: every resource of the fragments is in it (but the
      // HTTPS alarm subscription the example stage does not ask for, which the next variant has).
      expect(fragmentResourceIds().filter((id) => !(id in (template.Resources as Json)))).toEqual(['AlarmHttpsSubscription']);
      expect(problems.map(formatProblem)).toEqual([]);
    });

    it("checks the public REST API's every part: authorizers, the streaming and the preflight methods, gateway responses, stage", () => {
      const resources = Object.values(template.Resources as Record<string, Json>);
      const types = new Set(resources.map((r) => r.Type as string));
      const methods = resources.filter((r) => r.Type === 'AWS::ApiGateway::Method').map((r) => r.Properties);

      for (const type of ['AWS::ApiGateway::Authorizer', 'AWS::ApiGateway::GatewayResponse', 'AWS::ApiGateway::Stage']) {
        expect(types.has(type), type).toBe(true);
      }
      expect(methods.some((m) => m.Integration.ResponseTransferMode === 'STREAM')).toBe(true);
      expect(methods.some((m) => m.HttpMethod === 'OPTIONS' && m.AuthorizationType === 'NONE')).toBe(true);
    });
  });

  describe('the templates of stages that change what the template holds', () => {
    it('has the web ACL, its logging and association in the example stage, and is as valid without them', async () => {
      const run = await packagedVariant(inject('packagingDir'), 'noWaf');
      if (!run.template) throw new Error(`osls package failed:\n${run.output}`);
      const types = Object.values(template.Resources as Record<string, Json>).map((r) => r.Type);

      expect(types).toEqual(
        expect.arrayContaining(['AWS::WAFv2::WebACL', 'AWS::WAFv2::WebACLAssociation', 'AWS::WAFv2::LoggingConfiguration']),
      );
      for (const id of WAF_RESOURCE_IDS) expect(run.template.Resources[id]).toBeUndefined();
      expect(validateTemplate(run.template, spec).map(formatProblem)).toEqual([]);
    }, 120_000);

    it('is as valid with a customer managed key for the tables and an HTTPS alarm subscription', async () => {
      const run = await packagedVariant(inject('packagingDir'), 'customerKey');
      if (!run.template) throw new Error(`osls package failed:\n${run.output}`);

      expect(run.template.Resources.AlarmHttpsSubscription.Type).toBe('AWS::SNS::Subscription');
      expect(validateTemplate(run.template, spec).map(formatProblem)).toEqual([]);
    }, 120_000);
  });

  describe('a hand-written template with one mistake in each resource but one', () => {
    const template = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Json;
    let problems: TemplateProblem[];

    beforeAll(() => {
      problems = validateTemplate(template, spec);
    });

    it.each([
      [
        'a misspelled property, with the likely name',
        'MisspelledTable',
        'BillingMod',
        /has no property BillingMod \(did you mean BillingMode\?\)/,
      ],
      ['a missing required property', 'TableWithoutKeys', 'KeySchema', /AWS::DynamoDB::Table requires KeySchema/],
      ['a Ref to nothing', 'AlarmOnMissingTopic', 'MissingTopic', /Ref names MissingTopic, which is no resource or parameter/],
      [
        'a Fn::GetAtt of an attribute the type does not have',
        'PublisherRole',
        'Arn',
        /asks Topic \(AWS::SNS::Topic\) for Arn.*\(it has TopicArn, TopicName\)/,
      ],
      ['a DependsOn to nothing', 'TopicAfterNothing', 'NoSuchResource', /DependsOn names "NoSuchResource", which is no resource/],
      ['a ${Missing} in Fn::Sub', 'LogGroupOfMissingName', 'Missing', /Fn::Sub \$\{Missing\} names Missing/],
      ['a string where a list is expected', 'AlarmWithOneAction', 'AlarmActions', /AlarmActions must be a list of strings, not the string/],
      ['an unknown resource type', 'MistypedTable', 'AWS::DynamoDB::Tabel', /AWS::DynamoDB::Tabel is no resource type/],
    ])('reports %s, naming the resource and the offending name', (_what, logicalId, name, message) => {
      expect(problems).toContainEqual(expect.objectContaining({ logicalId, name, message: expect.stringMatching(message) }));
    });

    it('reports each mistake once and nothing about the correct resource', () => {
      const faulty = Object.keys(template.Resources as Json).filter((id) => id !== 'Topic');

      expect(problems.map((p) => p.logicalId).sort()).toEqual(faulty.sort());
    });
  });
});
