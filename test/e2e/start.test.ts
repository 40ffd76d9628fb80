import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, it } from 'vitest';
import { freePort, freshStartEnv, killStarted, npmStart, tokenFor, waitFor } from '../helpers/npm-start.js';

/**
 * `npm start` as a user meets it, as its own process: bad variables and files, ports in use, and
 * what its terminal shows. Each test runs its own `npm start` on its own ports and folders: the tests
 * of a group run at the same time.
 */

afterAll(killStarted);

/**
 * One access line of npm start's terminal (method, path, status, time, request id; a request that
 * started a function instance also names its cold start, as Lambda's REPORT line does, and one whose
 * client left before its answer says so, with `-` for a status never sent); each part a pattern.
 */
const accessLine = (method: string, path: string, status: string, requestId = '[0-9a-f-]{36}', coldStart = '(?: \\(.+\\))?'): RegExp =>
  new RegExp(`^${method} ${path} ${status} \\d+ ms ${requestId}${coldStart}$`, 'm');

describe.concurrent('E2E: npm start refuses a bad start with one sentence', () => {
  it.for([
    ['PORT=abc', { PORT: 'abc' }, 'npm start: Invalid configuration: PORT: must be a port number from 0 to 65535, not "abc"'],
    [
      'PRIVATE_PORT=70000',
      { PRIVATE_PORT: '70000' },
      'npm start: Invalid configuration: PRIVATE_PORT: must be a port number from 0 to 65535, not "70000"',
    ],
    [
      'DYNAMODB_ENDPOINT=localhost:8000',
      { DYNAMODB_ENDPOINT: 'localhost:8000' },
      'npm start: Invalid configuration: DYNAMODB_ENDPOINT: must be an http:// or https:// URL, not "localhost:8000"; write it with its scheme, e.g. http://localhost:8000',
    ],
    // A relative path is taken from the folder the user ran `npm start` in (INIT_CWD), and shown resolved.
    [
      'SEED=bogus',
      { SEED: 'bogus', INIT_CWD: '/home/user/fleets' },
      'npm start: SEED: there is no fleet file at /home/user/fleets/bogus (SEED is demo, none, or the path of a fleet file).',
    ],
    ['SEED_LIVE=yes', { SEED_LIVE: 'yes' }, 'npm start: SEED_LIVE must be true or false, not "yes".'],
    // A variable only the functions read: checked by each function at its init, which npm start runs before it serves.
    [
      'UPSTREAM_TIMEOUT_MS=soon',
      { UPSTREAM_TIMEOUT_MS: 'soon' },
      'npm start: the mcp function cannot start with this environment: Invalid configuration: UPSTREAM_TIMEOUT_MS: must be a whole number above 0, not "soon"',
    ],
    [
      'MCP_ALLOWED_ORIGINS=*',
      { MCP_ALLOWED_ORIGINS: '*' },
      'npm start: Invalid configuration: MCP_ALLOWED_ORIGINS: must list exact browser origins such as https://app.example.com, comma-separated (* and null are refused), not "*"',
    ],
  ] as const)('%s', { timeout: 120_000 }, async ([, env, message], { expect }) => {
    const run = npmStart({ ...(await freshStartEnv()), ...env });

    expect(await run.exited).toBe(2);
    expect(run.output().trim()).toBe(message);
  });

  it('names the file, the place and the rule of an invalid fleet, and of a file that is not JSON', async ({ expect }) => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-'));
    const invalid = join(dir, 'invalid.json');
    const notJson = join(dir, 'broken.json');
    await writeFile(
      invalid,
      JSON.stringify({
        tenants: [
          {
            tenant_id: 't',
            agents: [
              { agent_id: 'a', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' },
              { agent_id: 'b', hostname: 'h', os: 'linux', version: '1' },
            ],
          },
        ],
      }),
    );
    await writeFile(notJson, '{"tenants": [');

    const first = npmStart({ ...(await freshStartEnv()), SEED: invalid });
    const second = npmStart({ ...(await freshStartEnv()), SEED: notJson });

    expect(await first.exited).toBe(2);
    expect(first.output().trim()).toBe(
      `npm start: SEED: the fleet file ${invalid} is not a valid fleet: tenants[0].agents[1].arch: required (SEED is demo, none, or the path of a fleet file).`,
    );
    expect(await second.exited).toBe(2);
    expect(second.output()).toMatch(
      new RegExp(`^npm start: SEED: the fleet file ${notJson.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not JSON \\(`),
    );
  }, 120_000);

  // The probe that tells its own stack from another program must settle whatever the holder does:
  // a server that streams without end keeps its socket busy, so no idle timeout would ever end it.
  const holders: Array<[string, () => Server, string]> = [
    ['a program that answers nothing', () => createServer(), '0.0.0.0'],
    [
      'a program that answers with a stream that never ends',
      () =>
        createHttpServer((_req, res) => {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          const beat = setInterval(() => res.write('x'.repeat(1024)), 1);
          res.on('close', () => clearInterval(beat));
        }),
      '127.0.0.1',
    ],
  ];
  it.for(holders)(
    'says which port is taken and which variable moves it, held by %s',
    { timeout: 120_000 },
    async ([, holder, host], { expect }) => {
      const taken = holder();
      await new Promise<void>((resolve) => taken.listen(0, host, resolve));
      const port = (taken.address() as { port: number }).port;
      try {
        const run = npmStart({ ...(await freshStartEnv()), PORT: String(port), SEED: 'none' });

        expect(await run.exited).toBe(2);
        expect(run.output().trim()).toBe(
          `npm start: port ${port} (PORT, the public listener) is in use by another program; stop it, or set PORT to a free port.`,
        );
      } finally {
        (taken as Partial<HttpServer>).closeAllConnections?.();
        taken.close();
      }
    },
  );

  it('names every port in use in one sentence, and says so when it is its own stack that holds them', async ({ expect }) => {
    const [port, privatePort, dynamoPort] = [await freePort(), await freePort(), await freePort()];
    const ports = { PORT: String(port), PRIVATE_PORT: String(privatePort), DYNAMODB_PORT: String(dynamoPort), SEED: 'none' };
    const first = npmStart({ ...(await freshStartEnv()), ...ports });
    await waitFor(first, 'Stop with Ctrl-C');
    try {
      const second = npmStart({ ...(await freshStartEnv()), ...ports });

      expect(await second.exited).toBe(2);
      expect(second.output().trim()).toBe(
        `npm start: ports ${port} (PORT, the public listener) and ${privatePort} (PRIVATE_PORT, the private listener) are in use by this project's own local stack (another \`npm start\` still running), ` +
          `and port ${dynamoPort} (DYNAMODB_PORT, the embedded DynamoDB engine) by a DynamoDB-compatible engine (another \`npm start\` of this project, or DynamoDB Local); ` +
          `stop that \`npm start\` (Ctrl-C in its terminal), or set PORT, PRIVATE_PORT and DYNAMODB_PORT to free ports, or use that engine with DYNAMODB_ENDPOINT=http://127.0.0.1:${dynamoPort}.`,
      );
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  }, 120_000);
});

describe.concurrent('E2E: the terminal of npm start', () => {
  it('shows the banner first, with a token for each tenant of the fleet file it seeds, then one short line per request: method, path, status, time and the request id of the answer (or that the client left before it), and no log records or library notices unless asked', async ({
    expect,
  }) => {
    const port = await freePort();
    const fleet = join(await mkdtemp(join(tmpdir(), 'fleet-')), 'fleet.json');
    await writeFile(
      fleet,
      JSON.stringify({
        tenants: [{ tenant_id: 'contoso', agents: [{ agent_id: 'a-1', hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' }] }],
      }),
    );
    // The user's default: POWERTOOLS_LOG_LEVEL unset (the handlers' JSON records would be INFO).
    const env = { ...(await freshStartEnv('none')), PORT: String(port), SEED: fleet };
    const token = await tokenFor('contoso', env); // first, in an empty folder: it makes the issuer key the stack then uses
    const mcpToken = await tokenFor('contoso', env, ['--mcp']);
    const run = npmStart({ ...env, POWERTOOLS_LOG_LEVEL: undefined });
    await waitFor(run, 'Stop with Ctrl-C');
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/agents`);
      const requestId = /\(request id: ([0-9a-f-]{36})\)/.exec(await res.text())?.[1];
      const listed = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${token}` } });
      await listed.arrayBuffer();
      // An MCP client of the 2026-07-28 era: the SDK's handler for it is made on this first call.
      const client = new Client({ name: 'terminal-check', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/api/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${mcpToken}` } },
        }),
      );
      const { tools } = await client.listTools();
      await client.close();
      // A client that leaves before its answer: a sign-in naming a document it may not fetch is answered after 3 s.
      const leaving = new AbortController();
      const left = fetch(`http://127.0.0.1:${port}/oauth2/authorize?client_id=${encodeURIComponent('https://127.0.0.1/client.json')}`, {
        signal: leaving.signal,
      }).catch(() => 'left');
      setTimeout(() => leaving.abort(), 300);
      await waitFor(run, accessLine('GET', '/api/agents', '200'));
      await waitFor(run, accessLine('POST', '/api/mcp', '200'));
      await waitFor(run, accessLine('GET', '/oauth2/authorize', '-', '[0-9a-f-]{36}', ' \\(the client left before the answer\\)'));

      const output = run.output();
      const bannerToken = /^ {2}contoso: (\S+)$/m.exec(output)?.[1];
      const withBannerToken = await fetch(`http://127.0.0.1:${port}/api/agents`, { headers: { Authorization: `Bearer ${bannerToken}` } });
      expect(tools).toHaveLength(2);
      expect(await left).toBe('left');
      expect(output).not.toMatch(accessLine('GET', '/oauth2/authorize', '200'));
      expect(output.trimStart().startsWith('Endpoint read service (local)')).toBe(true);
      expect(output).toContain(`Tokens for the tenants of ${fleet} (valid one hour;`);
      expect(withBannerToken.status).toBe(200);
      expect(output).toContain(`npm run -s token -- --tenant contoso)" http://localhost:${port}/api/agents`);
      expect(output.indexOf('created tables')).toBeGreaterThan(output.indexOf('Stop with Ctrl-C'));
      expect(requestId).toBeDefined(); // else the line below would take any request id
      // The first request started the authorizer's first instance: its init time is on the line.
      expect(output).toMatch(accessLine('GET', '/api/agents', '401', requestId!, ' \\(authorizer cold start, Init Duration \\d+ ms\\)'));
      expect(output).toMatch(
        accessLine('GET', '/api/agents', '200', '[0-9a-f-]{36}', ' \\(inventory cold start, Init Duration \\d+ ms\\)'),
      );
      // After the banner: the store's two lines, then access lines only.
      const afterBanner = output.slice(output.indexOf('Stop with Ctrl-C')).split('\n').slice(1).filter(Boolean);
      expect(
        afterBanner.filter((line) => !/^(created tables: |seeded )/.test(line) && !accessLine('[A-Z]+', '\\S+', '(?:\\d{3}|-)').test(line)),
      ).toEqual([]);
      expect(output).not.toContain('{"level"');
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }, 120_000);
});
