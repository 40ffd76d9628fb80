/**
 * The embedded engine (dynalite) in a process of its own, as DynamoDB is a remote service: its CPU
 * is not the measured process's. Prints its endpoint, then serves until SIGTERM.
 */
import { startEmbeddedEngine } from '../local/engine.js';

const engine = await startEmbeddedEngine({ port: 0 });
process.stdout.write(`${engine.endpoint}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    void engine.close().then(() => process.exit(0));
  });
}
