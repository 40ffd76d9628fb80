import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Set while a run's scratch folder exists: the projects' copies of this setup find it there and make no second one. */
const SCRATCH = 'ENDPOINT_READ_TEST_SCRATCH';

/**
 * Global setup of every test project (vitest.config.ts): one scratch folder per run, made the
 * system temporary folder (TMPDIR) of the test workers and of every process they start, and
 * removed after the run. The stacks, CLIs, issuers, browsers and MCP clients the tests start make
 * their folders under it, so a run leaves nothing behind in the machine's temporary folder
 * (measured before: about 45 folders a run, issuer keys in them). Vitest hands each worker
 * `process.env` as it stands after the global setups, so setting it here reaches them all.
 */
export default function setup(): (() => void) | undefined {
  if (process.env[SCRATCH]) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'endpoint-read-tests-'));
  process.env[SCRATCH] = dir;
  process.env.TMPDIR = dir;
  return removedAtEnd(dir);
}

/**
 * Removes `dir` when the run ends: the returned teardown, and the vitest process's exit, since
 * Ctrl-C ends vitest without every teardown. For the folders global setups make.
 */
export function removedAtEnd(dir: string): () => void {
  const remove = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', remove);
  return remove;
}
