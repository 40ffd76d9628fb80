import '../infra/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
/**
 * `npm start`: the whole service on this machine, on its embedded defaults (docs/design.md §7).
 * Environment: PORT, HOST, PRIVATE_PORT, DYNAMODB_PORT, DYNAMODB_ENDPOINT, DATA_DIR, SEED and the
 * service's own variables (README, Configuration); what the stack reads of them is validated before
 * anything starts (local/settings.ts), the rest by an init of each function given them, before
 * it serves. SEED_LIVE=true
 * moves a fleet file's times to now and keeps it reporting (local/fleet-time.ts). Metric lines
 * (EMF) are off unless POWERTOOLS_METRICS_DISABLED=false asks for them; the handlers' log records
 * below WARN unless POWERTOOLS_LOG_LEVEL=INFO (or DEBUG) asks for them.
 *
 * It stops, and leaves no process behind, on SIGINT, SIGTERM or SIGHUP, and when the process that
 * started it goes away (npm does not pass SIGHUP on). A bad variable, a port in use or a bad fleet
 * file stops the start with one sentence and exit code 2.
 */
import { refuseBadSettings } from './cli.js';
import { readStackConfig, readStackPorts, STACK_DEFAULTS, StackConfigError } from './settings.js';
import type { LocalStack } from './stack.js';

function fail(message: string): never {
  process.stderr.write(`npm start: ${message}\n`);
  process.exit(2);
}

/** The variables a CLI needs to talk to this stack when they are not the defaults, as a shell prefix. */
function prefix(vars: Record<string, string | number | undefined>): string {
  const set = Object.entries(vars).filter(([, v]) => v !== undefined);
  return set.map(([k, v]) => `${k}=${String(v)} `).join('');
}

// EMF metric lines and the handlers' INFO records are for CloudWatch: here the terminal shows the
// banner and one access line per request, with warnings and errors, unless asked for more (README,
// Configuration). On AWS nothing sets these variables: metrics on, logs at INFO.
const env: NodeJS.ProcessEnv = { POWERTOOLS_METRICS_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'WARN', ...process.env };
let stack: LocalStack | undefined;
let stopping = false;

const shutdown = (why: string): void => {
  if (stopping) return;
  stopping = true;
  if (why !== 'SIGINT') process.stdout.write(`stopping (${why})\n`);
  const done = (): never => process.exit(0);
  // A stop that hangs must not keep the ports: leave after a few seconds whatever happens.
  setTimeout(done, 3_000).unref();
  void (stack?.stop() ?? Promise.resolve()).then(done, done);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) shutdown('the process that started npm start is gone');
}, 500).unref();

// The banner (URLs and tokens) is the first thing printed: what the stack says while it starts
// (tables created, seeded) waits for it, and every line after it (one per request) follows it.
const held: string[] = [];
let bannerOut = false;
const say = (line: string): void => {
  if (bannerOut) process.stdout.write(`${line}\n`);
  else held.push(line);
};

// A bad variable of those the stack reads is refused here, with its one sentence, before anything of the stack loads.
const checked = refuseBadSettings('npm start', () => {
  const ports = readStackPorts(env);
  readStackConfig(env, ports.port);
  return ports;
});
const seedLive = env.SEED_LIVE?.trim() ?? '';
// The public listener's address: this machine only unless HOST opts in to another (the banner then says so).
const host = env.HOST?.trim() || '127.0.0.1';
if (!['', 'true', 'false'].includes(seedLive)) fail(`SEED_LIVE must be true or false, not ${JSON.stringify(seedLive.slice(0, 20))}.`);

// The stack (handlers, SDKs, engine) loads once the variables are known to be good: a bad one is
// refused without loading any of it.
const [{ startLocalStack, StartError }, { FleetFileError, userPath }, { previewUrl }, { isLoopbackAddress }] = await Promise.all([
  import('./stack.js'),
  import('./seed-file.js'),
  import('./mcp-app-preview.js'),
  import('./own-address.js'),
]);

try {
  stack = await startLocalStack({
    env,
    port: checked.port,
    host,
    privatePort: checked.privatePort,
    dynamoPort: checked.dynamoPort,
    dynamoEndpoint: checked.dynamoEndpoint,
    dataDir: env.DATA_DIR ? userPath(env.DATA_DIR) : undefined,
    seed: env.SEED || 'demo',
    // Bundles already built (`npm run build`'s dist/), run as they are; by default the stack builds and watches.
    bundlesDir: env.LAMBDA_BUNDLES ? userPath(env.LAMBDA_BUNDLES) : undefined,
    say,
    seedLive: seedLive === 'true',
    checkInits: true,
  });
} catch (error) {
  if (error instanceof StartError || error instanceof StackConfigError) fail(error.message);
  if (error instanceof FleetFileError) fail(`SEED: ${error.message} (SEED is demo, none, or the path of a fleet file).`);
  throw error;
}
if (stopping) process.exit(0);
const cfg = stack.config;
const publicPort = Number(new URL(stack.publicUrl).port);
// What `npm run token` and `npm run audit` need to reach this stack, when it is not on the defaults.
const tokenEnv = prefix({ PORT: publicPort === STACK_DEFAULTS.port ? undefined : publicPort, JWT_ISSUER: env.JWT_ISSUER || undefined });
const auditEnv = prefix(
  checked.dynamoEndpoint
    ? { DYNAMODB_ENDPOINT: checked.dynamoEndpoint }
    : { DYNAMODB_PORT: checked.dynamoPort === STACK_DEFAULTS.dynamoPort ? undefined : new URL(stack.dynamoEndpoint).port },
);

