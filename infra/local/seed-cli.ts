/**
 * `npm run seed -- --file FLEET.json`
 * `npm run seed -- --generate --tenant T --agents N [--samples M]`
 * Writes to DYNAMODB_ENDPOINT (default: the local engine on DYNAMODB_PORT, 8000), creating missing
 * tables. Idempotent: the same fleet loaded twice leaves the same records.
 */
import './node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (README, Node versions)
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { config } from '../../lib/config.js';
import { dynamo } from '../../lib/store/client.js';
import { ensureTables } from '../../lib/store/tables.js';
import { generatedFleet } from './demo.js';
import { loadFleet } from './fleet.js';

const usage = [
  'usage: npm run seed -- --file FLEET.json',
  '       npm run seed -- --generate --tenant T --agents N [--samples M]',
].join('\n');

function wholeNumber(value: string | undefined, name: string, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (value === undefined || !/^[0-9]+$/.test(value)) throw new Error(`${name} must be a whole number`);
  return Number(value);
}

try {
  const { values } = parseArgs({
    options: {
      file: { type: 'string' },
      generate: { type: 'boolean', default: false },
      tenant: { type: 'string' },
      agents: { type: 'string' },
      samples: { type: 'string' },
    },
    strict: true,
  });
  process.env.DYNAMODB_ENDPOINT ||= `http://127.0.0.1:${process.env.DYNAMODB_PORT ?? 8000}`;
  let fleet: unknown;
  if (values.file && !values.generate) {
    fleet = JSON.parse(await readFile(values.file, 'utf8'));
  } else if (values.generate && !values.file) {
    if (!values.tenant) throw new Error('--generate needs --tenant');
    fleet = generatedFleet(values.tenant, wholeNumber(values.agents, '--agents'), wholeNumber(values.samples, '--samples', 0), new Date());
  } else {
    throw new Error('give either --file or --generate');
  }
  const cfg = config();
  await ensureTables(dynamo(), cfg);
  const loaded = await loadFleet(dynamo(), cfg, fleet, cfg.sampleRetentionDays);
  process.stdout.write(`seeded ${loaded.tenants} tenant(s), ${loaded.agents} agent(s), ${loaded.samples} sample(s) into ${cfg.dynamoEndpoint}\n`);
} catch (error) {
  const e = error as Error;
  process.stderr.write(`seed failed: ${e.name === 'ZodError' ? 'the fleet file is not valid: ' : ''}${e.message}\n${usage}\n`);
  process.exit(2);
}
