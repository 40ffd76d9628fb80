/**
 * An offline check of a CloudFormation template against AWS's resource specification, as the
 * CDK team publishes it (`@aws-cdk/aws-service-spec`, read through `@aws-cdk/service-spec-types`).
 * It catches before a deploy what CloudFormation would otherwise refuse only during one: an unknown
 * resource type or property, a value of the wrong shape (or not among the values the specification
 * enumerates), a missing required property, and a `Ref`, `Fn::GetAtt`, `Fn::Sub` variable,
 * `DependsOn`, condition or mapping that names nothing.
 *
 * Pure: the template and the loaded specification in, a list of problems out. Loading the
 * specification (`loadAwsServiceSpec()`, about half a second) is the caller's business, once.
 * Three ideas, one file each: what the template declares, read against the specification
 * (declarations.ts); the references (references.ts); the shapes of property values (shapes.ts).
 * This file walks the template's sections and resource attributes and hands values to them.
 *
 * Deliberately not checked (CloudFormation or the service decides these at deploy time, and the
 * specification cannot say): values produced by intrinsic functions, whose result is only known
 * then (each is accepted where its kind of result, scalar, list or object, could fit); the content
 * of JSON-typed properties (policy documents, dashboard bodies), whose references are still
 * checked; patterns, lengths and ranges; which properties exclude each other; and account limits.
 * Where the specification allows a property several types (its current and earlier ones, or a
 * union such as DynamoDB's `KeySchema`, a list or any JSON), a value that fits one of them passes.
 */
import type { Property, SpecDatabase } from '@aws-cdk/service-spec-types';
import { Declarations } from './declarations.js';
import { intrinsicName, isObject, type Json, shapeOf } from './intrinsics.js';
import { type At, Problems, type TemplateProblem } from './problems.js';
import { ReferenceCheck } from './references.js';
import { ShapeCheck } from './shapes.js';

const TEMPLATE_SECTIONS = new Set([
  'AWSTemplateFormatVersion',
  'Description',
  'Metadata',
  'Parameters',
  'Rules',
  'Mappings',
  'Conditions',
  'Transform',
  'Resources',
  'Outputs',
]);

const RESOURCE_KEYS = new Set([
  'Type',
  'Properties',
  'DependsOn',
  'Condition',
  'DeletionPolicy',
  'UpdateReplacePolicy',
  'UpdatePolicy',
  'CreationPolicy',
  'Metadata',
]);

const DELETION_POLICIES = new Set(['Delete', 'Retain', 'RetainExceptOnCreate', 'Snapshot']);
const UPDATE_REPLACE_POLICIES = new Set(['Delete', 'Retain', 'Snapshot']);

/** The checks of one template, sharing what it declares and where problems go. */
interface Checks {
  declared: Declarations;
  problems: Problems;
  references: ReferenceCheck;
  shapes: ShapeCheck;
}

function freeForm(names: readonly string[]): Record<string, Property> {
  return Object.fromEntries(names.map((name) => [name, { type: { type: 'json' } }]));
}

/**
 * Every problem the specification can show in `template` (a parsed CloudFormation template, JSON
 * shape). An empty list means: every resource type exists, every property exists for its type with
 * a shape CloudFormation accepts, every required property is present, and every reference
 * (`Ref`, `Fn::GetAtt`, `Fn::Sub`, `DependsOn`, conditions, mappings) names something declared.
 * Pure and deterministic: the same template and specification give the same list, in template order.
 */
export function validateTemplate(template: unknown, spec: SpecDatabase): TemplateProblem[] {
  const top: At = { logicalId: 'Template', path: '' };
  if (!isObject(template)) {
    return [{ ...top, name: 'Template', message: `a template is an object, not ${shapeOf(template)}` }];
  }
  const section = (name: string): Json => (isObject(template[name]) ? (template[name] as Json) : {});
  const declared = new Declarations(spec, section('Resources'), section('Parameters'), section('Conditions'), section('Mappings'));
  const problems = new Problems();
  const checks: Checks = {
    declared,
    problems,
    references: new ReferenceCheck(declared, problems),
    shapes: new ShapeCheck(declared, problems),
  };

  for (const key of Object.keys(template)) {
    if (!TEMPLATE_SECTIONS.has(key)) problems.report({ ...top, path: key }, key, `${key} is no section of a CloudFormation template`);
  }
  if (!isObject(template.Resources) || Object.keys(template.Resources).length === 0) {
    problems.report({ ...top, path: 'Resources' }, 'Resources', 'a template needs at least one resource');
  }
  for (const [name, condition] of Object.entries(section('Conditions'))) {
    checks.references.walk(condition, { logicalId: `Conditions.${name}`, path: '' }, true);
  }
  for (const [logicalId, resource] of Object.entries(declared.resources)) checkResource(checks, logicalId, resource);
  for (const [name, output] of Object.entries(section('Outputs'))) checkOutput(checks, name, output);
  return [...problems.all];
}

