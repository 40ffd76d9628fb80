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
 *
 * Deliberately not checked (CloudFormation or the service decides these at deploy time, and the
 * specification cannot say): values produced by intrinsic functions, whose result is only known
 * then (each is accepted where its kind of result, scalar, list or object, could fit); the content
 * of JSON-typed properties (policy documents, dashboard bodies), whose references are still
 * checked; patterns, lengths and ranges; which properties exclude each other; and account limits.
 * Where the specification allows a property several types (its current and earlier ones, or a
 * union such as DynamoDB's `KeySchema`, a list or any JSON), a value that fits one of them passes.
 */
import type { Property, PropertyType, Resource, SpecDatabase, TypeDefinition } from '@aws-cdk/service-spec-types';

/** One thing CloudFormation would refuse, located well enough to find it in the YAML. */
export interface TemplateProblem {
  /** The resource's logical id; `Outputs.<name>`, `Conditions.<name>` or `Template` elsewhere. */
  logicalId: string;
  /** Where inside it, e.g. `Properties.KeySchema[0].KeyType`, `DependsOn[1]`, `Type`. */
  path: string;
  /** The offending name: the property, attribute, reference, variable or resource type. */
  name: string;
  message: string;
}

/** A problem as one line, for test output and the command line. */
export function formatProblem(problem: TemplateProblem): string {
  return `${problem.logicalId} ${problem.path}: ${problem.message}`;
}

type Json = Record<string, unknown>;

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

/**
 * What an intrinsic function yields, as far as the shape of a property goes. `any` when it
 * depends on data only CloudFormation sees (a mapping, a list element, a transform).
 */
type Yield = 'scalar' | 'list' | 'object' | 'any';

const INTRINSIC_YIELDS: Readonly<Record<string, Yield>> = {
  'Fn::Base64': 'scalar',
  'Fn::Join': 'scalar',
  'Fn::Sub': 'scalar',
  'Fn::ImportValue': 'scalar', // exports are strings
  'Fn::ToJsonString': 'scalar',
  'Fn::Length': 'scalar',
  'Fn::Equals': 'scalar',
  'Fn::Not': 'scalar',
  'Fn::And': 'scalar',
  'Fn::Or': 'scalar',
  'Fn::Split': 'list',
  'Fn::GetAZs': 'list',
  'Fn::Cidr': 'list',
  'Fn::Select': 'any',
  'Fn::FindInMap': 'any',
  'Fn::Transform': 'any',
  // Ref, Fn::GetAtt and Fn::If depend on what they name: see intrinsicYield.
  Ref: 'any',
  'Fn::GetAtt': 'any',
  'Fn::If': 'any',
};

/** The single key of an intrinsic function call (`{ "Ref": … }`, `{ "Fn::…": … }`), if `value` is one. */
function intrinsicName(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1) return undefined;
  const key = keys[0]!;
  // Fn::ForEach::<loop> is the LanguageExtensions transform's loop, expanded before anything else.
  return (key === 'Ref' || key.startsWith('Fn::')) && !key.startsWith('Fn::ForEach::') ? key : undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNoValue(value: unknown): boolean {
  return isObject(value) && intrinsicName(value) === 'Ref' && value.Ref === 'AWS::NoValue';
}

function shapeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return intrinsicName(value) ? `${intrinsicName(value)}` : 'an object';
  return `the ${typeof value} ${JSON.stringify(value)}`;
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** Where the walk is: which top-level entry, and the path inside it. */
interface At {
  logicalId: string;
  path: string;
}

/** What the whole template declares, so that references can be resolved while walking it. */
class Checker {
  /** Where problems go; checkValue swaps it to try the alternatives of a union one by one. */
  private sink: TemplateProblem[] = [];
  private readonly specs = new Map<string, Resource | undefined>();

  constructor(
    private readonly spec: SpecDatabase,
    readonly resources: Json,
    private readonly parameters: Json,
    private readonly conditions: Json,
    private readonly mappings: Json,
  ) {}

  get problems(): readonly TemplateProblem[] {
    return this.sink;
  }

  report(at: At, name: string, message: string): void {
    this.sink.push({ logicalId: at.logicalId, path: at.path, name, message });
  }

  /** The problems `check` reports, kept apart from the others. */
  private collect(check: () => void): TemplateProblem[] {
    const outer = this.sink;
    this.sink = [];
    try {
      check();
      return this.sink;
    } finally {
      this.sink = outer;
    }
  }

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
  private fixedSpecOf(logicalId: string): Resource | undefined {
    const resource = this.resources[logicalId];
    if (!isObject(resource) || typeof resource.Type !== 'string') return undefined;
    if (resource.Type.startsWith('Custom::') || resource.Type === 'AWS::CloudFormation::CustomResource') return undefined;
    return this.resourceSpec(resource.Type);
  }

  // --- References ------------------------------------------------------------------------------

  /** `Ref` and `${Name}`: a resource, a parameter, a pseudo parameter, or (in Fn::Sub) a variable. */
  checkRef(at: At, target: unknown, what: string, variables?: ReadonlySet<string>): void {
    if (typeof target !== 'string') {
      this.report(at, String(target), `${what} needs a name, not ${shapeOf(target)}`);
      return;
    }
    if (variables?.has(target) || PSEUDO_PARAMETERS.has(target) || target in this.resources || target in this.parameters) return;
    const hint = target.startsWith('AWS::') ? ' (not a pseudo parameter)' : '';
    this.report(at, target, `${what} names ${target}, which is no resource or parameter of the template${hint}`);
  }

  /** `Fn::GetAtt` and `${Name.Attribute}`: a resource of the template and an attribute of its type. */
  checkGetAtt(at: At, logicalId: string, attribute: unknown, what: string): void {
    if (!(logicalId in this.resources)) {
      const kind = logicalId in this.parameters ? 'a parameter, not a resource' : 'no resource of the template';
      this.report(at, logicalId, `${what} names ${logicalId}, which is ${kind}`);
      return;
    }
    if (typeof attribute !== 'string') return; // an attribute chosen by Ref at deploy time
    const spec = this.fixedSpecOf(logicalId);
    if (!spec) return; // unknown types are reported once, at the resource; custom ones have any attribute
    if (attributeType(spec, attribute)) return;
    const known = Object.keys(spec.attributes).sort();
    this.report(
      at,
      attribute,
      `${what} asks ${logicalId} (${spec.cloudFormationType}) for ${attribute}, an attribute that type does not have` +
        ` (it has ${known.length ? known.join(', ') : 'none; use Ref'})`,
    );
  }

  checkCondition(at: At, name: unknown, what: string): void {
    if (typeof name === 'string' && name in this.conditions) return;
    this.report(at, String(name), `${what} names ${JSON.stringify(name)}, which is no condition of the template`);
  }

  /**
   * Walks any value, the free-form ones included, and checks every reference in it. Conditions
   * (`{ "Condition": name }`) are only references inside condition functions.
   */
  walkReferences(value: unknown, at: At, inCondition = false): void {
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.walkReferences(item, { ...at, path: `${at.path}[${i}]` }, inCondition));
      return;
    }
    if (!isObject(value)) return;
    const fn = intrinsicName(value);
    const args = fn ? value[fn] : undefined;
    const inside = (suffix: string): At => ({ ...at, path: join(at.path, suffix) });
    switch (fn) {
      case undefined:
        if (inCondition && Object.keys(value).length === 1 && typeof value.Condition === 'string') {
          this.checkCondition(at, value.Condition, 'Condition');
          return;
        }
        for (const [key, item] of Object.entries(value)) this.walkReferences(item, inside(key), inCondition);
        return;
      case 'Ref':
        this.checkRef(inside('Ref'), args, 'Ref');
        return;
      case 'Fn::GetAtt': {
        const parsed = parseGetAtt(args);
        if (!parsed) {
          this.report(inside(fn), JSON.stringify(args), `Fn::GetAtt takes [resource, attribute] or "resource.attribute", not ${shapeOf(args)}`);
          return;
        }
        this.checkGetAtt(inside(fn), parsed.logicalId, parsed.attribute, 'Fn::GetAtt');
        if (typeof parsed.attribute !== 'string') this.walkReferences(parsed.attribute, inside(`${fn}[1]`));
        return;
      }
      case 'Fn::Sub':
        this.walkSub(args, inside(fn));
        return;
      case 'Fn::If':
        if (!Array.isArray(args) || args.length !== 3) {
          this.report(inside(fn), fn, `Fn::If takes [condition, value if true, value if false], not ${shapeOf(args)}`);
          return;
        }
        this.checkCondition(inside(`${fn}[0]`), args[0], 'Fn::If');
        this.walkReferences(args[1], inside(`${fn}[1]`), inCondition);
        this.walkReferences(args[2], inside(`${fn}[2]`), inCondition);
        return;
      case 'Fn::FindInMap':
        if (Array.isArray(args) && typeof args[0] === 'string' && !(args[0] in this.mappings)) {
          this.report(inside(`${fn}[0]`), args[0], `Fn::FindInMap names ${args[0]}, which is no mapping of the template`);
        }
        this.walkReferences(args, inside(fn), inCondition);
        return;
      case 'Fn::And':
      case 'Fn::Or':
      case 'Fn::Not':
      case 'Fn::Equals':
        this.walkReferences(args, inside(fn), true);
        return;
      default:
        if (!(fn in INTRINSIC_YIELDS)) this.report(inside(fn), fn, `${fn} is no intrinsic function CloudFormation knows`);
        this.walkReferences(args, inside(fn), inCondition);
    }
  }

  /** `Fn::Sub`: every `${…}` names a variable of its map, a resource or parameter, or `Resource.Attribute`. */
  private walkSub(args: unknown, at: At): void {
    const [text, map] = Array.isArray(args) ? [args[0], args[1]] : [args, undefined];
    if (typeof text !== 'string' || (map !== undefined && !isObject(map))) {
      this.report(at, 'Fn::Sub', `Fn::Sub takes a string or [string, { variables }], not ${shapeOf(args)}`);
      return;
    }
    const variables = new Set(Object.keys(map ?? {}));
    if (map) this.walkReferences(map, { ...at, path: `${at.path}[1]` });
    for (const match of text.matchAll(/\$\{([^}]*)\}/g)) {
      const name = match[1]!.trim();
      if (name.startsWith('!')) continue; // ${!Literal} is written out as ${Literal}
      const dot = name.indexOf('.');
      if (dot > 0 && !variables.has(name)) this.checkGetAtt(at, name.slice(0, dot), name.slice(dot + 1), `Fn::Sub \${${name}}`);
      else this.checkRef(at, name, `Fn::Sub \${${name}}`, variables);
    }
  }

  // --- Shapes ----------------------------------------------------------------------------------

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
        return /^List<|^CommaDelimitedList$|^AWS::SSM::Parameter::Value<(List<|CommaDelimitedList)/.test(parameter.Type) ? 'list' : 'scalar';
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

  /** Checks a `Properties`-like object against a property list: unknown names, required ones, shapes. */
  checkProperties(value: Json, properties: Readonly<Record<string, Property>>, owner: string, at: At): void {
    for (const [name, property] of Object.entries(properties)) {
      if (property.required && (!(name in value) || isNoValue(value[name]))) {
        this.report({ ...at, path: join(at.path, name) }, name, `${owner} requires ${name}, which is missing`);
      }
    }
    for (const [name, item] of Object.entries(value)) {
      const property = properties[name];
      const here = { ...at, path: join(at.path, name) };
      if (!property) {
        const near = closest(name, Object.keys(properties));
        this.report(here, name, `${owner} has no property ${name}${near ? ` (did you mean ${near}?)` : ''}`);
        continue;
      }
      this.checkValue(item, [property.type, ...(property.previousTypes ?? [])], name, here);
    }
  }

  /**
   * Checks one value against the types it may have (the current one and, as CloudFormation still
   * accepts them, earlier ones). Problems are reported for the alternative that fits best.
   */
  checkValue(value: unknown, types: readonly PropertyType[], name: string, at: At): void {
    const attempts = flatten(types).map((type) => ({ type, problems: this.collect(() => this.checkOne(value, type, name, at)) }));
    if (attempts.some((a) => a.problems.length === 0)) return;
    // Prefer the alternative of the same kind as the value: its problems are the ones deeper down.
    const best = attempts.find((a) => kindMatches(value, a.type)) ?? attempts[0];
    if (!best) return;
    if (attempts.length > 1 && !attempts.some((a) => kindMatches(value, a.type))) {
      this.report(at, name, `${name} must be ${attempts.map((a) => typeName(a.type)).join(' or ')}, not ${shapeOf(value)}`);
      return;
    }
    this.sink.push(...best.problems);
  }

  private checkOne(value: unknown, type: PropertyType, name: string, at: At): void {
    if (value === null) {
      this.report(at, name, `${name} is null; CloudFormation accepts no null values (leave it out, or use AWS::NoValue)`);
      return;
    }
    const fn = intrinsicName(value);
    if (fn) {
      this.checkIntrinsic(value as Json, fn, type, name, at);
      return;
    }
    const wrongShape = (): void => this.report(at, name, `${name} must be ${typeName(type)}, not ${shapeOf(value)}`);
    switch (type.type) {
      case 'json':
        return;
      case 'string':
      case 'date-time':
        if (!isScalar(value)) return wrongShape();
        if (type.type === 'string' && type.allowedValues?.length && typeof value === 'string' && !type.allowedValues.includes(value)) {
          this.report(at, name, `${name} is ${JSON.stringify(value)}, not one of ${type.allowedValues.join(', ')}`);
        }
        return;
      case 'number':
      case 'integer': {
        const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
        if (!Number.isFinite(number) || (type.type === 'integer' && !Number.isInteger(number))) return wrongShape();
        if (type.type === 'integer' && type.allowedValues?.length && !type.allowedValues.includes(number)) {
          this.report(at, name, `${name} is ${number}, not one of ${type.allowedValues.join(', ')}`);
        }
        return;
      }
      case 'boolean':
        if (typeof value !== 'boolean' && !(typeof value === 'string' && /^(true|false)$/i.test(value))) wrongShape();
        return;
      case 'null':
        return wrongShape();
      case 'tag':
        if (!isObject(value)) return wrongShape();
        this.checkProperties(value, TAG_PROPERTIES, 'A tag', at);
        return;
      case 'ref': {
        if (!isObject(value)) return wrongShape();
        const definition = this.typeDefinition(type);
        if (definition) this.checkProperties(value, definition.properties, definition.name, at);
        return;
      }
      case 'array':
        if (!Array.isArray(value)) return wrongShape();
        value.forEach((item, i) => {
          if (!isNoValue(item)) this.checkValue(item, [type.element], name, { ...at, path: `${at.path}[${i}]` });
        });
        return;
      case 'map':
        if (!isObject(value)) return wrongShape();
        for (const [key, item] of Object.entries(value)) this.checkValue(item, [type.element], key, { ...at, path: join(at.path, key) });
        return;
      case 'union':
        this.checkValue(value, type.types, name, at);
        return;
    }
  }

  /** An intrinsic stands for a value of one kind; it fits where that kind can go. */
  private checkIntrinsic(value: Json, fn: string, type: PropertyType, name: string, at: At): void {
    if (fn === 'Fn::If') {
      const args = value[fn];
      if (!Array.isArray(args) || args.length !== 3) return; // reported by the reference walk
      for (const i of [1, 2]) {
        if (!isNoValue(args[i])) this.checkValue(args[i], [type], name, { ...at, path: `${at.path}.Fn::If[${i}]` });
      }
      return;
    }
    const yields = this.intrinsicYield(fn, value[fn]);
    if (yields !== 'any' && !yieldFits(yields, type)) this.report(at, name, `${name} must be ${typeName(type)}, but ${fn} yields ${yieldName(yields)}`);
  }
}

