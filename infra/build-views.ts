/**
 * The MCP App views (lib/mcp/app/): each one self-contained HTML file, its script and CSS inline,
 * written beside the MCP bundle (dist/mcp/) and zipped with it by `npm run build`
 * (infra/build.ts); the bundle reads it when a client asks for it, never imports it. A module of
 * its own, without a command line, so `npm start` can build the views too; like the bundles' build,
 * it reads the sources of lib/mcp/app/ as files and imports nothing of lib/.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const VIEW_SOURCE = join(ROOT, 'lib', 'mcp', 'app');
/**
 * Where `npm start` and the test run keep the views for the functions they run from source
 * (lib/mcp/views.ts reads them there): apart from dist/, which `npm run build` and `npm run
 * package` empty and fill again while tests may be reading.
 */

/** The file the view is written to, as the server reads it: the manifest's (lib/mcp/app/manifest.json), read as data. */
function viewFile(): string {
  const { file } = JSON.parse(readFileSync(join(VIEW_SOURCE, 'manifest.json'), 'utf8')) as { file?: unknown };
  if (typeof file !== 'string' || !/^[a-z0-9-]+\.html$/.test(file)) throw new Error('lib/mcp/app/manifest.json names no view file');
  return file;
}

/** Each view's file, and its source in lib/mcp/app/: an entry module and an HTML template whose style and script are filled in. */
const views = (): Array<{ file: string; entry: string; template: string }> => [
  { file: viewFile(), entry: 'view.ts', template: 'view.html' },
];

/**
 * Replaces `file` in one step (write aside, then rename), so that osls or a test reading the
 * artifact or the deployment stamp while a build runs sees the old file or the new one, never a
 * half-written one.
 */
export function writeFileAtomically(file: string, data: string | Uint8Array): void {
  const aside = `${file}.${process.pid}.tmp`;
  writeFileSync(aside, data);
  renameSync(aside, file);
}

/**
 * The view's script reaches classic zod through ext-apps' `z` namespace, which carries every zod
 * locale (about 260 KiB); the view shows no zod message, so it gets English alone.
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: "export { default as en } from './en.js';",
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

/** Puts `content` where `marker` stands in `template`, exactly once (a function replacer: `$` in code stays `$`). */
function inline(template: string, marker: string, content: string): string {
  if (template.split(marker).length !== 2) throw new Error(`the view template must hold ${marker} exactly once`);
  return template.replace(marker, () => content);
}

/**
 * Builds every view into `outDir` as `<view>.html`: its entry bundled for browsers (IIFE,
 * minified) with the CSS it imports, both inlined into its template. Returns the files written.
 */
export async function buildViews(outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  return Promise.all(
    views().map(async (view) => {
      const { outputFiles } = await build({
        entryPoints: [join(VIEW_SOURCE, view.entry)],
        bundle: true,
        format: 'iife',
        platform: 'browser',
        target: ['chrome111', 'edge111', 'firefox114', 'safari16.4'],
        minify: true,
        legalComments: 'none',
        write: false,
        outdir: outDir,
        plugins: [zodEnglishOnly],
        logLevel: 'warning',
      });
      const text = (ext: string): string => outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
      const script = text('.js');
      const style = text('.css');
      // Inline code must not close its own element early.
      if (/<\/script/i.test(script) || /<\/style/i.test(style)) throw new Error(`the ${view.entry} view's inline code closes its element`);
      const template = readFileSync(join(VIEW_SOURCE, view.template), 'utf8');
      const html = inline(inline(template, '/*STYLE*/', style), '/*SCRIPT*/', script);
      const file = join(outDir, view.file);
      writeFileAtomically(file, html);
      return file;
    }),
  );
}
