/**
 * The V8 heap flags the inventory function runs with (serverless.yml `functions.inventory.environment.NODE_OPTIONS`,
 * after `--enable-source-maps`; the template test checks they are the same, and `npm run bench` runs
 * its fresh inventory processes with them). Chosen by measurement (docs/decisions.md, "The
 * inventory's heap"): without a cap V8 sizes the heap from the machine and lets garbage pile up
 * before it collects, so peak RSS depends on the host and its load, not on what is held; with
 * them a fresh process peaks at about 160–170 MiB from 100,000 to 1,000,000 agents (docs/performance.md).
 * A young generation of 32 MB semi-spaces
 * holds a Query page's items while they are read, so they die young instead of being copied into
 * the old generation (a Lambda-sized 12 MB cost about a third more CPU).
 */
export const INVENTORY_HEAP_FLAGS: readonly string[] = Object.freeze(['--max-old-space-size=128', '--max-semi-space-size=32']);
