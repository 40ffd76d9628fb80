import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import { afterAll, describe, it } from 'vitest';
import { AgentInventory } from '../../lib/contract/schemas.js';
import { realisticAgents } from '../../local/generator.js';
import { emptyLocalDir } from '../helpers/local-dir.js';
import { freePort, killStarted, npmStartReady, runCli } from '../helpers/npm-start.js';
import { get } from '../helpers/stack.js';

/** `npm start` and the CLIs a user runs beside it (token, seed, audit), each its own process. */

afterAll(killStarted);

/** The agent ids `npm run seed -- --generate` writes for a tenant (they depend on its name and size only), in listing order. */
function generatedIds(tenant: string, count: number): string[] {
  return [...realisticAgents(tenant, count, { now: new Date() })].map((a) => a.agent_id).sort();
}

const cli = async (script: string, args: string[], env: Record<string, string>): Promise<string> =>
  (await runCli(script, args, env)).stdout;
const cliOutput = runCli;

// Each test starts its own processes (free ports, its own folders): they run at the same time.
describe.concurrent('E2E: the local stack and its CLIs as separate processes', () => {
  // One demo stack for its banner, the three CLIs and an MCP client: seeding the demo is the costly part of a start.
  it("prints commands that work on the ports and issuer it runs with, and serves the demo fleet to its banner's and `npm run token`'s tokens: the inventory, the private hop (the read shows in `npm run audit`), and an MCP client built from the SDK, with no metric lines unless asked", async ({
    expect,
  }) => {
    const [port, dynamoPort] = [String(await freePort()), String(await freePort())];
    const env = {
      LOCAL_DIR: await emptyLocalDir('cli-'),
      JWT_ISSUER: 'https://issuer-under-test.example',
      SEED: 'demo',
      PORT: port,
      DYNAMODB_PORT: dynamoPort,
    };
    // The user's default for metric lines (POWERTOOLS_METRICS_DISABLED unset): off.
    const stack = await npmStartReady({ ...env, POWERTOOLS_METRICS_DISABLED: undefined });
    const bannerToken = /^ {2}acme: (\S+)$/m.exec(stack.output())?.[1];
    // Every token this test needs, minted at once by `npm run token` (the issuer's key exists once the stack is up).
    // The MCP one must be signed for the MCP resource this stack serves, which holds its PORT.
    const [token, brokerToken, emeaToken, emeaBroker, mcpToken, otherScopes, noScope] = (
      await Promise.all([
        cli('token-cli.ts', ['--tenant', 'acme'], env),
        cli('token-cli.ts', ['--tenant', 'acme', '--as-broker'], env),
        cli('token-cli.ts', ['--tenant', 'acme', '--groups', 'emea'], env),
        cli('token-cli.ts', ['--tenant', 'acme', '--groups', 'emea,databases', '--as-broker'], env),
        cli('token-cli.ts', ['--tenant', 'acme', '--mcp'], env),
        cli('token-cli.ts', ['--tenant', 'acme', '--scope', 'openid endpoints:write'], env),
        cli('token-cli.ts', ['--tenant', 'acme', '--scope', ''], env),
      ])
    ).map((out) => out.trim());

    expect(stack.publicUrl).toBe(`http://localhost:${port}`);
    expect(stack.output()).toContain(
      `Try: curl -H "Authorization: Bearer $(PORT=${port} JWT_ISSUER=https://issuer-under-test.example npm run -s token -- --tenant acme)" http://localhost:${port}/api/agents`,
    );
    expect(stack.output()).toContain(`     DYNAMODB_PORT=${dynamoPort} npm run audit -- --tenant acme`);
    expect((await get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${bannerToken}` })).status).toBe(200);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const listed = await get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${token}` });
    expect(listed.status).toBe(200);
    const agents = AgentInventory.parse(JSON.parse(listed.body));
    expect(agents.length).toBeGreaterThanOrEqual(50);
    expect(new Set(agents.map((a) => a.connection_state))).toEqual(new Set(['connected', 'stale', 'disconnected', 'never_connected']));
    // The tokens carry the door's scope unless `--scope` names others, or none.
    expect(decodeJwt(token!).scope).toBe('endpoints:read');
    expect(decodeJwt(brokerToken!).scope).toBe('observations:read');
    expect(decodeJwt(otherScopes!).scope).toBe('openid endpoints:write');
    for (const unscoped of [otherScopes, noScope]) {
      const answer = await get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${unscoped}` });
      expect(answer.status).toBe(403);
      expect(answer.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="endpoints:read"/);
    }
    expect(agents.every((a) => a.agent_id.startsWith('ac-') || a.agent_id.startsWith('ops/'))).toBe(true);

    // The private hop takes only the token the broker gets by exchange: the inventory one passed through is an audited 403.
    const refused = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=ac-001`, {
      Authorization: `Bearer ${token}`,
      'X-Service-Reason': 'checking disk',
    });
    expect(refused.status).toBe(403);
    const read = await get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=ac-001`, {
      Authorization: `Bearer ${brokerToken}`,
      'X-Service-Reason': 'checking disk',
      'X-Service-Attribution-Source': 'reason=person',
    });
    expect(read.status).toBe(200);
    const auditId = read.headers.get('x-audit-id');
    const [acmeAudit, globexAudit] = await Promise.all(
      ['acme', 'globex'].map((tenant) => cliOutput('audit-cli.ts', ['--tenant', tenant], { ...env, DYNAMODB_ENDPOINT: stack.dynamo })),
    );
    // No read of globex yet: nothing on stdout (a pipe to jq stays valid), and a note on stderr rather than silence.
    expect(globexAudit).toEqual({
      stdout: '',
      stderr: `audit: no audit items for tenant "globex" in endpoint-audit at ${stack.dynamo} yet; each request to the private door (GET /api/mcp/endpoint, which the MCP observations tool calls) writes one.\n`,
    });
    const audit = acmeAudit!.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { audit_id: string; reason: string });
    expect(audit.find((i) => i.audit_id === auditId)).toMatchObject({
      reason: 'checking disk',
      reason_source: 'person',
      ticket_source: null,
      broker: 'local-broker',
      subject: 'local-user',
    });

    // `--groups`: a scoped token sees only its groups' endpoints, and the others are unknown to it.
    const emea = AgentInventory.parse(
      JSON.parse((await get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${emeaToken}` })).body),
    ).map((a) => a.agent_id);
    expect(emea).toEqual(agents.map((a) => a.agent_id).filter((id) => /^ac-0(0\d|1\d|2[0-5])$/.test(id) || id === 'ops/db #1'));
    const scopedRead = (agentId: string) =>
      get(`${stack.privateUrl}/api/mcp/endpoint?agent_id=${encodeURIComponent(agentId)}`, {
        Authorization: `Bearer ${emeaBroker}`,
        'X-Service-Reason': 'checking disk',
      });
    expect((await scopedRead('ac-001')).status).toBe(200);
    expect((await scopedRead('ops/db %23 1')).status).toBe(200); // americas, but in databases
    expect((await scopedRead('ac-030')).status).toBe(404);

    const unauthenticated = await get(`${stack.publicUrl}/api/agents`);
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('content-type')).toBe('text/plain; charset=utf-8');

    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.publicUrl}/api/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${mcpToken}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      const result = await client.callTool({ name: 'observations', arguments: { agent_id: 'ac-002', reason: 'disk alert on ac-002' } });

      expect(stack.output()).toContain(`${stack.publicUrl}/api/mcp`);
      expect(tools.map((t) => t.name).sort()).toEqual(['list_endpoints', 'observations']);
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ schema: 'endpoint-dashboard/v1', status: 'warning', endpoint: { id: 'ac-002' } });
    } finally {
      await client.close();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(stack.output()).not.toContain('"_aws"');
  }, 180_000);

  it('seeds a generated tenant idempotently with `npm run seed -- --generate`', async ({ expect }) => {
    const env = { LOCAL_DIR: await emptyLocalDir('cli-'), JWT_ISSUER: 'https://issuer-under-test.example', SEED: 'none' };
    const stack = await npmStartReady(env);
    const seedEnv = { ...env, DYNAMODB_ENDPOINT: stack.dynamo };

    const { stdout: first, stderr: progress } = await cliOutput(
      'seed-cli.ts',
      ['--generate', '--tenant', 'gen', '--agents', '25', '--samples', '3'],
      seedEnv,
    );
    await cli('seed-cli.ts', ['--generate', '--tenant', 'gen', '--agents', '25', '--samples', '3'], seedEnv);
    const dir2 = await mkdtemp(join(tmpdir(), 'fleet-'));
    const fleetFile = join(dir2, 'fleet.json');
    await writeFile(
      fleetFile,
      JSON.stringify({
        tenants: [
          {
            tenant_id: 'filed',
            agents: [
              {
                agent_id: 'f-1',
                hostname: 'h1',
                os: 'linux',
                arch: 'x86_64',
                version: '1',
                samples: [{ observed_at: new Date().toISOString(), cpu: 1 }],
              },
            ],
          },
        ],
      }),
    );
    // `--file` relative to the folder the user ran npm in (npm says it in INIT_CWD), not the project root.
    const fromFile = await cliOutput('seed-cli.ts', ['--file', 'fleet.json'], { ...seedEnv, INIT_CWD: dir2 });
    const token = (await cli('token-cli.ts', ['--tenant', 'gen'], env)).trim();
    const agents = AgentInventory.parse(
      JSON.parse((await get(`${stack.publicUrl}/api/agents`, { Authorization: `Bearer ${token}` })).body),
    );

    expect(first).toContain('seeded 1 tenant(s), 25 agent(s), 75 sample(s)');
    // Every record and sample counted on the progress line (stderr), and the relative file path found.
    expect(progress).toMatch(/^seeding: (\d+) of \1 items \(100%\), [\d,]+ items\/s, [\d.]+ s$/m);
    expect(fromFile.stdout).toContain('seeded 1 tenant(s), 1 agent(s), 1 sample(s)');
    expect(fromFile.stderr).toMatch(/seeding: 2 of 2 items \(100%\)/);
    expect(agents.map((a) => a.agent_id)).toEqual(generatedIds('gen', 25));
    expect(new Set(agents.map((a) => a.connection_state))).toEqual(new Set(['connected', 'stale', 'disconnected', 'never_connected']));
    expect(new Set(agents.map((a) => a.hostname)).size).toBe(25);
  }, 180_000);

  it("keeps the embedded engine's data across restarts with DATA_DIR", async ({ expect }) => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-'));
    const env = {
      LOCAL_DIR: join(dir, 'local'),
      JWT_ISSUER: 'https://issuer-under-test.example',
      SEED: 'none',
      DATA_DIR: join(dir, 'data'),
    };
    const first = await npmStartReady(env);
    await cli('seed-cli.ts', ['--generate', '--tenant', 'kept', '--agents', '3'], { ...env, DYNAMODB_ENDPOINT: first.dynamo });
    first.child.kill('SIGTERM');
    await first.exited;

    const second = await npmStartReady(env);
    const token = (await cli('token-cli.ts', ['--tenant', 'kept'], env)).trim();
    const res = await get(`${second.publicUrl}/api/agents`, { Authorization: `Bearer ${token}` });

    expect(AgentInventory.parse(JSON.parse(res.body)).map((a) => a.agent_id)).toEqual(generatedIds('kept', 3));
  }, 180_000);
});
