import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localIssuer } from '../../local/issuer.js';

let made: Promise<string> | undefined;

/**
 * A fresh LOCAL_DIR (`<tmp>/<prefix>XXXXXX/local`) for one test's stack, CLI or issuer, holding an
 * issuer key made once per test process by the issuer's own code and copied: making an RSA-2048 key
 * takes 0.1 to 0.3 s of CPU, and about 25 stacks and CLIs of a run each made their own (measured:
 * 30 keys, about 5 s of a run's CPU). Making the key on first use stays proven by the tests that start
 * from an empty folder (`emptyLocalDir`: cli.test's stacks, and start.test's terminal test, whose token CLI makes the key before its stack starts).
 */
export async function localDirWithKey(prefix: string): Promise<string> {
  made ??= (async () => {
    const dir = await emptyLocalDir('issuer-key-');
    await localIssuer(dir);
    return dir;
  })();
  const dir = await emptyLocalDir(prefix);
  await cp(await made, dir, { recursive: true });
  return dir;
}

/** A LOCAL_DIR that does not exist yet (`<tmp>/<prefix>XXXXXX/local`): whatever runs first there makes the issuer key. */
export async function emptyLocalDir(prefix: string): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), prefix)), 'local');
}
