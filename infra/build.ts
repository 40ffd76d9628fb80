/**
 * The functions' bundles: one self-contained, minified ESM bundle per function under
 * `dist/<function>/` (`index.mjs` + `index.mjs.map`), zipped as `dist/<function>.zip` for
 * `package.artifact` in serverless.yml, plus the stamp of the private API's deployment (see
 * writePrivateApiDeployment). The MCP function's folder also holds its MCP App views, one HTML file
 * each (infra/build-views.ts). `npm run build` and `npm run package` run it (infra/build-cli.ts, which
 * also writes the template's fragments made from the service's own code); `npm start` builds the
 * same bundles with the same options (local/lambda/bundles.ts), so this module and what it imports
 * hold nothing of lib/: the bundles are made from the service's sources, never with them.
 *
 * Decisions (docs/deploying.md has the long form):
 * - ESM (`.mjs`): the project is `"type": "module"`, middy 6 ships ESM only, and nodejs24.x loads
 *   ESM handlers natively. A `require` shim in the banner serves the few CommonJS dependencies
 *   that call `require()` on Node built-ins.
 * - The AWS SDK is bundled, not taken from the Lambda runtime: tree-shaken and minified it loads
 *   faster on a cold start than the runtime's full copy from disk, and the version we test is the
 *   version we run (the runtime's copy changes under us without notice).
 * - Target: the function bundles the syntax of Lambda's Node (LAMBDA_NODE_MAJOR, nodejs24.x), which
 *   the local sandboxes and the bench run them on too; what runs on the machines' own Node (20 for
 *   the tooling: `npm start` bundled for the tests, the runtime client) targets node20. Today the
 *   two targets give the same bytes (no source uses syntax newer than Node 20's), so a sandbox on the
 *   machine's Node where Lambda's package does not install runs the same code.
 * - Size (`npm run bench` measures each bundle against its target; dist/<function>.meta.json says
 *   what is in it): the service's own schemas (lib/config.ts, lib/contract/, lib/data-format/records.ts)
 *   use zod/mini (`import * as z from 'zod/mini'`), whose functions esbuild keeps only when used,
 *   and which attaches no JSON Schema generator to its schemas, with English set once from
 *   `zod/locales` (lib/data-format/zod-english-locale.ts; the `z.locales` namespace would pull in all 260 KiB of them);
 *   classic zod is left to the MCP door, whose SDK is built on it. The SDK's credential chain is
 *   replaced by the environment's credentials (infra/bundle/credential-provider-env-only.ts), which
 *   is all a Lambda function has, dropping the SSO, STS and sign-in clients the chain brings; the
 *   SDK's event-stream support and DynamoDB endpoint discovery, which no function uses, are left
 *   out the same way (no-event-streams.ts, no-endpoint-discovery.ts); and the SDK clients'
 *   package.json is cut to the name and version they read.
 * - Source maps are external with no sources inside, and the bundle does not name its map: Node's
 *   --enable-source-maps (in the functions' NODE_OPTIONS) would read and index a named map as the
 *   bundle loads, 11 to 100 ms of each import on Node 24 here. Instead
 *   infra/bundle/source-maps-on-error.ts, run first in each bundle, reads the map when a stack is
 *   first formatted and maps the bundle's frames as Node does, so stack traces in the logs still
 *   point at the TypeScript lines.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Metafile, type Plugin } from 'esbuild';
import { ZipFile } from 'yazl';
import { buildViews, writeFileAtomically } from './build-views.js';
import { LAMBDA_NODE_MAJOR } from './node-version.js';

/**
 * The project's folder: the nearest folder above this module that holds serverless.yml (this file
 * sits in infra/, or, bundled into `npm start` for the tests, in a folder under node_modules/).
 */
export const ROOT = ((): string => {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'serverless.yml')) && existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return resolve(here, '..');
  }
})();
export const DIST = join(ROOT, 'dist');

/** The deployed functions and their entry modules (each exports `handler`). */
export const FUNCTIONS = Object.freeze({
  inventory: 'functions/inventory/handler.ts',
  observations: 'functions/observations/handler.ts',
  mcp: 'functions/mcp/handler.ts',
  authorizer: 'functions/authorizer/handler.ts',
});
export type FunctionName = keyof typeof FUNCTIONS;

