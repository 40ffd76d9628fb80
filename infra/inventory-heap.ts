import { INVENTORY_RUNTIME_HEAP_FLAGS } from '../lib/inventory/heap-growth.js';

/**
 * The V8 heap flags the inventory function runs with, chosen by measurement (docs/decisions.md,
 * "The inventory's heap"; the bench runs its fresh inventory processes and its CPU floor with them):
 * - in its NODE_OPTIONS (serverless.yml `functions.inventory.environment.NODE_OPTIONS`, after
 *   `--enable-source-maps`; the template test checks they are the same): the old space bounded at
 *   128 MB whatever the function's memory (without a bound V8 sizes the heap from the machine and
 *   lets garbage pile up, so peak RSS follows the host, not what is held), and semi-spaces of 16 MB
 *   (a Query page's items die young in them; 32 MB cost the same CPU for about 20 MiB more RSS, 64
 *   MB under the 128 MB bound collected hundreds of times);
 * - set by the function itself once its first page is read (lib/inventory/heap-growth.ts), as
 *   Node refuses it in NODE_OPTIONS: the old generation's growth between full collections.
 * With them a fresh process peaks at about 160–180 MiB from 100,000 to 1,000,000 agents (docs/performance.md).
 */
export const INVENTORY_HEAP_FLAGS: readonly string[] = Object.freeze(['--max-old-space-size=128', '--max-semi-space-size=16']);

/** Every heap flag of the inventory, as a report names them: NODE_OPTIONS's, then those the function sets itself. */
export const INVENTORY_ALL_HEAP_FLAGS: readonly string[] = Object.freeze([...INVENTORY_HEAP_FLAGS, ...INVENTORY_RUNTIME_HEAP_FLAGS]);