/** Tags of the `[{ Key, Value }]` kind (the specification's built-in `tag` type). */
const TAG_PROPERTIES: Readonly<Record<string, Property>> = {
  Key: { type: { type: 'string' }, required: true },
  Value: { type: { type: 'string' }, required: true },
};

function freeForm(names: readonly string[]): Record<string, Property> {
  return Object.fromEntries(names.map((name) => [name, { type: { type: 'json' } }]));
}

function isScalar(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function flatten(types: readonly PropertyType[]): PropertyType[] {
  return types.flatMap((t) => (t.type === 'union' ? flatten(t.types) : [t]));
}

function yieldFits(yields: Exclude<Yield, 'any'>, type: PropertyType): boolean {
  switch (type.type) {
    case 'json':
      return true;
    case 'array':
      return yields === 'list';
    case 'map':
    case 'ref':
    case 'tag':
      return yields === 'object';
    case 'union':
      return flatten(type.types).some((t) => yieldFits(yields, t));
    default:
      return yields === 'scalar';
  }
}

function yieldName(yields: Exclude<Yield, 'any'>): string {
  return { scalar: 'a single value', list: 'a list', object: 'an object' }[yields];
}

/** Whether a literal value has the outer shape of `type` (so its problems lie deeper down). */
function kindMatches(value: unknown, type: PropertyType): boolean {
  switch (type.type) {
    case 'array':
      return Array.isArray(value);
    case 'map':
    case 'ref':
    case 'tag':
      return isObject(value) && !intrinsicName(value);
    case 'json':
      return true;
    default:
      return isScalar(value);
  }
}

function typeName(type: PropertyType): string {
  switch (type.type) {
    case 'array':
      return `a list of ${typeName(type.element).replace(/^an? /, '')}s`;
    case 'map':
      return `a map of ${typeName(type.element).replace(/^an? /, '')}s`;
    case 'ref':
    case 'tag':
      return 'an object';
    case 'union':
      return flatten(type.types).map(typeName).join(' or ');
    case 'json':
      return 'JSON';
    case 'integer':
      return 'an integer';
    case 'date-time':
      return 'a date-time string';
    default:
      return `a ${type.type}`;
  }
}

/**
 * The attribute's type. `A.B` also names a key of a map or JSON attribute `A`, and a nested
 * stack's outputs are `Outputs.<name>` (the specification lists `Outputs` as a list).
 */
function attributeType(spec: Resource, attribute: string): PropertyType | undefined {
  const exact = spec.attributes[attribute];
  if (exact) return exact.type;
  const dot = attribute.indexOf('.');
  if (dot <= 0) return undefined;
  const head = attribute.slice(0, dot);
  if (spec.cloudFormationType === 'AWS::CloudFormation::Stack' && head === 'Outputs') return { type: 'string' };
  const type = spec.attributes[head]?.type.type;
  return type === 'map' || type === 'json' ? { type: 'json' } : undefined;
}

function parseGetAtt(args: unknown): { logicalId: string; attribute: unknown } | undefined {
  if (typeof args === 'string') {
    const dot = args.indexOf('.');
    return dot > 0 ? { logicalId: args.slice(0, dot), attribute: args.slice(dot + 1) } : undefined;
  }
  if (Array.isArray(args) && args.length === 2 && typeof args[0] === 'string') return { logicalId: args[0], attribute: args[1] };
  return undefined;
}

/** The known name a misspelling most likely meant (edit distance at most 2, or a case slip). */
function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = candidate.toLowerCase() === name.toLowerCase() ? 0 : editDistance(name, candidate);
    if (distance <= 2 && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
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
  const checker = new Checker(spec, section('Resources'), section('Parameters'), section('Conditions'), section('Mappings'));

  for (const key of Object.keys(template)) {
    if (!TEMPLATE_SECTIONS.has(key)) checker.report({ ...top, path: key }, key, `${key} is no section of a CloudFormation template`);
  }
  if (!isObject(template.Resources) || Object.keys(template.Resources).length === 0) {
    checker.report({ ...top, path: 'Resources' }, 'Resources', 'a template needs at least one resource');
  }

  for (const [name, condition] of Object.entries(section('Conditions'))) {
    checker.walkReferences(condition, { logicalId: `Conditions.${name}`, path: '' }, true);
  }

  for (const [logicalId, resource] of Object.entries(checker.resources)) {
    const at = (path: string): At => ({ logicalId, path });
    if (!isObject(resource)) {
      checker.report(at(''), logicalId, `a resource is an object with a Type, not ${shapeOf(resource)}`);
      continue;
    }
    for (const key of Object.keys(resource)) {
      if (!RESOURCE_KEYS.has(key)) checker.report(at(key), key, `${key} is no attribute of a resource (Type, Properties, DependsOn, Condition, …)`);
    }

    const type = resource.Type;
    const resourceSpec = typeof type === 'string' ? checker.resourceSpec(type) : undefined;
    if (typeof type !== 'string') checker.report(at('Type'), String(type), `a resource needs a Type, not ${shapeOf(type)}`);
    else if (!resourceSpec) checker.report(at('Type'), type, `${type} is no resource type in AWS's specification`);

    const dependsOn = resource.DependsOn;
    if (dependsOn !== undefined) {
      const targets = Array.isArray(dependsOn) ? dependsOn : [dependsOn];
      targets.forEach((target, i) => {
        const here = at(Array.isArray(dependsOn) ? `DependsOn[${i}]` : 'DependsOn');
        if (typeof target !== 'string' || !(target in checker.resources)) {
          checker.report(here, String(target), `DependsOn names ${JSON.stringify(target)}, which is no resource of the template`);
        } else if (target === logicalId) {
          checker.report(here, target, `${logicalId} depends on itself`);
        }
      });
    }
    if (resource.Condition !== undefined) checker.checkCondition(at('Condition'), resource.Condition, 'Condition');
    if (resource.DeletionPolicy !== undefined && !DELETION_POLICIES.has(String(resource.DeletionPolicy))) {
      checker.report(at('DeletionPolicy'), String(resource.DeletionPolicy), `DeletionPolicy must be one of ${[...DELETION_POLICIES].join(', ')}`);
    }
    if (resource.UpdateReplacePolicy !== undefined && !UPDATE_REPLACE_POLICIES.has(String(resource.UpdateReplacePolicy))) {
      checker.report(
        at('UpdateReplacePolicy'),
        String(resource.UpdateReplacePolicy),
        `UpdateReplacePolicy must be one of ${[...UPDATE_REPLACE_POLICIES].join(', ')}`,
      );
    }

    const properties = resource.Properties ?? {};
    if (!isObject(properties) || intrinsicName(properties)) {
      checker.report(at('Properties'), 'Properties', `Properties must be an object, not ${shapeOf(properties)}`);
      continue;
    }
    checker.walkReferences(properties, at('Properties'));
    if (resourceSpec && typeof type === 'string') {
      // A custom resource takes any property its provider understands; only the token is fixed.
      const custom = resourceSpec.cloudFormationType === 'AWS::CloudFormation::CustomResource';
      const known = custom ? { ...freeForm(Object.keys(properties)), ...resourceSpec.properties } : resourceSpec.properties;
      checker.checkProperties(properties, known, type, at('Properties'));
    }
  }

  for (const [name, output] of Object.entries(section('Outputs'))) {
    const at: At = { logicalId: `Outputs.${name}`, path: '' };
    if (!isObject(output) || !('Value' in output)) {
      checker.report({ ...at, path: 'Value' }, 'Value', 'an output needs a Value');
      continue;
    }
    if (output.Condition !== undefined) checker.checkCondition({ ...at, path: 'Condition' }, output.Condition, 'Condition');
    checker.walkReferences(output.Value, { ...at, path: 'Value' });
    if (output.Export !== undefined) checker.walkReferences(output.Export, { ...at, path: 'Export' });
  }

  return [...checker.problems];
}
