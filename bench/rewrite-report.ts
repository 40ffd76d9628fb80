/**
 * `npx tsx bench/rewrite-report.ts [results.json]`: renders docs/performance.md's figures, the README's summary,
 * bench/results.svg and the targets and sizing again from a results file (a full run's by default),
 * after a change to bench/report.ts or bench/targets.ts, without measuring again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../infra/build.js';
import { type BenchResults, writeReport } from './report.js';
import { sizing, targets } from './targets.js';

const file = process.argv[2] ?? join(ROOT, 'bench', 'results.json');
const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
results.targets = targets(results);
results.sizing = sizing(results);
writeReport(results, { root: ROOT, quick: results.mode === 'quick' });
for (const t of results.targets) process.stderr.write(`${t.met ? 'ok  ' : 'MISS'} ${t.what}: ${t.measured} (target ${t.target})\n`);
