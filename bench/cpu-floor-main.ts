/**
 * The CPU floor's process (bench/cpu-floor.ts): bundled by the bench with the functions' esbuild
 * options and started fresh for each run, with the inventory function's Node, NODE_OPTIONS and
 * core, as a fresh function instance is, and the heap flags the function sets itself, when it
 * sets them (after the first page). Its arguments come as one JSON object in CPU_FLOOR_RUN; it
 * prints what it measured as one JSON line and exits.
 */
import { applyInventoryHeapFlags } from '../lib/inventory/heap-growth.js';
import { cpuFloorRun } from './cpu-floor.js';

const args = JSON.parse(process.env.CPU_FLOOR_RUN ?? '{}') as Parameters<typeof cpuFloorRun>[0];
cpuFloorRun({ ...args, afterFirstPage: applyInventoryHeapFlags }).then(
  (run) => {
    process.stdout.write(`${JSON.stringify(run)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
