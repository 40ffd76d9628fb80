import type { SourceMapPayload } from 'node:module';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { type CpuProfile, layerOf, profileFigure, shortSource, summariseProfile } from '../../bench/cpu-profile.js';
import { threadKind } from '../../bench/thread-cpu.js';
import { statCpu } from '../../local/lambda/proc.js';

/** A minified module with its source map, as the bundles are built: the profile names only its minified functions. */
const built = transformSync('export function readHello(item) { return item.a }\nexport function summarize(x) { return x + 1 }', {
  sourcemap: 'external',
  sourcefile: '../../work/repo/lib/data-format/records.ts',
  minify: true,
  format: 'esm',
});
const BUNDLE = 'file:///var/task/index.mjs';

/** A profile of the given functions, each with its self time in ms (one sample each, its time delta). */
function profile(functions: { name: string; url?: string; column?: number; ms: number }[]): CpuProfile {
  return {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 }, children: functions.map((_, i) => i + 2) },
      ...functions.map((f, i) => ({
        id: i + 2,
        callFrame: { functionName: f.name, url: f.url ?? '', lineNumber: f.url === BUNDLE ? 0 : -1, columnNumber: f.column ?? -1 },
      })),
    ],
    startTime: 0,
    endTime: functions.reduce((sum, f) => sum + f.ms * 1000, 0),
    samples: functions.map((_, i) => i + 2),
    timeDeltas: functions.map((f) => f.ms * 1000),
  };
}

describe('Bench: a CPU profile read back to the sources (bench/cpu-profile.ts)', () => {
  it('names a minified function by its source and the name its source map gives, and sums self time by layer, idle apart', () => {
    const maps = new Map([[BUNDLE, JSON.parse(built.map) as SourceMapPayload]]);
    const column = (minified: string): number => built.code.indexOf(`function ${minified}(`) + 'function '.length;
    const [first, second] = [...built.code.matchAll(/function (\w+)\(/g)].map((m) => m[1] ?? '');
    const summary = summariseProfile(
      profile([
        { name: first ?? '', url: BUNDLE, column: column(first ?? ''), ms: 30 },
        { name: second ?? '', url: BUNDLE, column: column(second ?? ''), ms: 10 },
        { name: '(garbage collector)', ms: 50 },
        { name: 'utf8Slice', ms: 40 },
        { name: 'processChunk', url: 'node:zlib', ms: 5 },
        { name: '(idle)', ms: 1000 },
      ]),
      maps,
    );

    expect(summary.busyMs).toBe(135);
    expect(summary.totalMs).toBe(1135);
    expect(summary.byFunction[0]).toMatchObject({ name: '(idle)', layer: 'idle' });
    expect(summary.byFunction).toEqual(
      expect.arrayContaining([
        { name: 'readHello', source: 'lib/data-format/records.ts', layer: 'record checks', selfMs: 30 },
        { name: 'summarize', source: 'lib/data-format/records.ts', layer: 'record checks', selfMs: 10 },
      ]),
    );
    expect(Object.fromEntries(summary.byLayer.map((l) => [l.layer, l.selfMs]))).toEqual({
      'page parse (UTF-8, JSON.parse)': 40,
      'record checks': 40,
      'compression (main thread)': 5,
      'GC (main thread)': 50,
      idle: 1000,
    });
  });

  it("gives the main thread's CPU to the layers in proportion to their busy samples, largest first", () => {
    const summary = summariseProfile(
      profile([
        { name: '(garbage collector)', ms: 30 },
        { name: 'utf8Slice', ms: 10 },
        { name: '(idle)', ms: 60 },
      ]),
    );
    const figure = profileFigure(summary, {
      agents: 1000,
      coding: 'gzip',
      cpuMs: 1000,
      threads: { mainMs: 800, gcHelpersMs: 100, poolMs: 100, otherMs: 0 },
      intervalUs: 1000,
      samples: 3,
    });

    expect(figure.byLayer).toEqual([
      { layer: 'GC (main thread)', ms: 600, share: 0.75 },
      { layer: 'page parse (UTF-8, JSON.parse)', ms: 200, share: 0.25 },
    ]);
    expect(figure.top.map((f) => f.name)).toEqual(['(garbage collector)', 'utf8Slice']);
  });

  it.each([
    ['node_modules/@smithy/signature-v4/dist-es/SignatureV4.js', 'SDK: signing'],
    ['node_modules/@smithy/node-http-handler/dist-es/node-http-handler.js', 'SDK: HTTP'],
    ['node_modules/@smithy/core/dist-es/submodules/schema/schemas/NormalizedSchema.js', 'SDK: deserializer'],
    ['node_modules/@smithy/core/dist-es/submodules/client/middleware-stack/MiddlewareStack.js', 'SDK: other'],
    ['lib/store/client.ts', 'page parse (UTF-8, JSON.parse)'],
    ['lib/store/agents.ts', 'pairing'],
    ['lib/inventory/merge.ts', 'summaries'],
    ['lib/json-array-stream.ts', 'serialization'],
  ])('puts %s in the layer %s', (source, layer) => {
    expect(layerOf(`../../../work/repo/${source}`, 'f', 'file:///var/task/index.mjs')).toBe(layer);
  });

  it("puts the record checks' regular expressions with the checks, and the SDK's body collection with its HTTP", () => {
    expect(layerOf('', 'RegExp: [\\u0000-\\u0024\\p{Cs}]', '')).toBe('record checks');
    expect(layerOf('', 'RegExp: ^\\d{4}-\\d{2}-\\d{2}T', '')).toBe('record checks');
    expect(layerOf('node_modules/@smithy/core/dist-es/submodules/serde/concatBytes.js', 'concatBytes', '')).toBe('SDK: HTTP');
  });

  it("names a project file from the repository's root and a package file from its package", () => {
    expect(shortSource('../../../../work/wt/x/lib/data-format/records.ts')).toBe('lib/data-format/records.ts');
    expect(shortSource('../../node_modules/@smithy/core/dist-es/submodules/serde/concatBytes.js')).toBe(
      '@smithy/core/submodules/serde/concatBytes.js',
    );
    expect(shortSource('node:zlib')).toBe('node:zlib');
  });
});

describe("Bench: a process's CPU by thread (bench/thread-cpu.ts)", () => {
  it("reads a thread's name and user + system time from its /proc stat line, a name with spaces and parentheses included", () => {
    const stat = '4242 (V8 DefaultWork) S 1 2 3 4 5 6 7 8 9 10 150 25 0 0 20 0 1 0 100 0 0';
    expect(statCpu(stat)).toEqual({ name: 'V8 DefaultWork', cpuMs: 1750 });
    expect(statCpu('7 (a (b) c) R 1 2 3 4 5 6 7 8 9 10 1 2 0').name).toBe('a (b) c');
  });

  it('sorts the threads Node names into the JavaScript thread, V8 helpers, the libuv pool and the rest', () => {
    expect(['MainThread', 'node', 'V8Worker', 'libuv-worker', 'SignalInspector'].map(threadKind)).toEqual([
      'mainMs',
      'mainMs',
      'gcHelpersMs',
      'poolMs',
      'otherMs',
    ]);
  });
});
