import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { runtimeClientModule } from '../../local/lambda/bundles.js';

/**
 * The runtime client's bundle, kept under node_modules/.cache by what was built: a new file when any
 * module it holds changes, the modules the client imports as much as the client itself (an edit of
 * awslambda.ts once kept running the old bundle), the same file otherwise. On a copy of the sources
 * in a folder of its own, so the project's own cache is left as it is.
 */

const LAMBDA = join('local', 'lambda');
const root = mkdtempSync(join(tmpdir(), 'runtime-client-'));
mkdirSync(join(root, LAMBDA), { recursive: true });
for (const file of ['runtime-client.ts', 'awslambda.ts', 'runtime-token.ts'])
  copyFileSync(join(ROOT, LAMBDA, file), join(root, LAMBDA, file));

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('Function: runtimeClientModule (the runtime client, one file per version of its sources)', () => {
  it('keeps the file it wrote while no source changed, and writes a new one when a module the client imports changed', async () => {
    const first = await runtimeClientModule(root);
    const builtAt = statSync(first).mtimeMs;
    const again = await runtimeClientModule(root);
    const awslambda = join(root, LAMBDA, 'awslambda.ts');
    const contentType = 'application/vnd.awslambda.http-integration-response';
    writeFileSync(awslambda, readFileSync(awslambda, 'utf8').replace(`'${contentType}'`, `'${contentType}+edited'`));
    const edited = await runtimeClientModule(root);

    expect(again).toBe(first);
    expect(statSync(again).mtimeMs).toBe(builtAt);
    expect(readFileSync(first, 'utf8')).not.toContain(`${contentType}+edited`);
    expect(edited).not.toBe(first);
    expect(readFileSync(edited, 'utf8')).toContain(`${contentType}+edited`);
  }, 30_000);
});
