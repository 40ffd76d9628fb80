import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderOpenApiDocument } from '../lib/contract/openapi.js';

/**
 * `npm run openapi`: writes the contract to `openapi.json` at the repository root.
 * `npm run openapi -- --check` writes nothing and exits 1 when the committed file is stale.
 */
const target = fileURLToPath(new URL('../openapi.json', import.meta.url));
const fresh = renderOpenApiDocument();

async function main(): Promise<number> {
  const current = await readFile(target, 'utf8').catch(() => undefined);
  if (process.argv.includes('--check')) {
    if (current === fresh) return 0;
    console.error('openapi.json is out of date with lib/contract: run `npm run openapi` and commit the result.');
    return 1;
  }
  if (current !== fresh) await writeFile(target, fresh, 'utf8');
  console.log(`${current === fresh ? 'unchanged' : 'wrote'} openapi.json`);
  return 0;
}

process.exitCode = await main();
