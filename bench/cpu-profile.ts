import { SourceMap, type SourceMapPayload } from 'node:module';
import type { ThreadCpu } from './thread-cpu.js';

/**
 * A V8 CPU profile (`node --cpu-prof`) read back to the sources: each sample's self time given to
 * the function it was in, that function found in the bundle's source map (the bundles are minified,
 * so their own names say nothing), and the functions grouped into the layers the inventory's work
 * is made of. What the profile cannot see is said beside it: it samples the main JavaScript thread
 * only, so the compressor (zlib and brotli run on libuv's pool) and V8's helper threads (concurrent
 * marking and sweeping) are read per thread from /proc (threadCpu).
 */

/** The parts of a `.cpuprofile` this reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
    children?: number[];
  }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a piece of the main thread's time went: a layer of the work, in the order the report lists them. */
export const LAYERS = [
  'SDK: HTTP',
  'SDK: signing',
  'SDK: deserializer',
  'SDK: other',
  'page parse (UTF-8, JSON.parse)',
  'record checks',
  'pairing',
  'summaries',
  'serialization',
  'streams',
  'compression (main thread)',
  'HTTP (Node)',
  'GC (main thread)',
  'Node and V8 (other)',
  'start and import',
  'idle',
] as const;
export type Layer = (typeof LAYERS)[number];

/**
 * The layer of a function, from the source it was compiled from (a path in the bundle's source
 * map, or Node's own `node:` module) and its name. Rules, first match wins; a source under
 * node_modules is named by its package.
 */
export function layerOf(source: string, functionName: string, url: string): Layer {
  if (functionName === '(garbage collector)') return 'GC (main thread)';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(program)' || functionName === '(root)') return 'Node and V8 (other)';
  // V8's profiler gives the time of JSON.parse, a builtin, to the last native callback before it: the page's UTF-8 decoding.
  if (functionName === 'utf8Slice') return 'page parse (UTF-8, JSON.parse)';
  // The record checks' regular expressions run as functions of their own: the key escape, the time's form.
  if (functionName.startsWith('RegExp: [\\u0000-\\u0024') || functionName.startsWith('RegExp: ^\\d{4}-')) return 'record checks';
  const s = source.replaceAll('\\', '/');
  if (/lib\/store\/client\.ts$/.test(s)) return 'page parse (UTF-8, JSON.parse)';
  if (/@smithy\/signature-v4|\/signature-v4\/|httpAuthSchemes|aws_sdk\/aws4|sigv4|SignatureV4|signing/i.test(s)) return 'SDK: signing';
  // Receiving the answer's bytes (the SDK's HTTP handler and its body collector) is HTTP; reading them is the deserializer.
  const sdkHttp =
    /@smithy\/(node-http-handler|fetch-http-handler|util-stream|util-body-length|querystring-builder|protocol-http|middleware-content-length)|@smithy\/core\/dist-es\/submodules\/(protocols\/(collect-stream-body|HttpProtocol)|serde\/concatBytes|transport)/;
  if (sdkHttp.test(s)) return 'SDK: HTTP';
  const sdkReading =
    /@(aws-sdk|smithy)\/core\/dist-es\/submodules\/(protocols\/json|schema|serde)|@aws-sdk\/(dynamodb-codec|util-dynamodb)|@smithy\/util-utf8|@smithy\/util-base64/;
  if (sdkReading.test(s)) return 'SDK: deserializer';
  if (/node_modules\/(@aws-sdk|@smithy)\//.test(s)) return 'SDK: other';
  if (
    /lib\/data-format\/(records|keys|items|attribute-values)\.ts$/.test(s) ||
    (/lib\/store\/agents\.ts$/.test(s) && /readAgentItem/.test(functionName))
  )
    return 'record checks';
  if (
    /lib\/store\/(agents|query)\.ts$|lib\/inventory\/scoped-pages\.ts$|lib\/auth\/endpoint-scope\.ts$|lib\/data-format\/group-names\.ts$/.test(
      s,
    )
  )
    return 'pairing';
  if (/lib\/inventory\/merge\.ts$/.test(s)) return 'summaries';
  if (/lib\/inventory\/list\.ts$|lib\/json-array-stream\.ts$/.test(s)) return 'serialization';
  if (/^node:zlib$|^node:internal\/zlib/.test(url)) return 'compression (main thread)';
  if (/^node:internal\/(streams|webstreams)|^node:stream/.test(url)) return 'streams';
  if (/^node:(_http|http|https|net|internal\/(http|net|stream_base_commons|dns)|diagnostics_channel)/.test(url)) return 'HTTP (Node)';
  if (/^node:internal\/(modules|vm|main|bootstrap|process\/pre_execution|url)/.test(url) || /runtime-client|awslambda/.test(s))
    return 'start and import';
  return 'Node and V8 (other)';
}

/** One function's self time (ms), its source (a file of the project or a package, or Node's module) and its layer. */
export interface FunctionTime {
  name: string;
  source: string;
  layer: Layer;
  selfMs: number;
}

export interface ProfileSummary {
  /** The profile's span (ms) and the main thread's time not idle (ms). */
  totalMs: number;
  busyMs: number;
  byLayer: { layer: Layer; selfMs: number }[];
  /** Functions by self time, largest first. */
  byFunction: FunctionTime[];
}

/** A source path as the report names it: a project file from the repository's root, a package file from its package. */
export function shortSource(source: string): string {
  const s = source.replaceAll('\\', '/');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(s);
  if (pkg) return `${pkg[1]}/${(pkg[2] ?? '').replace(/^dist-(es|cjs)\//, '')}`;
  const project = /(?:^|\/)((?:lib|functions|infra|bench)\/.*)$/.exec(s);
  return project?.[1] ?? s;
}

/**
 * Self time per function and per layer. `maps` gives, for a script's URL (the bundle's
 * `file://…/index.mjs`), its source map; a function of a mapped script is named by the source and
 * the name the map gives at its start, others (Node's own modules, V8's pseudo-functions) by
 * their URL and name.
 */
export function summariseProfile(profile: CpuProfile, maps: ReadonlyMap<string, SourceMapPayload> = new Map()): ProfileSummary {
  const consumers = new Map<string, SourceMap>();
  for (const [url, payload] of maps) consumers.set(url, new SourceMap(payload));
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time from the sample before to sample i: that time is given to sample i's function.
  for (const [i, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, profile.timeDeltas[i] ?? 0));
  const byKey = new Map<string, FunctionTime>();
  const layers = new Map<Layer, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    totalUs += us;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    let source = url;
    let name = functionName;
    const map = consumers.get(url);
    if (map && lineNumber >= 0) {
      const entry = map.findEntry(lineNumber, columnNumber) as { originalSource?: string; name?: string };
      if (entry.originalSource) source = entry.originalSource;
      if (entry.name && (!name || name.length <= 2)) name = entry.name;
    }
    const layer = layerOf(source, name, url);
    if (layer === 'idle') idleUs += us;
    layers.set(layer, (layers.get(layer) ?? 0) + us);
    const short = shortSource(source);
    const key = `${name}\u0000${short}`;
    const entry = byKey.get(key) ?? { name: name || '(anonymous)', source: short, layer, selfMs: 0 };
    entry.selfMs += us / 1000;
    byKey.set(key, entry);
  }
  return {
    totalMs: totalUs / 1000,
    busyMs: (totalUs - idleUs) / 1000,
    byLayer: LAYERS.filter((l) => layers.has(l)).map((layer) => ({ layer, selfMs: (layers.get(layer) ?? 0) / 1000 })),
    byFunction: [...byKey.values()].sort((a, b) => b.selfMs - a.selfMs),
  };
}

