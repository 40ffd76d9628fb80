/**
 * `npm run audit -- --tenant T`: prints that tenant's audit items, oldest first, one JSON object a line.
 * `--no-tenant` prints the items of authenticated requests whose token carried no tenant.
 * Reads DYNAMODB_ENDPOINT (default: the local engine on DYNAMODB_PORT, 8000) and AUDIT_TABLE.
 */
import './node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (README, Node versions)
import { parseArgs } from 'node:util';
import { config } from '../../lib/config.js';
import { listAuditItems } from '../../lib/store/audit.js';
import { dynamo } from '../../lib/store/client.js';

try {
  const { values } = parseArgs({ options: { tenant: { type: 'string' }, 'no-tenant': { type: 'boolean', default: false } }, strict: true });
  if (values.tenant === undefined && !values['no-tenant']) throw new Error('--tenant T (or --no-tenant) is required');
  process.env.DYNAMODB_ENDPOINT ||= `http://127.0.0.1:${process.env.DYNAMODB_PORT ?? 8000}`;
  const items = await listAuditItems(dynamo(), config().auditTable, values['no-tenant'] ? null : (values.tenant as string));
  for (const item of items) process.stdout.write(`${JSON.stringify(item)}\n`);
} catch (error) {
  process.stderr.write(`audit failed: ${(error as Error).message}\nusage: npm run audit -- --tenant T\n`);
  process.exit(2);
}
