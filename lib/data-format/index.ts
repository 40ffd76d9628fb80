/**
 * The data format: what the systems that write the tables write (docs/data-format.md), and the
 * one thing of lib/ anything outside the service may take. A leaf: nothing here imports another
 * part of lib/, so a producer (the local stack's seed, `npm run seed`, a pipeline) that takes it
 * takes none of the service's code with it (test/unit/stack-boundary.test.ts checks the whole
 * import closure). The service's own modules import the files beside this one directly.
 *
 * - keys.ts: the one key builder (partition and sort keys, the tenant part, the id escape);
 * - items.ts: the item builders, each record as the store holds it;
 * - records.ts: the records read back from their wire form, and the tenant policy;
 * - attribute-values.ts: items in DynamoDB's wire form (attribute values);
 * - group-names.ts: what an endpoint group's name may be.
 */
export * from './attribute-values.js';
export * from './group-names.js';
export * from './items.js';
export * from './keys.js';
export * from './records.js';
