import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCpuFloor, stopChildren } from '../../bench/processes.js';

describe('Bench: the children it starts (bench/processes.ts)', () => {
  it('stops a CPU floor run still under way when the bench stops its children (a failure or an interrupt)', async () => {
    // A stand-in for the floor's bundle that runs until stopped, or for 10 s: were it not stopped, it
    // would end then with a code of its own (the test fails on that, leaving no process behind).
    const bundle = join(mkdtempSync(join(tmpdir(), 'bench-floor-')), 'floor.mjs');
    writeFileSync(bundle, 'setTimeout(() => process.exit(3), 10_000);\n');
    const run = runCpuFloor({
      node: process.execPath,
      cpus: undefined,
      bundle,
      nodeOptions: '',
      run: { endpoint: 'http://127.0.0.1:1', table: 'data', pk: 'agents', coding: 'gzip', heartbeatEdge: '' },
    });

    await stopChildren();

    await expect(run).rejects.toThrow('the CPU floor ended with null');
  });
});