const lines = [
  '',
  'Endpoint read service (local)',
  ...(isLoopbackAddress(host)
    ? []
    : [
        `  warning: HOST=${host}: the public listener is open to other machines. It still answers only requests that name it as ${new URL(stack.publicUrl).host} (or PUBLIC_URL's host), and its sign-in has no password: open it only on a network you trust.`,
      ]),
  `  public   ${stack.publicUrl}/api/agents            (REST API emulated, token authorizer included; keys found through ${stack.publicUrl}/.well-known/openid-configuration)`,
  `  mcp      ${stack.publicUrl}/api/mcp               (MCP Streamable HTTP, stateless; metadata at ${stack.publicUrl}/.well-known/oauth-protected-resource/api/mcp)`,
  `  issuer   ${cfg.jwtIssuer}                  (OAuth sign-in for MCP clients, development only: ${stack.publicUrl}/.well-known/oauth-authorization-server)`,
  `  private  ${stack.privateUrl}/api/mcp/endpoint   (loopback only: the MCP broker's hop)`,
  `  dynamodb ${stack.dynamoEndpoint}${env.DYNAMODB_ENDPOINT ? ' (external)' : ` (embedded dynalite${env.DATA_DIR ? `, on disk in ${userPath(env.DATA_DIR)})` : ', in memory)'}`}`,
  '',
];
/** A bearer token from the stack's issuer, for the inventory unless told otherwise; valid one hour. */
const tokenFor = (tenant: string, audience = cfg.jwtAudience): Promise<string> =>
  stack.issuer.sign({
    issuer: cfg.jwtIssuer,
    audience,
    tenant,
    tenantClaim: cfg.tenantClaim,
    subject: `demo-user@${tenant}`,
    scope: cfg.requiredScope,
  });
// Tokens for a few tenants of the seed, and the command that makes one for any of them.
const TOKENS_SHOWN = 3;
const tenants = stack.tenants;
const [first] = tenants;
if (first !== undefined) {
  const seed = env.SEED || 'demo';
  const whose = seed === 'demo' ? 'the demo tenants' : `the tenants of ${userPath(seed)}`;
  lines.push(`Tokens for ${whose} (valid one hour; \`${tokenEnv}npm run -s token -- --tenant T\` makes more):`);
  for (const tenant of tenants.slice(0, TOKENS_SHOWN)) lines.push(`  ${tenant}: ${await tokenFor(tenant)}`, '');
  if (tenants.length > TOKENS_SHOWN) {
    const more = tenants.slice(TOKENS_SHOWN);
    const named = more.slice(0, 10).join(', ') + (more.length > 10 ? `, and ${more.length - 10} more` : '');
    lines.push(`  Also in the seed: ${named}.`, '');
  }
  lines.push(
    `MCP: connect a client to ${stack.publicUrl}/api/mcp with this header (tenant ${first}, one hour; \`${tokenEnv}npm run -s token -- --tenant T --mcp\` makes more):`,
    `  Authorization: Bearer ${await tokenFor(first, cfg.mcpAudience)}`,
    '',
  );
  const view =
    seed === 'demo'
      ? `the observations view of ac-002 drawn as an MCP host draws it: ${previewUrl(stack.publicUrl, 'ac-002')}`
      : `the endpoints of ${first} drawn as an MCP host draws them: ${stack.publicUrl}/preview/list_endpoints?tenant=${encodeURIComponent(first)}`;
  lines.push(`MCP App: ${view}`, '');
  lines.push(`Try: curl -H "Authorization: Bearer $(${tokenEnv}npm run -s token -- --tenant ${first})" ${stack.publicUrl}/api/agents`);
  lines.push(`     ${auditEnv}npm run audit -- --tenant ${first}`, '');
}
lines.push('Stop with Ctrl-C (or SIGTERM, SIGHUP). One line per request follows: method, path, status, time, request id.', '');
process.stdout.write(`${lines.join('\n')}\n`);
bannerOut = true;
for (const line of held.splice(0)) say(line);
