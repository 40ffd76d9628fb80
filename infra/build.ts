/**
 * `npm run build`: one self-contained, minified ESM bundle per function under `dist/<function>/`
 * (`index.mjs` + `index.mjs.map`), zipped as `dist/<function>.zip` for `package.artifact` in
 * serverless.yml, plus the stamp of the private API's deployment (see writePrivateApiDeployment).
 *
 * `npm run package [-- OSLS ARGS]` (`tsx infra/build.ts package …`): the same build, then
 * `osls package` (the CloudFormation template under `.serverless/`), offline and without AWS
 * credentials. Without `--stage` it packages the `example` stage, whose placeholder parameters
 * live in serverless.yml.
 *
 * Decisions (docs/deploying.md has the long form):
 * - ESM (`.mjs`): the project is `"type": "module"`, middy 6 ships ESM only, and nodejs22.x loads
 *   ESM handlers natively. A `require` shim in the banner serves the few CommonJS dependencies
 *   that call `require()` on Node built-ins.
 * - The AWS SDK is bundled, not taken from the Lambda runtime: tree-shaken and minified it loads
 *   faster on a cold start than the runtime's full copy from disk, and the version we test is the
 *   version we run (the runtime's copy changes under us without notice).
 * - Target node20: the machines that build and test run Node 20; nodejs22.x runs that syntax too.
 * - Size (each bundle must stay under 400 KiB; `npm run bench` prints the sizes): zod is imported
 *   as a namespace (`import * as z from 'zod'`), so esbuild keeps only what is used (`import { z }`
 *   pulls in all of zod, 261 KiB of it locales); the SDK's credential chain is replaced by the
 *   environment's credentials (infra/bundle/credential-provider-env-only.ts), which is all a Lambda
 *   function has, dropping the SSO, STS and sign-in clients the chain brings; and the SDK's
 *   event-stream support, which no DynamoDB operation uses, is left out the same way
 *   (infra/bundle/no-event-streams.ts).
 * - Source maps are external with no sources inside; Lambda runs with
 *   NODE_OPTIONS=--enable-source-maps, so stack traces point at the TypeScript lines.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateRawSync } from 'node:zlib';
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';
import { gatewayResponseResources } from './gateway-responses.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
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

/** Modules replaced in the bundles by a smaller one with the same exports (see the file header). */
export const BUNDLE_REPLACEMENTS: Readonly<Record<string, string>> = Object.freeze({
  '@aws-sdk/credential-provider-node': join(ROOT, 'infra', 'bundle', 'credential-provider-env-only.ts'),
  '@smithy/core/event-streams': join(ROOT, 'infra', 'bundle', 'no-event-streams.ts'),
  '@modelcontextprotocol/server/_shims': join(ROOT, 'infra', 'bundle', 'mcp-server-shims.ts'),
});

const replaceModules: Plugin = {
  name: 'replace-modules',
  setup(b) {
    const names = Object.keys(BUNDLE_REPLACEMENTS).map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
    b.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => ({ path: BUNDLE_REPLACEMENTS[args.path]! }));
  },
};

/** The esbuild options of every function bundle (the bench builds its floor bundle with them too). */
export function bundleOptions(entry: string, outfile: string): BuildOptions & { metafile: true } {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    // Prefer each package's ESM build: it tree-shakes (the AWS SDK above all).
    mainFields: ['module', 'main'],
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    banner: { js: REQUIRE_SHIM },
    metafile: true,
    logLevel: 'warning',
    plugins: [replaceModules],
  };
}

/** Bundles one function into <dist>/<name>/ and zips it as <dist>/<name>.zip. */
export async function buildFunction(name: FunctionName, dist = DIST): Promise<BuiltFunction> {
  const entry = join(ROOT, FUNCTIONS[name]);
  if (!existsSync(entry)) throw new Error(`Missing entry module for "${name}": ${FUNCTIONS[name]}`);
  const outDir = join(dist, name);
  rmSync(outDir, { recursive: true, force: true });
  const bundle = join(outDir, 'index.mjs');
  const result = await build(bundleOptions(entry, bundle));
  writeFileSync(join(dist, `${name}.meta.json`), JSON.stringify(result.metafile));
  const zip = join(dist, `${name}.zip`);
  writeFileAtomically(zip, zipDirectory(outDir));
  return { name, bundle, sourceMap: `${bundle}.map`, zip, metafile: result.metafile };
}

/**
 * Builds every function into `dist` (default: the project's dist/, which serverless.yml reads),
 * then stamps the private API deployment there and writes the public API's gateway responses.
 */
export async function buildAll(dist = DIST): Promise<BuiltFunction[]> {
  mkdirSync(dist, { recursive: true });
  const built = await Promise.all((Object.keys(FUNCTIONS) as FunctionName[]).map((name) => buildFunction(name, dist)));
  writePrivateApiDeployment(dist);
  writeGatewayResponses(dist);
  return built;
}

