import type { Property, PropertyType } from '@aws-cdk/service-spec-types';
import type { Declarations } from './declarations.js';
import { intrinsicName, isNoValue, isObject, type Json, shapeOf, type Yield } from './intrinsics.js';
import { type At, element, inside, type Problems } from './problems.js';

/** Tags of the `[{ Key, Value }]` kind (the specification's built-in `tag` type). */
const TAG_PROPERTIES: Readonly<Record<string, Property>> = {
  Key: { type: { type: 'string' }, required: true },
  Value: { type: { type: 'string' }, required: true },
};

/**
 * The shapes of property values against the specification: unknown property names (with the
 * likely one meant), missing required ones, and values that cannot be of the property's type
 * (a string where a list goes, a value not among those the specification enumerates). An
 * intrinsic function's value is only known at deploy time: it passes where its kind of result
 * (scalar, list or object) could fit.
 */
export class ShapeCheck {
  constructor(
    private readonly declared: Declarations,
    private readonly problems: Problems,
  ) {}

  /** Checks a `Properties`-like object against a property list: unknown names, required ones, shapes. */
  properties(value: Json, properties: Readonly<Record<string, Property>>, owner: string, at: At): void {
    for (const [name, property] of Object.entries(properties)) {
      if (property.required && (!(name in value) || isNoValue(value[name]))) {
        this.problems.report(inside(at, name), name, `${owner} requires ${name}, which is missing`);
      }
    }
    for (const [name, item] of Object.entries(value)) {
      const property = properties[name];
      const here = inside(at, name);
      if (!property) {
        const near = closest(name, Object.keys(properties));
        this.problems.report(here, name, `${owner} has no property ${name}${near ? ` (did you mean ${near}?)` : ''}`);
        continue;
      }
      this.value(item, [property.type, ...(property.previousTypes ?? [])], name, here);
    }
  }

  /**
   * Checks one value against the types it may have (the current one and, as CloudFormation still
   * accepts them, earlier ones). Problems are reported for the alternative that fits best.
   */
  value(value: unknown, types: readonly PropertyType[], name: string, at: At): void {
    const attempts = flatten(types).map((type) => ({ type, problems: this.problems.collect(() => this.one(value, type, name, at)) }));
    if (attempts.some((a) => a.problems.length === 0)) return;
    // Prefer the alternative of the same kind as the value: its problems are the ones deeper down.
    const best = attempts.find((a) => kindMatches(value, a.type)) ?? attempts[0];
    if (!best) return;
    if (attempts.length > 1 && !attempts.some((a) => kindMatches(value, a.type))) {
      this.problems.report(at, name, `${name} must be ${attempts.map((a) => typeName(a.type)).join(' or ')}, not ${shapeOf(value)}`);
      return;
    }
    this.problems.add(best.problems);
  }

  private one(value: unknown, type: PropertyType, name: string, at: At): void {
    if (value === null) {
      this.problems.report(at, name, `${name} is null; CloudFormation accepts no null values (leave it out, or use AWS::NoValue)`);
      return;
    }
    const fn = intrinsicName(value);
    if (fn) {
      this.intrinsic(value as Json, fn, type, name, at);
      return;
    }
    const wrongShape = (): void => this.problems.report(at, name, `${name} must be ${typeName(type)}, not ${shapeOf(value)}`);
    switch (type.type) {
      case 'json':
        return;
      case 'string':
      case 'date-time':
        if (!isScalar(value)) {
          wrongShape();
          return;
        }
        if (type.type === 'string' && type.allowedValues?.length && typeof value === 'string' && !type.allowedValues.includes(value)) {
          this.problems.report(at, name, `${name} is ${JSON.stringify(value)}, not one of ${type.allowedValues.join(', ')}`);
        }
        return;
      case 'number':
      case 'integer': {
        const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
        if (!Number.isFinite(number) || (type.type === 'integer' && !Number.isInteger(number))) {
          wrongShape();
          return;
        }
        if (type.type === 'integer' && type.allowedValues?.length && !type.allowedValues.includes(number)) {
          this.problems.report(at, name, `${name} is ${number}, not one of ${type.allowedValues.join(', ')}`);
        }
        return;
      }
      case 'boolean':
        if (typeof value !== 'boolean' && !(typeof value === 'string' && /^(true|false)$/i.test(value))) wrongShape();
        return;
      case 'null':
        wrongShape();
        return;
      case 'tag':
        if (!isObject(value)) {
          wrongShape();
          return;
        }
        this.properties(value, TAG_PROPERTIES, 'A tag', at);
        return;
      case 'ref': {
        if (!isObject(value)) {
          wrongShape();
          return;
        }
        const definition = this.declared.typeDefinition(type);
        if (definition) this.properties(value, definition.properties, definition.name, at);
        return;
      }
      case 'array':
        if (!Array.isArray(value)) {
          wrongShape();
          return;
        }
        value.forEach((item, i) => {
          if (!isNoValue(item)) this.value(item, [type.element], name, element(at, i));
        });
        return;
      case 'map':
        if (!isObject(value)) {
          wrongShape();
          return;
        }
        for (const [key, item] of Object.entries(value)) this.value(item, [type.element], key, inside(at, key));
        return;
      case 'union':
        this.value(value, type.types, name, at);
        return;
    }
  }

  /** An intrinsic stands for a value of one kind; it fits where that kind can go. */
  private intrinsic(value: Json, fn: string, type: PropertyType, name: string, at: At): void {
    if (fn === 'Fn::If') {
      const args = value[fn];
      if (!Array.isArray(args) || args.length !== 3) return; // reported by the reference check
      for (const i of [1, 2]) {
        if (!isNoValue(args[i])) this.value(args[i], [type], name, element(inside(at, fn), i));
      }
      return;
    }
    const yields = this.declared.intrinsicYield(fn, value[fn]);
    if (yields !== 'any' && !yieldFits(yields, type))
      this.problems.report(at, name, `${name} must be ${typeName(type)}, but ${fn} yields ${yieldName(yields)}`);
  }
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
      const [up, left, diagonal] = [previous[j] ?? j, current[j - 1] ?? i, previous[j - 1] ?? j - 1];
      current[j] = Math.min(up + 1, left + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? b.length;
}
