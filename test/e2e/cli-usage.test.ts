import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { closedPortEndpoint } from '../helpers/faults.js';
import { runCli } from '../helpers/npm-start.js';

/** The CLIs' refusals: bad arguments, bad files, no engine to talk to; one sentence each, and the usage only for bad arguments. */

const cli = async (script: string, args: string[], env: Record<string, string>, viaNpm = false): Promise<string> =>
  (await runCli(script, args, env, viaNpm)).stdout;

describe.concurrent('E2E: the CLIs refuse bad input with one sentence', () => {
  it('says where a fleet file is invalid, names a missing one by its resolved path, and prints the usage only for bad arguments', async ({
    expect,
  }) => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-'));
    const file = join(dir, 'fleet.json');
    await writeFile(
      file,
      JSON.stringify({ tenants: [{ tenant_id: 't', agents: [{ agent_id: 'a', hostname: 'h', os: 'linux', version: '1' }] }] }),
    );
    const env = { DYNAMODB_ENDPOINT: await closedPortEndpoint() };

    await expect(cli('seed-cli.ts', ['--file', file], env)).rejects.toMatchObject({
      code: 2,
      stderr: `seed failed: the fleet file ${file} is not a valid fleet: tenants[0].agents[0].arch: required\n`,
    });
    await expect(cli('seed-cli.ts', ['--file', 'missing.json'], { ...env, INIT_CWD: dir })).rejects.toMatchObject({
      code: 2,
      stderr: `seed failed: there is no fleet file at ${join(dir, 'missing.json')}\n`,
    });
    // Through npm itself: the seed CLI's modules and packages loaded as `npm run seed` loads them.
    await expect(cli('seed-cli.ts', ['--generate'], env, true)).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage: npm run seed'),
    });
  }, 180_000);

  it('tells `npm run audit` users where it looked and how to point it at another engine port, without a usage line', async ({ expect }) => {
    const endpoint = await closedPortEndpoint();

    await expect(
      cli('audit-cli.ts', ['--tenant', 'acme'], { DYNAMODB_ENDPOINT: endpoint, DYNAMODB_MAX_ATTEMPTS: '1', DYNAMODB_TIMEOUT_MS: '500' }),
    ).rejects.toMatchObject({
      code: 1,
      stderr: `audit failed: nothing answers at ${endpoint}. Is \`npm start\` running? If it runs on another engine port, give it here too: DYNAMODB_PORT=<port> npm run audit -- --tenant T (or DYNAMODB_ENDPOINT=<url>).\n`,
    });
    await expect(cli('audit-cli.ts', [], {})).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('usage: npm run audit') });
  }, 180_000);

  it('refuses `npm run token -- --groups` without group names, naming the rule, and prints no token', async ({ expect }) => {
    await expect(cli('token-cli.ts', ['--tenant', 'acme', '--groups', 'emea,,servers'], {})).rejects.toMatchObject({
      code: 2,
      stdout: '',
      stderr: expect.stringContaining("--groups takes endpoint group names separated by commas, each 1 to 128 characters (or '*' for all)"),
    });
  }, 180_000);

  it('prints nothing but a usage line and exits 2 when `npm run token` is called without a tenant', async ({ expect }) => {
    // Through npm itself, as for the seed CLI above.
    await expect(cli('token-cli.ts', [], {}, true)).rejects.toMatchObject({
      code: 2,
      stdout: '',
      stderr: expect.stringContaining('usage: npm run token'),
    });
  }, 180_000);
});