/**
 * The public REST API's gateway responses as a template fragment (dist/gateway-responses.json,
 * included by serverless.yml), written from the table the local gateway answers from
 * (infra/gateway-responses.ts), so the two cannot drift.
 */
export function writeGatewayResponses(dist = DIST): void {
  mkdirSync(dist, { recursive: true });
  writeFileAtomically(join(dist, 'gateway-responses.json'), `${JSON.stringify({ resources: { Resources: gatewayResponseResources() } }, null, 2)}\n`);
}

/**
 * CloudFormation creates an API Gateway deployment once per logical id, and a REST API's resource
 * policy or methods only take effect on a new deployment. So, like osls does for the REST APIs it
 * generates itself, every build names a new `AWS::ApiGateway::Deployment`: each `osls deploy`
 * publishes the current method and resource policy to the stage. serverless.yml includes the
 * resource from this file and infra/private-api.yml points the stage at it by `logicalId`.
 */
export function writePrivateApiDeployment(
  dist = DIST,
  stamp = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`,
): string {
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

/**
 * Replaces `file` in one step (write aside, then rename), so that osls or a test reading the
 * artifact or the deployment stamp while a build runs sees the old file or the new one, never a
 * half-written one.
 */
function writeFileAtomically(file: string, data: string | Uint8Array): void {
  const aside = `${file}.${process.pid}.tmp`;
  writeFileSync(aside, data);
  renameSync(aside, file);
}

// ---------------------------------------------------------------------------------------------
// A small, deterministic zip writer (deflate, UTF-8 names, fixed timestamps, files sorted), so the
// same bundle always gives the same artifact and CloudFormation sees no change when there is none.

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir)
    .flatMap((entry) => {
      const full = join(dir, entry);
      return statSync(full).isDirectory() ? listFiles(full, base) : [relative(base, full).split('\\').join('/')];
    })
    .sort();
}

/** Zips every file under `dir` (paths relative to it) into one buffer. */
export function zipDirectory(dir: string): Buffer {
  const DOS_TIME = 0; // 00:00:00
  const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01, the zip epoch
  const UTF8_NAMES = 0x0800;
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const name of listFiles(dir)) {
    const data = readFileSync(join(dir, name));
    const compressed = deflateRawSync(data, { level: 9 });
    const fileName = Buffer.from(name, 'utf8');
    const crc = crc32(data);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, fileName, compressed);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, 2.0 (so the mode bits below count)
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(UTF8_NAMES, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt16LE(0, 30); // extra
    central.writeUInt16LE(0, 32); // comment
    central.writeUInt16LE(0, 34); // disk
    central.writeUInt16LE(0, 36); // internal attributes
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);
    centrals.push(central, fileName);

    offset += local.length + fileName.length + compressed.length;
  }
  const centralDirectory = Buffer.concat(centrals);
  const entries = centrals.length / 2;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0, 4);
  end.writeUInt16LE(0, 6);
  end.writeUInt16LE(entries, 8);
  end.writeUInt16LE(entries, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(0, 20);
  return Buffer.concat([...locals, centralDirectory, end]);
}

// ---------------------------------------------------------------------------------------------

/**
 * The environment osls packages in: nothing in it reaches the network or needs AWS credentials
 * (osls `package` only compiles the template and copies the artifacts), and the two variables
 * below silence what the original Serverless Framework v3 would otherwise try to fetch or send.
 */
export const OFFLINE_PACKAGING_ENV = Object.freeze({
  SLS_TELEMETRY_DISABLED: '1',
  SLS_NOTIFICATIONS_MODE: 'off',
});

/** Runs `osls package` with `args`, in the `example` stage unless the args name one. */
export function packageWithOsls(args: string[]): number {
  const hasStage = args.some((a) => a === '--stage' || a === '-s' || a.startsWith('--stage='));
  const finalArgs = ['package', ...(hasStage ? [] : ['--stage', 'example']), ...args];
  const require = createRequire(import.meta.url);
  const osls = join(dirname(require.resolve('osls/package.json')), 'bin', 'serverless.js');
  const run = spawnSync(process.execPath, [osls, ...finalArgs], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, ...OFFLINE_PACKAGING_ENV },
  });
  if (run.error) throw run.error;
  return run.status ?? 1;
}

async function main(argv: string[]): Promise<number> {
  const packaging = argv[0] === 'package';
  const started = Date.now();
  const built = await buildAll();
  for (const fn of built) {
    const kib = (file: string): string => `${(statSync(file).size / 1024).toFixed(0)} KiB`;
    console.log(`built ${relative(ROOT, fn.bundle)} (${kib(fn.bundle)}), ${relative(ROOT, fn.zip)} (${kib(fn.zip)})`);
  }
  console.log(`build done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return packaging ? packageWithOsls(argv.slice(1)) : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
