/**
 * What the CLIs share: loading the service's modules, whose configuration is parsed when they load
 * (lib/config.ts), so that a bad variable ends the CLI with its one sentence rather than a stack trace.
 */

/** Runs `load` (the CLI's imports of the service's modules); a bad variable ends the CLI: `<cli>: <sentence>`, exit 2. */
export async function loadOrRefuse<T>(cli: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as Error | undefined)?.name !== 'ConfigError') throw error;
    process.stderr.write(`${cli}: ${(error as Error).message}\n`);
    process.exit(2);
  }
}
