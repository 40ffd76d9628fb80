import { setFlagsFromString } from 'node:v8';

/**
 * The inventory's V8 heap flags that Node refuses in NODE_OPTIONS (only its command line takes
 * them, and Lambda's runtime starts Node itself), set by the function when its module loads. The
 * others are in serverless.yml (infra/inventory-heap.ts); docs/decisions.md, "The inventory's
 * heap", says why each.
 *
 * `--heap-growing-percent`: how far V8 lets the old generation grow past what its last full
 * collection kept before it starts the next. Under the 128 MB bound V8 picks its smallest factor
 * (about 1.3), so a listing that keeps about 16 MB ran a full collection for every Query page;
 * at 400 the collections are bounded by the old space instead, a few times fewer, for a quarter
 * less CPU. V8 reads the flag each time it computes the next limit, so setting it at init holds
 * from the first collection after (a flag it reads only at start-up would do nothing here: only
 * this one is set).
 */
export const INVENTORY_RUNTIME_HEAP_FLAGS: readonly string[] = Object.freeze(['--heap-growing-percent=400']);

/** Sets INVENTORY_RUNTIME_HEAP_FLAGS in this process. */
export function applyInventoryHeapFlags(): void {
  for (const flag of INVENTORY_RUNTIME_HEAP_FLAGS) setFlagsFromString(flag);
}