export interface BuiltFunction {
  name: FunctionName;
  /** dist/<function>/index.mjs; the Lambda handler is `index.handler`. */
  bundle: string;
  sourceMap: string;
  /** dist/<function>.zip, the deployment artifact. */
  zip: string;
  /** esbuild's account of inputs and imports, kept as dist/<function>.meta.json for inspection. */
  metafile: Metafile;
}

/**
 * CommonJS dependencies bundled into ESM still call `require('node:…')`; esbuild leaves those
 * calls to a `require` that ESM does not have, so the bundle makes one.
 */
const REQUIRE_SHIM = "import{createRequire as __createRequire}from'node:module';const require=__createRequire(import.meta.url);";

/** Run first in every function bundle: its stack traces mapped to the sources when first formatted (see the file header). */
const SOURCE_MAPS_ON_ERROR = join(ROOT, 'infra', 'bundle', 'source-maps-on-error.ts');

/**
 * Each function bundle starts from a module of two lines: SOURCE_MAPS_ON_ERROR, then everything
 * the handler's module exports (esbuild's `inject` would instead wrap that module and call it from
 * every other one). It is named by the handler module's path from `root`
 * (`lambda-entry:functions/…`), so no path of the building machine lands in the bundle or its map.
 */
const LAMBDA_ENTRY = 'lambda-entry';

function lambdaEntries(root: string): Plugin {
  return {
    name: LAMBDA_ENTRY,
    setup(b) {
      b.onResolve({ filter: new RegExp(`^${LAMBDA_ENTRY}:`) }, (args) => ({
        path: args.path.slice(LAMBDA_ENTRY.length + 1),
        namespace: LAMBDA_ENTRY,
      }));
      b.onLoad({ filter: /.*/, namespace: LAMBDA_ENTRY }, (args) => ({
        contents: `import ${JSON.stringify(SOURCE_MAPS_ON_ERROR)};\nexport * from ${JSON.stringify(join(root, args.path))};\n`,
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}

/** The entry point of a function bundle whose handler module is `entry`, a path under `root`. */
const lambdaEntryOf = (entry: string, root: string): string => `${LAMBDA_ENTRY}:${relative(root, resolve(entry)).split('\\').join('/')}`;

/** Modules replaced in the bundles by a smaller one with the same exports (see the file header). */
export const BUNDLE_REPLACEMENTS: Readonly<Record<string, string>> = Object.freeze({
  '@aws-sdk/credential-provider-node': join(ROOT, 'infra', 'bundle', 'credential-provider-env-only.ts'),
  '@smithy/core/event-streams': join(ROOT, 'infra', 'bundle', 'no-event-streams.ts'),
  '@aws-sdk/middleware-endpoint-discovery': join(ROOT, 'infra', 'bundle', 'no-endpoint-discovery.ts'),
  '@modelcontextprotocol/server/_shims': join(ROOT, 'infra', 'bundle', 'mcp-server-shims.ts'),
  semver: join(ROOT, 'infra', 'bundle', 'no-semver.ts'),
});

const replaceModules: Plugin = {
  name: 'replace-modules',
  setup(b) {
    const names = Object.keys(BUNDLE_REPLACEMENTS).map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
    b.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => ({ path: BUNDLE_REPLACEMENTS[args.path] ?? args.path }));
  },
};

/**
 * Powertools Tracer imports `node:http` as an ES module, which on Node 22 and later loads undici at
 * init: its modules get Node's CommonJS one instead (infra/bundle/node-http-builtin.ts).
 */
const tracerNodeHttp: Plugin = {
  name: 'tracer-node-http',
  setup(b) {
    b.onResolve({ filter: /^node:http$/ }, (args) =>
      /[\\/]@aws-lambda-powertools[\\/]tracer[\\/]/.test(args.importer)
        ? { path: join(ROOT, 'infra', 'bundle', 'node-http-builtin.ts') }
        : undefined,
    );
  },
};

/**
 * The SDK clients import their whole package.json for one field, their version (in the user agent):
 * the bundles get that field alone.
 */
const packageVersionOnly: Plugin = {
  name: 'package-version-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]@aws-sdk[\\/][^\\/]+[\\/]package\.json$/ }, (args) => {
      const { name, version } = JSON.parse(readFileSync(args.path, 'utf8')) as { name: string; version: string };
      return { contents: JSON.stringify({ name, version }), loader: 'json' };
    });
  },
};

/**
 * What any bundle this project makes to run on Node is: one ES module for the Node of our machines,
 * its packages included, each package's ESM build preferred because it tree-shakes (the AWS SDK
 * above all). The functions' bundles (with Lambda's Node as target), and `npm start` with its CLIs
 * bundled for the tests (test/helpers/local-build-setup.ts).
 */
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  mainFields: ['module', 'main'],
  banner: { js: REQUIRE_SHIM },
} satisfies BuildOptions;

