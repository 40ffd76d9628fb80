import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * Native values to and from DynamoDB's wire form, for the paths that talk to the low-level client
 * (seeding writes hundreds of thousands of flat items; reads check their own items). Written here
 * because the document client's general marshaller cost a third of the seeding CPU.
 */

/**
 * A native value in DynamoDB's wire form: strings, finite numbers, booleans, null, lists, maps,
 * and a Set of strings as a string set (`SS`; an empty set is left out, since DynamoDB refuses
 * one); undefined members are left out, as the document client's removeUndefinedValues does.
 */
export function toAttributeValue(value: unknown): AttributeValue | undefined {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`cannot store the number ${value}`);
      return { N: String(value) };
    case 'boolean':
      return { BOOL: value };
    case 'undefined':
      return undefined;
    case 'object': {
      if (value === null) return { NULL: true };
      if (value instanceof Set) {
        if (value.size === 0) return undefined;
        const strings = [...(value as Set<unknown>)];
        if (!strings.every((v) => typeof v === 'string')) throw new TypeError('only sets of strings are stored');
        return { SS: strings as string[] };
      }
      if (Array.isArray(value)) return { L: value.map((v) => toAttributeValue(v) ?? { NULL: true }) };
      return { M: toItem(value as Record<string, unknown>) };
    }
    default:
      throw new TypeError(`cannot store a ${typeof value}`);
  }
}

/** A native item in DynamoDB's wire form (see toAttributeValue). */
export function toItem(item: Record<string, unknown>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const key in item) {
    const av = toAttributeValue(item[key]);
    if (av !== undefined) out[key] = av;
  }
  return out;
}

/**
 * A wire-form value as a native one: `S` a string, `N` a number, `BOOL`, `NULL` null, `L` a list,
 * `M` a map, `SS` an array of its strings. Other sets and binaries are never stored by this
 * service and read as undefined.
 */
export function fromAttributeValue(av: AttributeValue | undefined): unknown {
  if (av === undefined || av === null || typeof av !== 'object') return undefined;
  const v = av as { S?: unknown; N?: unknown; BOOL?: unknown; NULL?: unknown; L?: unknown; M?: unknown };
  if (typeof v.S === 'string') return v.S;
  if (typeof v.N === 'string') return Number(v.N);
  if (typeof v.BOOL === 'boolean') return v.BOOL;
  if (v.NULL === true) return null;
  if (Array.isArray(v.L)) return v.L.map((e) => fromAttributeValue(e as AttributeValue));
  if (Array.isArray((v as { SS?: unknown }).SS)) return [...(v as { SS: string[] }).SS];
  if (v.M && typeof v.M === 'object') return fromItem(v.M as Record<string, AttributeValue>);
  return undefined;
}

/** A wire-form item as a native object (see fromAttributeValue). */
export function fromItem(item: Record<string, AttributeValue>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in item) out[key] = fromAttributeValue(item[key]);
  return out;
}
