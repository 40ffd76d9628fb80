/**
 * `npm run seed -- --file FLEET.json`
 * `npm run seed -- --generate --tenant T --agents N [--samples M]`
 * Writes to DYNAMODB_ENDPOINT (default: the local engine on DYNAMODB_PORT, 8000), in BatchWriteItems
 * of 25 (several in flight, unprocessed items retried with backoff), with a progress line on
 * stderr. Idempotent: the same fleet loaded twice leaves the same records. Into a local engine it
 * creates missing tables; into AWS (a deployed stage's tables, with the caller's AWS credentials:
 * docs/data-format.md) it writes into DATA_TABLE and creates nothing.
 * `--generate` writes a realistic tenant (local/generator.ts: the data `npm run bench` uses).
 */
import '../infra/node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (docs/decisions.md, Node versions)
import { parseArgs } from 'node:util';
import { refuseBadSettings } from './cli.js';
import { readCliSettings } from './settings.js';

const usage = ['usage: npm run seed -- --file FLEET.json', '       npm run seed -- --generate --tenant T --agents N [--samples M]'].join(
  '\n',
);

function wholeNumber(value: string | undefined, name: string, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (value === undefined || !/^[0-9]+$/.test(value)) throw new Error(`${name} must be a whole number`);
  return Number(value);
}

/**
 * A progress line on stderr: rewritten in place on a terminal, a line every few seconds
 * otherwise (logs, CI), and always a last line with the total and the rate.
 */
function progress(total: number): { update(written: number): void; done(written: number): void } {
  const started = performance.now();
  const tty = process.stderr.isTTY === true;
  let lastPrinted = 0;
  const line = (written: number): string => {
    const seconds = (performance.now() - started) / 1000;
    const rate = seconds > 0 ? Math.round(written / seconds) : 0;
    const share = total > 0 ? ` (${Math.floor((written / total) * 100)}%)` : '';
    return `seeding: ${written.toLocaleString('en')} of ${total.toLocaleString('en')} items${share}, ${rate.toLocaleString('en')} items/s, ${seconds.toFixed(1)} s`;
  };
  return {
    update(written) {
      const now = performance.now();
      if (now - lastPrinted < (tty ? 200 : 5_000)) return;
      lastPrinted = now;
      process.stderr.write(tty ? `\r${line(written)}\u001b[K` : `${line(written)}\n`);
    },
    done(written) {
      process.stderr.write(tty ? `\r${line(written)}\u001b[K\n` : `${line(written)}\n`);
    },
  };
}

// A bad variable is refused before the SDK and the rest load.
const { cfg, endpoint } = refuseBadSettings('seed', () => readCliSettings(process.env));
const [
  { isAwsEndpoint, storeClient },
  { ensureTables },
  { fleetItemCount, writeFleet, writeTenantAgents },
  { realisticAgents },
  { readFleetFile },
] = await Promise.all([
  import('./store-client.js'),
  import('./tables.js'),
  import('./fleet.js'),
  import('./generator.js'),
  import('./seed-file.js'),
]);

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
  const db = storeClient(endpoint, cfg);
  const local = !isAwsEndpoint(endpoint);
  let summary: { tenants: number; agents: number; samples: number };
  if (values.file && !values.generate) {
    const fleet = await readFleetFile(values.file);
    if (local) await ensureTables(db, cfg);
    const bar = progress(fleetItemCount(fleet));
    let written = 0;
    summary = await writeFleet(db, cfg, fleet, cfg.sampleRetentionDays, {
      onProgress: (n) => {
        written = n;
        bar.update(n);
      },
    });
    bar.done(written);
  } else if (values.generate && !values.file) {
    if (!values.tenant) throw new Error('--generate needs --tenant');
    const agents = wholeNumber(values.agents, '--agents');
    const samples = wholeNumber(values.samples, '--samples', 0);
    if (local) await ensureTables(db, cfg);
    // The same agents without samples, to count the records before writing (a fast pass).
    let records = 0;
    for (const a of realisticAgents(values.tenant, agents, { now: new Date() }))
      records += (a.durable === false ? 0 : 1) + (a.connection ? 1 : 0);
    const bar = progress(records + agents * samples);
    const written = await writeTenantAgents(
      db,
      cfg,
      values.tenant,
      realisticAgents(values.tenant, agents, { now: new Date(), samples }),
      cfg.sampleRetentionDays,
      {
        onProgress: (n) => bar.update(n),
      },
    );
    bar.done(written.items);
    summary = { tenants: 1, agents: written.agents, samples: written.samples };
  } else {
    throw new Error('give either --file or --generate');
  }
  process.stdout.write(
    `seeded ${summary.tenants} tenant(s), ${summary.agents} agent(s), ${summary.samples} sample(s) into ${cfg.dataTable} at ${endpoint}\n`,
  );
} catch (error) {
  const e = error as Error;
  // The usage line only when the arguments were wrong, not when the file or the store was.
  const aboutArguments =
    e instanceof TypeError || /^(give either|--)/.test(e.message) || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`seed failed: ${e.message}\n${aboutArguments ? `${usage}\n` : ''}`);
  process.exit(2);
}