/** The esbuild options of every function bundle, whatever its entry points and output. */
const BUNDLE_OPTIONS = {
  ...NODE_BUNDLE,
  target: `node${LAMBDA_NODE_MAJOR}`,
  minify: true,
  keepNames: true,
  // The map beside the bundle without a `sourceMappingURL` comment, which would make Node read it
  // as the bundle loads: SOURCE_MAPS_ON_ERROR maps stack traces from it when one is first formatted.
  sourcemap: 'external',
  sourcesContent: false,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  plugins: [replaceModules, tracerNodeHttp, packageVersionOnly],
} satisfies BuildOptions;

/** The esbuild options of one bundle built alone, with the functions' options (the bench's floor bundle). */
export function bundleOptions(entry: string, outfile: string): BuildOptions & { metafile: true } {
  return {
    ...BUNDLE_OPTIONS,
    plugins: [lambdaEntries(ROOT), ...BUNDLE_OPTIONS.plugins],
    entryPoints: [lambdaEntryOf(entry, ROOT)],
    outfile,
  };
}

/** Where a function's build lives in `dist`: its bundle folder, bundle, source map, zip and metafile. */
function functionFiles(name: FunctionName, dist: string): { outDir: string; bundle: string; sourceMap: string; zip: string; meta: string } {
  const outDir = join(dist, name);
  const bundle = join(outDir, 'index.mjs');
  return { outDir, bundle, sourceMap: `${bundle}.map`, zip: join(dist, `${name}.zip`), meta: join(dist, `${name}.meta.json`) };
}

/**
 * The options of the one esbuild run that bundles every function into `dist` (each output where
 * functionFiles puts it): `npm run build`'s, and the local stack's, which runs the same bundles
 * (local/lambda/bundles.ts, with esbuild's watch). `root` is where the entry modules are read
 * (the project; a copy of it in the rebuild test), `names` the functions built (all by default).
 */
export function functionsBuildOptions(
  dist: string,
  root = ROOT,
  names: readonly FunctionName[] = Object.keys(FUNCTIONS) as FunctionName[],
): BuildOptions & { metafile: true; outdir: string } {
  for (const name of names) {
    if (!existsSync(join(root, FUNCTIONS[name]))) throw new Error(`Missing entry module for "${name}": ${FUNCTIONS[name]}`);
  }
  return {
    ...BUNDLE_OPTIONS,
    plugins: [lambdaEntries(root), ...BUNDLE_OPTIONS.plugins],
    // Each output where functionFiles puts it: `out` is its path under outdir without the extension.
    entryPoints: names.map((name) => ({
      in: lambdaEntryOf(join(root, FUNCTIONS[name]), root),
      out: relative(dist, functionFiles(name, dist).bundle).replace(/\.mjs$/, ''),
    })),
    outdir: dist,
    outExtension: { '.js': '.mjs' },
  };
}

/**
 * Bundles every function in one esbuild run (one output per entry, no code shared between them:
 * each bundle stands alone), so the packages they share are read and parsed once rather than once
 * per function (the four bundles take 3.6 to 3.9 s of CPU this way and 5.6 to 5.9 s one esbuild
 * run each, for the same bytes). Each function's share of esbuild's account is kept as dist/<function>.meta.json,
 * and its folder zipped as dist/<function>.zip.
 */
async function buildFunctions(dist: string): Promise<BuiltFunction[]> {
  const names = Object.keys(FUNCTIONS) as FunctionName[];
  for (const name of names) rmSync(functionFiles(name, dist).outDir, { recursive: true, force: true });
  const { metafile } = await build(functionsBuildOptions(dist));
  await buildViews(functionFiles('mcp', dist).outDir);
  return Promise.all(
    names.map(async (name) => {
      const { outDir, bundle, sourceMap, zip, meta } = functionFiles(name, dist);
      const own = functionMetafile(metafile, bundle);
      writeFileSync(meta, JSON.stringify(own));
      writeFileAtomically(zip, await zipDirectory(outDir));
      return { name, bundle, sourceMap, zip, metafile: own };
    }),
  );
}

