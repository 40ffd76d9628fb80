import { attributeType, type Declarations } from './declarations.js';
import { INTRINSIC_YIELDS, intrinsicName, isObject, parseGetAtt, shapeOf } from './intrinsics.js';
import { type At, element, inside, type Problems } from './problems.js';

/** Parameters CloudFormation defines in every stack. `Ref` to them needs no declaration. */
const PSEUDO_PARAMETERS = new Set([
  'AWS::AccountId',
  'AWS::NotificationARNs',
  'AWS::NoValue',
  'AWS::Partition',
  'AWS::Region',
  'AWS::StackId',
  'AWS::StackName',
  'AWS::URLSuffix',
]);

/**
 * The references of a template: every `Ref`, `Fn::GetAtt`, `Fn::Sub` variable, condition and
 * mapping must name something the template declares (or a pseudo parameter), and a `Fn::GetAtt` an
 * attribute its resource's type has. Free-form values (policy documents, dashboard bodies) are
 * walked too: their shapes are nobody's business here, their references are.
 */
export class ReferenceCheck {
  constructor(
    private readonly declared: Declarations,
    private readonly problems: Problems,
  ) {}

  /** `Ref` and `${Name}`: a resource, a parameter, a pseudo parameter, or (in Fn::Sub) a variable. */
  ref(at: At, target: unknown, what: string, variables?: ReadonlySet<string>): void {
    if (typeof target !== 'string') {
      this.problems.report(at, String(target), `${what} needs a name, not ${shapeOf(target)}`);
      return;
    }
    const { resources, parameters } = this.declared;
    if (variables?.has(target) || PSEUDO_PARAMETERS.has(target) || target in resources || target in parameters) return;
    const hint = target.startsWith('AWS::') ? ' (not a pseudo parameter)' : '';
    this.problems.report(at, target, `${what} names ${target}, which is no resource or parameter of the template${hint}`);
  }

  /** `Fn::GetAtt` and `${Name.Attribute}`: a resource of the template and an attribute of its type. */
  getAtt(at: At, logicalId: string, attribute: unknown, what: string): void {
    if (!(logicalId in this.declared.resources)) {
      const kind = logicalId in this.declared.parameters ? 'a parameter, not a resource' : 'no resource of the template';
      this.problems.report(at, logicalId, `${what} names ${logicalId}, which is ${kind}`);
      return;
    }
    if (typeof attribute !== 'string') return; // an attribute chosen by Ref at deploy time
    const spec = this.declared.fixedSpecOf(logicalId);
    if (!spec) return; // unknown types are reported once, at the resource; custom ones have any attribute
    if (attributeType(spec, attribute)) return;
    const known = Object.keys(spec.attributes).sort();
    this.problems.report(
      at,
      attribute,
      `${what} asks ${logicalId} (${spec.cloudFormationType}) for ${attribute}, an attribute that type does not have` +
        ` (it has ${known.length ? known.join(', ') : 'none; use Ref'})`,
    );
  }

  condition(at: At, name: unknown, what: string): void {
    if (typeof name === 'string' && name in this.declared.conditions) return;
    this.problems.report(at, String(name), `${what} names ${JSON.stringify(name)}, which is no condition of the template`);
  }

  /**
   * Walks any value, the free-form ones included, and checks every reference in it. Conditions
   * (`{ "Condition": name }`) are only references inside condition functions.
   */
  walk(value: unknown, at: At, inCondition = false): void {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) this.walk(item, element(at, i), inCondition);
      return;
    }
    if (!isObject(value)) return;
    const fn = intrinsicName(value);
    if (fn === undefined) {
      if (inCondition && Object.keys(value).length === 1 && typeof value.Condition === 'string') {
        this.condition(at, value.Condition, 'Condition');
        return;
      }
      for (const [key, item] of Object.entries(value)) this.walk(item, inside(at, key), inCondition);
      return;
    }
    this.walkIntrinsic(fn, value[fn], inside(at, fn), inCondition);
  }

  /** One intrinsic function call, `at` its name (`….Fn::If`): what each one's arguments may name. */
  private walkIntrinsic(fn: string, args: unknown, at: At, inCondition: boolean): void {
    switch (fn) {
      case 'Ref':
        this.ref(at, args, 'Ref');
        return;
      case 'Fn::GetAtt': {
        const parsed = parseGetAtt(args);
        if (!parsed) {
          this.problems.report(
            at,
            JSON.stringify(args),
            `Fn::GetAtt takes [resource, attribute] or "resource.attribute", not ${shapeOf(args)}`,
          );
          return;
        }
        this.getAtt(at, parsed.logicalId, parsed.attribute, 'Fn::GetAtt');
        if (typeof parsed.attribute !== 'string') this.walk(parsed.attribute, element(at, 1));
        return;
      }
      case 'Fn::Sub':
        this.walkSub(args, at);
        return;
      case 'Fn::If':
        if (!Array.isArray(args) || args.length !== 3) {
          this.problems.report(at, fn, `Fn::If takes [condition, value if true, value if false], not ${shapeOf(args)}`);
          return;
        }
        this.condition(element(at, 0), args[0], 'Fn::If');
        this.walk(args[1], element(at, 1), inCondition);
        this.walk(args[2], element(at, 2), inCondition);
        return;
      case 'Fn::FindInMap':
        if (Array.isArray(args) && typeof args[0] === 'string' && !(args[0] in this.declared.mappings)) {
          this.problems.report(element(at, 0), args[0], `Fn::FindInMap names ${args[0]}, which is no mapping of the template`);
        }
        this.walk(args, at, inCondition);
        return;
      case 'Fn::And':
      case 'Fn::Or':
      case 'Fn::Not':
      case 'Fn::Equals':
        this.walk(args, at, true);
        return;
      default:
        if (!(fn in INTRINSIC_YIELDS)) this.problems.report(at, fn, `${fn} is no intrinsic function CloudFormation knows`);
        this.walk(args, at, inCondition);
    }
  }

  /** `Fn::Sub`: every `${…}` names a variable of its map, a resource or parameter, or `Resource.Attribute`. */
  private walkSub(args: unknown, at: At): void {
    const [text, map] = Array.isArray(args) ? [args[0], args[1]] : [args, undefined];
    if (typeof text !== 'string' || (map !== undefined && !isObject(map))) {
      this.problems.report(at, 'Fn::Sub', `Fn::Sub takes a string or [string, { variables }], not ${shapeOf(args)}`);
      return;
    }
    const variables = new Set(Object.keys(map ?? {}));
    if (map) this.walk(map, element(at, 1));
    for (const match of text.matchAll(/\$\{([^}]*)\}/g)) {
      const name = (match[1] ?? '').trim();
      if (name.startsWith('!')) continue; // ${!Literal} is written out as ${Literal}
      const dot = name.indexOf('.');
      if (dot > 0 && !variables.has(name)) this.getAtt(at, name.slice(0, dot), name.slice(dot + 1), `Fn::Sub \${${name}}`);
      else this.ref(at, name, `Fn::Sub \${${name}}`, variables);
    }
  }
}
