/**
 * `npm run token -- --tenant T [--sub S] [--groups G1,G2] [--scope "A B"] [--expires-in SECONDS] [--audience A | --mcp | --as-broker]`
 * Prints one bearer token signed by the local issuer, and nothing else:
 * - by default for the inventory (JWT_AUDIENCE);
 * - `--mcp`: for the MCP resource (MCP_AUDIENCE), what an MCP client sends to POST /api/mcp;
 * - `--as-broker`: the token the local MCP broker obtains for that user by token exchange: the
 *   observations audience, the broker as actor (`act.sub`), five minutes unless --expires-in says;
 * - `--audience A`: any audience.
 * `--groups emea,servers` gives a scoped token: the endpoint scope claim (ENDPOINT_SCOPE_CLAIM,
 * default `endpoint_groups`) as the JSON array `["emea","servers"]`; `--groups '*'` sees every
 * endpoint. With `--as-broker` the claim is carried as the token exchange carries it.
 * The token carries the scope its door asks for (`scope`: REQUIRED_SCOPE, `endpoints:read` by
 * default; with `--as-broker` the observations operation's, `observations:read`); `--scope "a b"`
 * gives it these scopes instead, and `--scope ''` none.
 * A negative --expires-in gives an expired token; `--tenant ''` gives a token without the tenant claim.
 */
import '../infra/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
import { parseArgs } from 'node:util';
import { isGroupName, MAX_GROUP_NAME_CHARACTERS } from '../lib/data-format/index.js';
import { refuseBadSettings } from './cli.js';
import { localIssuer } from './issuer.js';
import { readStackConfig, readStackPorts } from './settings.js';
import { brokerTokenFor, EXCHANGED_TOKEN_SECONDS } from './token-exchange.js';

// The stack's configuration, as `npm start` reads it: the issuer on PORT (or JWT_ISSUER), the audiences and claims it signs.
const cfg = refuseBadSettings('token', () => readStackConfig(process.env, readStackPorts(process.env).port));

const usage =
  'usage: npm run token -- --tenant T [--sub S] [--groups G1,G2] [--scope "A B"] [--expires-in SECONDS] [--audience A | --mcp | --as-broker]';

try {
  // `--expires-in -60` must read as a negative number, not as another option.
  const args = process.argv
    .slice(2)
    .flatMap((arg, i, all) =>
      arg === '--expires-in' && /^-[0-9]+$/.test(all[i + 1] ?? '')
        ? []
        : i > 0 && all[i - 1] === '--expires-in' && /^-[0-9]+$/.test(arg)
          ? [`--expires-in=${arg}`]
          : [arg],
    );
  const { values } = parseArgs({
    args,
    options: {
      tenant: { type: 'string' },
      sub: { type: 'string', default: 'local-user' },
      groups: { type: 'string' },
      scope: { type: 'string' },
      'expires-in': { type: 'string' },
      audience: { type: 'string' },
      mcp: { type: 'boolean', default: false },
      'as-broker': { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.tenant === undefined) throw new Error('--tenant is required');
  if ([values.audience !== undefined, values.mcp, values['as-broker']].filter(Boolean).length > 1) {
    throw new Error('give at most one of --audience, --mcp and --as-broker');
  }
  const expiresIn = Number(values['expires-in'] ?? (values['as-broker'] ? EXCHANGED_TOKEN_SECONDS : 3600));
  if (!Number.isInteger(expiresIn)) throw new Error('--expires-in must be a whole number of seconds');
  const groups = values.groups?.split(',').map((g) => g.trim());
  if (groups && (groups.length === 0 || !groups.every(isGroupName))) {
    throw new Error(
      `--groups takes endpoint group names separated by commas, each 1 to ${MAX_GROUP_NAME_CHARACTERS} characters (or '*' for all)`,
    );
  }
  // The scope the token's door asks for, unless --scope names others ('' : none).
  const asked = values.scope
    ?.split(/\s+/)
    .filter((scope) => scope !== '')
    .join(' ');
  const scope = values.scope !== undefined ? asked || undefined : values['as-broker'] ? cfg.observationsScope : cfg.requiredScope;
  const issuer = await localIssuer();
  const tenant = values.tenant === '' ? undefined : values.tenant;
  let token: string;
  if (values['as-broker']) {
    // Exactly what the token endpoint issues to the local broker for this user (local/token-exchange.ts).
    token = await brokerTokenFor(
      issuer,
      {
        issuer: cfg.jwtIssuer,
        tenantClaim: cfg.tenantClaim,
        scopeClaim: cfg.scopeClaim,
        clientId: cfg.brokerClientId,
        audience: cfg.observationsAudience,
        lifetimeSeconds: expiresIn,
        scope,
      },
      { subject: values.sub, tenant, groups },
    );
  } else {
    token = await issuer.sign({
      issuer: cfg.jwtIssuer,
      audience: values.audience ?? (values.mcp ? cfg.mcpAudience : cfg.jwtAudience),
      tenant,
      tenantClaim: cfg.tenantClaim,
      subject: values.sub,
      expiresInSeconds: expiresIn,
      scope,
      ...(groups ? { extra: { [cfg.scopeClaim]: groups } } : {}),
    });
  }
  process.stdout.write(`${token}\n`);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${usage}\n`);
  process.exit(2);
}
