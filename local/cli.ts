import { StackConfigError } from './settings.js';

/**
 * What the CLIs share: reading the stack's configuration (local/settings.ts) as `npm start`
 * reads it, so that a bad variable ends the CLI with its one sentence rather than a stack trace.
 */

/** Runs `read`; a bad variable ends the CLI: `<cli>: <sentence>`, exit 2. */
export function refuseBadSettings<T>(cli: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof StackConfigError)) throw error;
    process.stderr.write(`${cli}: ${error.message}\n`);
    process.exit(2);
  }
}
