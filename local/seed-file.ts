import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type * as z from 'zod';
import { Fleet, type ParsedFleet } from './fleet.js';

/**
 * Reading a fleet file for `SEED=FILE` and `npm run seed -- --file`: a missing file, bad JSON or an
 * invalid fleet is one clear sentence naming the file and, for an invalid fleet, where and which
 * rule (`tenants[0].agents[1].arch: required`), never a stack trace or a validator's dump.
 */

export class FleetFileError extends Error {
  override name = 'FleetFileError';
}

/** `tenants[0].agents[1].arch` from a validator's path. */
function where(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, step) => (typeof step === 'number' ? `${out}[${step}]` : out === '' ? String(step) : `${out}.${String(step)}`),
    '',
  );
}

function rule(issue: z.core.$ZodIssue): string {
  // Parsed with reportInput, so an issue carries what it judged: a missing field's input is undefined.
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'required';
  if (issue.code === 'unrecognized_keys')
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
  return issue.message.replace(/^Invalid input: /, '');
}

/** The problems of an invalid fleet, one `path: rule` each (the first `max`). */
function describeFleetProblems(error: z.ZodError, max = 5): string {
  const lines = error.issues.slice(0, max).map((issue) => `${where(issue.path) || '(the file)'}: ${rule(issue)}`);
  const more = error.issues.length > max ? `; and ${error.issues.length - max} more` : '';
  return `${lines.join('; ')}${more}`;
}

/**
 * A path a user typed (SEED, --file, DATA_DIR), resolved from the folder they ran the command in:
 * npm runs every script from the project root and says where the user was in INIT_CWD.
 */
export function userPath(path: string): string {
  return resolve(process.env.INIT_CWD || process.cwd(), path);
}

/**
 * Reads and validates a fleet file (its path resolved by userPath, and named so in every message):
 * the fleet, ready for `writeFleet` (validated here, once).
 */
export async function readFleetFile(typed: string): Promise<ParsedFleet> {
  const path = userPath(typed);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new FleetFileError(
      code === 'ENOENT' ? `there is no fleet file at ${path}` : `the fleet file ${path} cannot be read (${code ?? 'error'})`,
    );
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    throw new FleetFileError(`the fleet file ${path} is not JSON (${(error as Error).message})`);
  }
  const parsed = Fleet.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new FleetFileError(`the fleet file ${path} is not a valid fleet: ${describeFleetProblems(parsed.error)}`);
  return parsed.data;
}
