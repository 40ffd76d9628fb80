/**
 * `npm run build`: the functions' bundles and zips (infra/build.ts), the stamp of the private API's
 * deployment, and the public REST API's gateway responses as the template fragment serverless.yml
 * includes (dist/gateway-responses.json, written from infra/gateway-responses.ts).
 *
 * `npm run package [-- OSLS ARGS]` (`tsx infra/build-cli.ts package …`): the same build, then
 * `osls package` (the CloudFormation template under `.serverless/`), offline and without AWS
 * credentials. Without `--stage` it packages the `example` stage, whose placeholder parameters
 * live in serverless.yml.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { buildAll, DIST, ROOT } from './build.js';
import { writeGatewayResponses } from './gateway-responses.js';

/**
 * The environment osls packages in: nothing in it reaches the network or needs AWS credentials
 * (osls `package` only compiles the template and copies the artifacts; osls 4 has no telemetry or
 * notifications at all). The two variables are the original Serverless Framework v3's switches for
 * what it would otherwise fetch or send, kept for a `serverless` of that line run by hand.
 */
export const OFFLINE_PACKAGING_ENV = Object.freeze({
  SLS_TELEMETRY_DISABLED: '1',
  SLS_NOTIFICATIONS_MODE: 'off',
});

/** Runs `osls package` with `args`, in the `example` stage unless the args name one. */
function packageWithOsls(args: string[]): number {
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
  writeGatewayResponses(DIST);
  for (const fn of built) {
    const kib = (file: string): string => `${(statSync(file).size / 1024).toFixed(0)} KiB`;
    console.log(`built ${relative(ROOT, fn.bundle)} (${kib(fn.bundle)}), ${relative(ROOT, fn.zip)} (${kib(fn.zip)})`);
  }
  console.log(`build done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return packaging ? packageWithOsls(argv.slice(1)) : 0;
}

// Run as `tsx infra/build-cli.ts`; a test that imports OFFLINE_PACKAGING_ENV runs nothing.
if (process.argv[1] && resolve(process.argv[1]) === join(ROOT, 'infra', 'build-cli.ts')) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
