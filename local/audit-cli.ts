/**
 * `npm run audit -- --tenant T`: prints that tenant's audit items, oldest first, one JSON object a line
 * with every attribute the service wrote (docs/data-format.md: who, what, why, the ticket, and where
 * the reason and the ticket came from); none: a note on stderr that says where it looked.
 * `--no-tenant` prints the items of authenticated requests whose token carried no tenant.
 * Reads DYNAMODB_ENDPOINT (default: the local engine on DYNAMODB_PORT, 8000) and AUDIT_TABLE.
 * Exit 2 with the usage for bad arguments; exit 1 with what to do when the store cannot be read.
 */
import '../infra/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
import { parseArgs } from 'node:util';
import { refuseBadSettings } from './cli.js';
import { readCliSettings } from './settings.js';

const usage = 'usage: npm run audit -- --tenant T   (or --no-tenant)';

let tenant: string | null;
try {
  const { values } = parseArgs({ options: { tenant: { type: 'string' }, 'no-tenant': { type: 'boolean', default: false } }, strict: true });
  if (values.tenant === undefined && !values['no-tenant']) throw new Error('--tenant T (or --no-tenant) is required');
  tenant = values['no-tenant'] ? null : (values.tenant as string);
} catch (error) {
  process.stderr.write(`audit: ${(error as Error).message}\n${usage}\n`);
  process.exit(2);
}

const { cfg, endpoint } = refuseBadSettings('audit', () => readCliSettings(process.env));
const [{ storeClient }, { auditItemsOf }] = await Promise.all([import('./store-client.js'), import('./audit-items.js')]);
const db = storeClient(endpoint, cfg);
try {
  const items = await auditItemsOf(db, cfg.auditTable, tenant);
  for (const item of items) process.stdout.write(`${JSON.stringify(item)}\n`);
  // Silence would leave a newcomer guessing whether it looked at all; stderr keeps `| jq` clean.
  if (items.length === 0) {
    const whose = tenant === null ? 'of requests whose token carried no tenant' : `for tenant ${JSON.stringify(tenant)}`;
    process.stderr.write(
      `audit: no audit items ${whose} in ${cfg.auditTable} at ${endpoint} yet; each request to the private door (GET /api/mcp/endpoint, which the MCP observations tool calls) writes one.\n`,
    );
  }
} catch (error) {
  const e = error as Error & { code?: string };
  const unreachable = e.name === 'TimeoutError' || ['ECONNREFUSED', 'ECONNRESET'].includes(e.code ?? '') || /ECONNREFUSED/.test(e.message);
  const hint = unreachable
    ? `nothing answers at ${endpoint}. Is \`npm start\` running? If it runs on another engine port, give it here too: DYNAMODB_PORT=<port> npm run audit -- --tenant T (or DYNAMODB_ENDPOINT=<url>).`
    : e.name === 'ResourceNotFoundException'
      ? `the audit table ${cfg.auditTable} does not exist at ${endpoint}; start the stack (\`npm start\`) or set AUDIT_TABLE.`
      : `${e.name}: ${e.message}`;
  process.stderr.write(`audit failed: ${hint}\n`);
  process.exit(1);
}