/**
 * One function's part of a build's metafile, as a build of that function alone would have written
 * it: its outputs (the bundle and its map), and the inputs its entry module reaches by import.
 */
function functionMetafile(metafile: Metafile, bundle: string): Metafile {
  const own = new Set([resolve(bundle), `${resolve(bundle)}.map`]);
  const outputs = Object.fromEntries(Object.entries(metafile.outputs).filter(([file]) => own.has(resolve(file))));
  const entry = Object.values(outputs).find((output) => output.entryPoint)?.entryPoint;
  if (!entry) throw new Error(`esbuild's metafile names no entry point for ${bundle}`);
  const reached = new Set<string>([entry]);
  for (const file of reached) {
    for (const imported of metafile.inputs[file]?.imports ?? []) if (!imported.external) reached.add(imported.path);
  }
  return { inputs: Object.fromEntries(Object.entries(metafile.inputs).filter(([file]) => reached.has(file))), outputs };
}

/** A function as an earlier build left it in `dist` (`npm run build` or `npm run package`). */
export function builtFunction(name: FunctionName, dist = DIST): BuiltFunction {
  const { bundle, sourceMap, zip, meta } = functionFiles(name, dist);
  return { name, bundle, sourceMap, zip, metafile: JSON.parse(readFileSync(meta, 'utf8')) as Metafile };
}

/**
 * Builds every function into `dist` (default: the project's dist/, which serverless.yml reads),
 * then stamps the private API deployment there.
 */
export async function buildAll(dist = DIST): Promise<BuiltFunction[]> {
  mkdirSync(dist, { recursive: true });
  const built = await buildFunctions(dist);
  writePrivateApiDeployment(dist);
  return built;
}

/**
 * CloudFormation creates an API Gateway deployment once per logical id, and a REST API's resource
 * policy or methods only take effect on a new deployment. So, like osls does for the REST APIs it
 * generates itself, every build names a new `AWS::ApiGateway::Deployment`: each `osls deploy`
 * publishes the current method and resource policy to the stage. serverless.yml includes the
 * resource from this file and infra/private-api.yml points the stage at it by `logicalId`.
 */
export function writePrivateApiDeployment(dist = DIST, stamp = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`): string {
  const logicalId = `PrivateApiDeployment${stamp.replace(/[^A-Za-z0-9]/g, '')}`;
  const fragment = {
    logicalId,
    resources: {
      Resources: {
        [logicalId]: {
          Type: 'AWS::ApiGateway::Deployment',
          DependsOn: ['PrivateApiEndpointGet'],
          Properties: {
            RestApiId: { Ref: 'PrivateApi' },
            Description: 'Private observations API (GET /api/mcp/endpoint), published by npm run build',
          },
        },
      },
    },
  };
  mkdirSync(dist, { recursive: true });
  writeFileAtomically(join(dist, 'private-api-deployment.json'), `${JSON.stringify(fragment, null, 2)}\n`);
  return logicalId;
}

// ---------------------------------------------------------------------------------------------
// The deployment zip, written by yazl and made deterministic (the same bundle always gives the
// same artifact, so CloudFormation sees no change when there is none): files sorted, fixed
// timestamps, fixed modes, no extended-timestamp field.

function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir)
    .flatMap((entry) => {
      const full = join(dir, entry);
      return statSync(full).isDirectory() ? listFiles(full, base) : [relative(base, full).split('\\').join('/')];
    })
    .sort();
}

/** Zips every file under `dir` (paths relative to it, deflated, rw-r--r--) into one buffer. */
export async function zipDirectory(dir: string): Promise<Buffer> {
  // The zip epoch (1980-01-01 00:00) in the local time zone, made at each call: zips store DOS
  // times in local time, so this gives the same bytes whatever TZ the machine (or process) has.
  const zipEpoch = new Date(1980, 0, 1);
  const zip = new ZipFile();
  for (const name of listFiles(dir)) {
    zip.addBuffer(readFileSync(join(dir, name)), name, { mtime: zipEpoch, mode: 0o100644, compressionLevel: 9, forceDosTimestamp: true });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