/** One resource: its keys, type, `DependsOn`, condition, policies, then its properties' references and shapes. */
function checkResource({ declared, problems, references, shapes }: Checks, logicalId: string, resource: unknown): void {
  const at = (path: string): At => ({ logicalId, path });
  if (!isObject(resource)) {
    problems.report(at(''), logicalId, `a resource is an object with a Type, not ${shapeOf(resource)}`);
    return;
  }
  for (const key of Object.keys(resource)) {
    if (!RESOURCE_KEYS.has(key))
      problems.report(at(key), key, `${key} is no attribute of a resource (Type, Properties, DependsOn, Condition, …)`);
  }

  const type = resource.Type;
  const resourceSpec = typeof type === 'string' ? declared.resourceSpec(type) : undefined;
  if (typeof type !== 'string') problems.report(at('Type'), String(type), `a resource needs a Type, not ${shapeOf(type)}`);
  else if (!resourceSpec) problems.report(at('Type'), type, `${type} is no resource type in AWS's specification`);

  const dependsOn = resource.DependsOn;
  if (dependsOn !== undefined) {
    const targets = Array.isArray(dependsOn) ? dependsOn : [dependsOn];
    targets.forEach((target, i) => {
      const here = at(Array.isArray(dependsOn) ? `DependsOn[${i}]` : 'DependsOn');
      if (typeof target !== 'string' || !(target in declared.resources)) {
        problems.report(here, String(target), `DependsOn names ${JSON.stringify(target)}, which is no resource of the template`);
      } else if (target === logicalId) {
        problems.report(here, target, `${logicalId} depends on itself`);
      }
    });
  }
  if (resource.Condition !== undefined) references.condition(at('Condition'), resource.Condition, 'Condition');
  if (resource.DeletionPolicy !== undefined && !DELETION_POLICIES.has(String(resource.DeletionPolicy))) {
    problems.report(
      at('DeletionPolicy'),
      String(resource.DeletionPolicy),
      `DeletionPolicy must be one of ${[...DELETION_POLICIES].join(', ')}`,
    );
  }
  if (resource.UpdateReplacePolicy !== undefined && !UPDATE_REPLACE_POLICIES.has(String(resource.UpdateReplacePolicy))) {
    problems.report(
      at('UpdateReplacePolicy'),
      String(resource.UpdateReplacePolicy),
      `UpdateReplacePolicy must be one of ${[...UPDATE_REPLACE_POLICIES].join(', ')}`,
    );
  }

  const properties = resource.Properties ?? {};
  if (!isObject(properties) || intrinsicName(properties)) {
    problems.report(at('Properties'), 'Properties', `Properties must be an object, not ${shapeOf(properties)}`);
    return;
  }
  references.walk(properties, at('Properties'));
  if (resourceSpec && typeof type === 'string') {
    // A custom resource takes any property its provider understands; only the token is fixed.
    const custom = resourceSpec.cloudFormationType === 'AWS::CloudFormation::CustomResource';
    const known = custom ? { ...freeForm(Object.keys(properties)), ...resourceSpec.properties } : resourceSpec.properties;
    shapes.properties(properties, known, type, at('Properties'));
  }
}

/** One output: a `Value`, and the references in it, its condition and its export. */
function checkOutput({ problems, references }: Checks, name: string, output: unknown): void {
  const at: At = { logicalId: `Outputs.${name}`, path: '' };
  if (!isObject(output) || !('Value' in output)) {
    problems.report({ ...at, path: 'Value' }, 'Value', 'an output needs a Value');
    return;
  }
  if (output.Condition !== undefined) references.condition({ ...at, path: 'Condition' }, output.Condition, 'Condition');
  references.walk(output.Value, { ...at, path: 'Value' });
  if (output.Export !== undefined) references.walk(output.Export, { ...at, path: 'Export' });
}
