import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative, win32 } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { ROOT } from '../../infra/build.js';

/** Where a browser came from, said once per run. */
export interface FoundChromium {
  executablePath: string;
  /** How it was found, in words: "CHROME_PATH", "the npm package …", "installed at …". */
  source: string;
  /** Environment the browser needs beside the machine's own (the packaged fonts where the machine has none). */
  env: Record<string, string>;
}

/** The npm dev dependency that carries a Chromium build inside its package (Linux x64 only: its arm64 build is not in the package). */
const PACKAGED = '@sparticuz/chromium';

/** System browsers, most common first, per platform. */
function systemCandidates(): string[] {
  if (process.platform === 'darwin') {
    return [
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
      '/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing',
    ];
  }
  if (process.platform === 'win32') {
    const roots = [process.env.PROGRAMFILES, process.env['PROGRAMFILES(X86)'], process.env.LOCALAPPDATA].filter((root) => root);
    return roots.flatMap((root) => [
      win32.join(root as string, 'Google', 'Chrome', 'Application', 'chrome.exe'),
      win32.join(root as string, 'Chromium', 'Application', 'chrome.exe'),
    ]);
  }
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
}

/**
 * The Chromium of the npm package, unpacked once into node_modules/.cache (so `npm ci` renews it).
 * The package unpacks into the system temporary folder, which it reads from TMPDIR at each call;
 * it is pointed at a private staging folder renamed into place whole, so test files starting
 * at the same time never launch a half-written binary and no other project shares the copy.
 */
async function packagedChromium(): Promise<FoundChromium | undefined> {
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  let packageDir: string;
  try {
    packageDir = join(createRequire(import.meta.url).resolve(PACKAGED), '..', '..', '..');
  } catch {
    return undefined;
  }
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const cacheRoot = join(ROOT, 'node_modules', '.cache');
  const home = join(cacheRoot, `chromium-${version}`);
  const executablePath = join(home, 'chromium');
  if (!existsSync(executablePath)) {
    mkdirSync(cacheRoot, { recursive: true });
    const staging = await mkdtemp(join(cacheRoot, 'chromium-unpacking-'));
    const { default: packaged } = await import('@sparticuz/chromium');
    const tmp = process.env.TMPDIR;
    process.env.TMPDIR = staging;
    try {
      await packaged.executablePath();
    } finally {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
    }
    // Another file may have finished first: its copy is as good as ours.
    await rename(staging, home).catch(() => rm(staging, { recursive: true, force: true }));
  }
  // The package's fonts only where the machine has no fontconfig of its own (a bare container).
  const env: Record<string, string> = existsSync('/etc/fonts/fonts.conf') ? {} : { FONTCONFIG_PATH: join(home, 'fonts') };
  return { executablePath, source: `the npm package ${PACKAGED} ${version} (unpacked in ${relative(ROOT, home)})`, env };
}

/**
 * Finds a Chromium to drive, in this order: CHROME_PATH when set; the Chromium the npm dev
 * dependency @sparticuz/chromium carries (Linux x64); a system Chrome or Chromium (macOS,
 * Windows, Debian and Ubuntu paths). Fails with the ways to get one when there is none.
 */
export async function findChromium(): Promise<FoundChromium> {
  const chosen = process.env.CHROME_PATH;
  if (chosen) {
    if (!existsSync(chosen))
      throw new Error(
        `CHROME_PATH is ${JSON.stringify(chosen)}, which does not exist: set it to a Chrome or Chromium binary, or unset it.`,
      );
    return { executablePath: chosen, source: 'CHROME_PATH', env: {} };
  }
  const packaged = await packagedChromium();
  if (packaged) return packaged;
  const installed = systemCandidates().find((path) => existsSync(path));
  if (installed) return { executablePath: installed, source: `the system's browser at ${installed}`, env: {} };
  throw new Error(
    `No Chromium found: ${PACKAGED} carries one for Linux x64 only (run \`npm ci\`); elsewhere install Chrome or Chromium, or set CHROME_PATH to its binary.`,
  );
}

/** Set by the test run's global setup (test/helpers/scratch-setup.ts): the run's scratch folder. */
const SCRATCH = 'ENDPOINT_READ_TEST_SCRATCH';

/** Says which browser runs, once per test run (a marker in the run's scratch folder), else once per process. */
let announced = false;
function announce(found: FoundChromium, version: string): void {
  if (announced) return;
  announced = true;
  const scratch = process.env[SCRATCH];
  if (scratch) {
    try {
      writeFileSync(join(scratch, 'browser-announced'), '', { flag: 'wx' });
    } catch {
      return;
    }
  }
  console.info(`Browser: Chromium ${version} from ${found.source}; set CHROME_PATH to use another.`);
}

/**
 * Headless Chromium for the browser tests, found by findChromium. playwright-core already passes
 * the switches a closed network needs (no background networking, component update, sync or first
 * run) and --no-sandbox (root); QUIC is off too. The package's own recommended switches are not
 * used: they turn off web security and site isolation, which these tests check.
 */
export async function launchChromium(): Promise<Browser> {
  const found = await findChromium();
  const browser = await chromium.launch({
    executablePath: found.executablePath,
    headless: true,
    args: ['--disable-quic', '--disable-gpu'],
    env: { ...process.env, ...found.env },
  });
  announce(found, browser.version());
  return browser;
}
