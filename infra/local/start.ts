/**
 * `npm start`: the whole service on this machine, on its embedded defaults (DESIGN §7).
 * Environment: PORT, PRIVATE_PORT, DYNAMODB_PORT, DYNAMODB_ENDPOINT, DATA_DIR, SEED.
 */
import './node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (README, Node versions)
import { config } from '../../lib/config.js';
import { DEMO_TENANTS } from './demo.js';
import { startLocalStack } from './stack.js';

const env = { ...process.env };
const stack = await startLocalStack({
  port: Number(env.PORT ?? 3000),
  privatePort: Number(env.PRIVATE_PORT ?? 3001),
  dynamoPort: Number(env.DYNAMODB_PORT ?? 8000),
  dynamoEndpoint: env.DYNAMODB_ENDPOINT || undefined,
  dataDir: env.DATA_DIR || undefined,
  seed: env.SEED || 'demo',
});
const cfg = config();

const lines = [
  '',
  'Endpoint read service (local)',
  `  public   ${stack.publicUrl}/api/agents            (JWT authorizer emulated; JWKS at ${stack.publicUrl}/.well-known/jwks.json)`,
  `  mcp      ${stack.publicUrl}/api/mcp               (MCP Streamable HTTP, stateless; metadata at ${stack.publicUrl}/.well-known/oauth-protected-resource/api/mcp)`,
  `  issuer   ${cfg.jwtIssuer}                  (token exchange at ${stack.publicUrl}/oauth2/token)`,
  `  private  ${stack.privateUrl}/api/mcp/endpoint   (loopback only: the MCP broker's hop)`,
  `  dynamodb ${stack.dynamoEndpoint}${env.DYNAMODB_ENDPOINT ? ' (external)' : ' (embedded dynalite' + (env.DATA_DIR ? `, on disk in ${env.DATA_DIR})` : ', in memory)')}`,
  '',
];
if ((env.SEED || 'demo') === 'demo') {
  lines.push('Tokens for the demo tenants (valid one hour; `npm run token -- --tenant T` for more):');
  for (const tenant of DEMO_TENANTS) {
    const token = await stack.issuer.sign({
      issuer: cfg.jwtIssuer,
      audience: cfg.jwtAudience,
      tenant,
      tenantClaim: cfg.tenantClaim,
      subject: `demo-user@${tenant}`,
    });
    lines.push(`  ${tenant}: ${token}`, '');
  }
  const mcpToken = await stack.issuer.sign({
    issuer: cfg.jwtIssuer,
    audience: cfg.mcpAudience,
    tenant: 'acme',
    tenantClaim: cfg.tenantClaim,
    subject: 'demo-user@acme',
  });
  lines.push(
    `MCP: connect a client to ${stack.publicUrl}/api/mcp with this header (tenant acme, one hour; \`npm run token -- --tenant T --mcp\` for more):`,
    `  Authorization: Bearer ${mcpToken}`,
    '',
  );
  lines.push(`Try: curl -H "Authorization: Bearer $(npm run -s token -- --tenant acme)" ${stack.publicUrl}/api/agents`, '');
}
process.stdout.write(`${lines.join('\n')}\n`);

const shutdown = (): void => {
  void stack.stop().then(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
