import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Run first in every Lambda bundle (infra/build.ts starts each from it): stack traces of the
 * bundle's code name the TypeScript sources, as Node's --enable-source-maps names them, but the
 * source map is read when the first stack is formatted instead of when the bundle loads. Node
 * reads, parses and indexes a linked map (and counts the length of every line of the bundle) at
 * the import itself: 11 to 100 ms of these bundles' import on Node 24 (docs/performance.md, "Cold
 * starts"), for stacks that only a failure ever prints. The bundles are built without the
 * `sourceMappingURL` comment, so Node's own mapping finds nothing to read, and this maps the
 * bundle's frames with Node's own SourceMap class and the same rules as Node
 * (lib/internal/source_map/prepare_stack_trace.js); Node's is not lazy, hence ours.
 *
 * Invariant: formatting a stack never throws because of this (any failure gives Node's own
 * text), and frames outside the bundle are left as Node writes them.
 */

/** The bundle's own URL (this module is bundled into it), and its map beside it. */
const BUNDLE_URL = import.meta.url;
const MAP_URL = new URL(`${BUNDLE_URL}.map`);
const STACK_LINE_AT = '\n    at ';

/** What formats an error's first line: Node's own (its `[code]` for Node's errors), kept before this module replaces it. */
const nodePrepareStackTrace = Error.prepareStackTrace;

/** The bundle's map, read once; null when it cannot be read (frames then stay as they are). */
let bundleMap: SourceMap | null | undefined;

function sourceMap(): SourceMap | null {
  if (bundleMap !== undefined) return bundleMap;
  try {
    const payload = JSON.parse(readFileSync(MAP_URL, 'utf8')) as SourceMapPayload;
    // As Node resolves them: each source relative to the map (after sourceRoot), an absolute path as its file URL.
    const sources = payload.sources.map((source) => {
      const path = `${payload.sourceRoot ?? ''}${source}`;
      return isAbsolute(path) ? pathToFileURL(path).href : new URL(path, MAP_URL).href;
    });
    bundleMap = new SourceMap({ ...payload, sources, sourceRoot: '' });
  } catch {
    bundleMap = null;
  }
  return bundleMap;
}

/** What SourceMap.findEntry gives (an empty object where the map has no entry). */
interface Entry {
  originalSource?: string;
  originalLine?: number;
  originalColumn?: number;
  name?: string;
}

const entryAt = (map: SourceMap, line: number | null, column: number | null): Entry =>
  line === null || column === null ? {} : (map.findEntry(line - 1, column - 1) as Entry);

/** The name the sources gave the frame's function, when the bundle renamed it: its enclosing entry's, else the caller's call site's. */
function originalName(map: SourceMap, site: NodeJS.CallSite, caller: NodeJS.CallSite | undefined): string | undefined {
  const enclosing = entryAt(map, site.getEnclosingLineNumber(), site.getEnclosingColumnNumber());
  if (enclosing.name) return enclosing.name;
  if (caller && caller.getFileName() === site.getFileName()) return entryAt(map, caller.getLineNumber(), caller.getColumnNumber()).name;
  return undefined;
}

/** One frame of the bundle in its TypeScript source, as Node writes a mapped frame; undefined when the map has no entry for it. */
function mappedFrame(map: SourceMap, site: NodeJS.CallSite, caller: NodeJS.CallSite | undefined): string | undefined {
  const { originalSource, originalLine, originalColumn } = entryAt(map, site.getLineNumber(), site.getColumnNumber());
  if (originalSource === undefined || originalLine === undefined || originalColumn === undefined) return undefined;
  const source = originalSource.startsWith('file://') ? fileURLToPath(originalSource) : originalSource;
  const prefix = site.isAsync() ? 'async ' : site.isConstructor() ? 'new ' : '';
  const typeName = site.getTypeName();
  const namePrefix = typeName !== null && typeName !== 'global' ? `${typeName}.` : '';
  const name = originalName(map, site, caller) || site.getFunctionName() || site.getMethodName() || '<anonymous>';
  return `${prefix}${namePrefix}${name} (${source}:${originalLine + 1}:${originalColumn + 1})`;
}

function prepareStackTrace(error: Error, trace: NodeJS.CallSite[]): string {
  const head = nodePrepareStackTrace ? String(nodePrepareStackTrace(error, [])) : Error.prototype.toString.call(error);
  const frames = trace.map((site, i) => {
    try {
      const map = site.getFileName() === BUNDLE_URL ? sourceMap() : null;
      const mapped = map ? mappedFrame(map, site, trace[i + 1]) : undefined;
      if (mapped !== undefined) return `${STACK_LINE_AT}${mapped}`;
    } catch {
      // Node's own text for this frame.
    }
    return `${STACK_LINE_AT}${site}`;
  });
  return `${head}${frames.join('')}`;
}

Error.prepareStackTrace = prepareStackTrace;
