import type { PropertyType, Resource, SpecDatabase, TypeDefinition } from '@aws-cdk/service-spec-types';
import { INTRINSIC_YIELDS, isObject, type Json, parseGetAtt, type Yield } from './intrinsics.js';

/**
 * What the template declares (resources, parameters, conditions, mappings), read against the
 * specification: the type of a resource, of a property type, of an attribute, and so of what a
 * `Ref` or `Fn::GetAtt` yields. Lookups in the specification are kept, since a template names the
 * same few types again and again.
 */
export class Declarations {
  private readonly specs = new Map<string, Resource | undefined>();

  constructor(
    private readonly spec: SpecDatabase,
    readonly resources: Json,
    readonly parameters: Json,
    readonly conditions: Json,
    readonly mappings: Json,
  ) {}

  /** The specification of a resource type; custom resources count as AWS::CloudFormation::CustomResource. */
  resourceSpec(type: string): Resource | undefined {
    const key = type.startsWith('Custom::') ? 'AWS::CloudFormation::CustomResource' : type;
    if (!this.specs.has(key)) this.specs.set(key, this.spec.lookup('resource', 'cloudFormationType', 'equals', key)[0]);
    return this.specs.get(key);
  }

  typeDefinition(type: PropertyType & { type: 'ref' }): TypeDefinition | undefined {
    try {
      return this.spec.get('typeDefinition', type.reference);
    } catch {
      return undefined;
    }
  }

  /** The resource's specification when its attributes and properties are fixed (not a custom resource). */
  fixedSpecOf(logicalId: string): Resource | undefined {
    const resource = this.resources[logicalId];
    if (!isObject(resource) || typeof resource.Type !== 'string') return undefined;
    if (resource.Type.startsWith('Custom::') || resource.Type === 'AWS::CloudFormation::CustomResource') return undefined;
    return this.resourceSpec(resource.Type);
  }

  /**
   * What an intrinsic function yields here: the kind of `Ref` depends on what it names, and a
   * `Fn::GetAtt` on the attribute's type in the specification.
   */
  intrinsicYield(fn: string, args: unknown): Yield {
    if (fn === 'Ref') {
      if (args === 'AWS::NotificationARNs') return 'list';
      if (args === 'AWS::NoValue') return 'any';
      const parameter = typeof args === 'string' ? this.parameters[args] : undefined;
      if (isObject(parameter) && typeof parameter.Type === 'string') {
        return /^List<|^CommaDelimitedList$|^AWS::SSM::Parameter::Value<(List<|CommaDelimitedList)/.test(parameter.Type)
          ? 'list'
          : 'scalar';
      }
      return typeof args === 'string' && args in this.resources ? 'scalar' : 'any';
    }
    if (fn === 'Fn::GetAtt') {
      const parsed = parseGetAtt(args);
      const spec = parsed ? this.fixedSpecOf(parsed.logicalId) : undefined;
      const type = spec && typeof parsed?.attribute === 'string' ? attributeType(spec, parsed.attribute) : undefined;
      if (!type) return 'any';
      if (type.type === 'array') return 'list';
      if (type.type === 'map' || type.type === 'ref') return 'object';
      return type.type === 'json' || type.type === 'union' ? 'any' : 'scalar';
    }
    return INTRINSIC_YIELDS[fn] ?? 'any';
  }
}

/**
 * The attribute's type. `A.B` also names a key of a map or JSON attribute `A`, and a nested
 * stack's outputs are `Outputs.<name>` (the specification lists `Outputs` as a list).
 */
export function attributeType(spec: Resource, attribute: string): PropertyType | undefined {
  const exact = spec.attributes[attribute];
  if (exact) return exact.type;
  const dot = attribute.indexOf('.');
  if (dot <= 0) return undefined;
  const head = attribute.slice(0, dot);
  if (spec.cloudFormationType === 'AWS::CloudFormation::Stack' && head === 'Outputs') return { type: 'string' };
  const type = spec.attributes[head]?.type.type;
  return type === 'map' || type === 'json' ? { type: 'json' } : undefined;
}
