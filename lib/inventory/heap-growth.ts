import { setFlagsFromString } from 'node:v8';

/**
 * The inventory's V8 heap flags that Node refuses in NODE_OPTIONS (only its command line takes
 * them, and Lambda's runtime starts Node itself), set by the function itself. The
 * others are in serverless.yml (infra/inventory-heap.ts); docs/decisions.md, "The inventory's
 * heap", says why each.
 *
 * `--heap-growing-percent`: how far V8 lets the old generation grow past what its last full
 * collection kept before it starts the next. Under the 128 MB bound V8 picks its smallest factor
 * (about 1.3), so a listing that keeps about 16 MB ran a full collection for every Query page;
 * at 400 the collections are bounded by the old space instead, a few times fewer, for a quarter
 * less CPU. V8 reads the flag each time it computes the next limit, so setting it while the
 * process runs holds from the next collection (a flag it reads only at start-up would do nothing
 * here: only this one is set).
 *
 * Set after the first page is read, not at init: V8 checks its flags against Node's cache of
 * compiled built-in modules, so a built-in loaded after the change is compiled again (set at
 * init it cost 10 ms of the cold start, set before the runtime loads 40; after the first page
 * nothing measurable, the modules the listing needs being loaded by then).
 */
export const INVENTORY_RUNTIME_HEAP_FLAGS: readonly string[] = Object.freeze(['--heap-growing-percent=400']);

let applied = false;

/** Sets INVENTORY_RUNTIME_HEAP_FLAGS in this process, once. */
export function applyInventoryHeapFlags(): void {
  if (applied) return;
  applied = true;
  for (const flag of INVENTORY_RUNTIME_HEAP_FLAGS) setFlagsFromString(flag);
}
