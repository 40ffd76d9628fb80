/**
 * CloudFormation's intrinsic functions as the checks see them: how to recognise a call, what
 * kind of value each yields, and the shapes of their arguments.
 */

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What an intrinsic function yields, as far as the shape of a property goes. `any` when it
 * depends on data only CloudFormation sees (a mapping, a list element, a transform).
 */
export type Yield = 'scalar' | 'list' | 'object' | 'any';

export const INTRINSIC_YIELDS: Readonly<Record<string, Yield>> = {
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
  // Ref, Fn::GetAtt and Fn::If depend on what they name: see Declarations.intrinsicYield.
  Ref: 'any',
  'Fn::GetAtt': 'any',
  'Fn::If': 'any',
};

/** The single key of an intrinsic function call (`{ "Ref": … }`, `{ "Fn::…": … }`), if `value` is one. */
export function intrinsicName(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  const [key, ...more] = Object.keys(value);
  if (key === undefined || more.length > 0) return undefined;
  // Fn::ForEach::<loop> is the LanguageExtensions transform's loop, expanded before anything else.
  return (key === 'Ref' || key.startsWith('Fn::')) && !key.startsWith('Fn::ForEach::') ? key : undefined;
}

/** `{ "Ref": "AWS::NoValue" }`: the property is left out. */
export function isNoValue(value: unknown): boolean {
  return isObject(value) && intrinsicName(value) === 'Ref' && value.Ref === 'AWS::NoValue';
}

/** A value as a message names it: `a list`, `an object`, `Fn::Join`, `the string "x"`. */
export function shapeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return intrinsicName(value) ? `${intrinsicName(value)}` : 'an object';
  return `the ${typeof value} ${JSON.stringify(value)}`;
}

/** `Fn::GetAtt`'s two forms, `[resource, attribute]` and `"resource.attribute"`. */
export function parseGetAtt(args: unknown): { logicalId: string; attribute: unknown } | undefined {
  if (typeof args === 'string') {
    const dot = args.indexOf('.');
    return dot > 0 ? { logicalId: args.slice(0, dot), attribute: args.slice(dot + 1) } : undefined;
  }
  if (Array.isArray(args) && args.length === 2 && typeof args[0] === 'string') return { logicalId: args[0], attribute: args[1] };
  return undefined;
}