/**
 * What the bench reports of one profiled instance: its CPU by thread (/proc), the main thread's
 * CPU by layer (each layer's share of the profile's busy samples, times the main thread's CPU:
 * on a core of its own, a sample also lands where the main thread waited for the other threads of
 * its process), and the functions with the most main-thread time.
 */
export interface ProfileFigure {
  agents: number;
  coding: string;
  /** The instance's CPU (every thread) and by thread kind. */
  cpuMs: number;
  threads: ThreadCpu;
  /** The profile's sampling interval and samples. */
  intervalUs: number;
  samples: number;
  byLayer: { layer: Layer; ms: number; share: number }[];
  top: { name: string; source: string; layer: Layer; ms: number }[];
}

/** A ProfileFigure from a profile's summary and the instance's CPU; `top` functions by main-thread time, idle left out. */
export function profileFigure(
  summary: ProfileSummary,
  run: { agents: number; coding: string; cpuMs: number; threads: ThreadCpu; intervalUs: number; samples: number },
  top = 15,
): ProfileFigure {
  const busy = summary.busyMs > 0 ? summary.busyMs : 1;
  const toMainMs = (profileMs: number): number => (profileMs / busy) * run.threads.mainMs;
  return {
    ...run,
    byLayer: summary.byLayer
      .filter((l) => l.layer !== 'idle')
      .map((l) => ({ layer: l.layer, ms: toMainMs(l.selfMs), share: l.selfMs / busy }))
      .sort((a, b) => b.ms - a.ms),
    top: summary.byFunction
      .filter((f) => f.layer !== 'idle')
      .slice(0, top)
      .map((f) => ({ name: f.name, source: f.source, layer: f.layer, ms: toMainMs(f.selfMs) })),
  };
}
