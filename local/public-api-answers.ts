import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../infra/build.js';
import type { GatewayAnswer } from './listener-io.js';

/**
 * What API Gateway answers itself at the public REST API, as a stage configures it: its gateway
 * responses (the refusals and failures it words before or instead of a function) and its static
 * answers (the MOCK methods of the RFC 9728 documents and the preflights). The deploy code makes
 * them (infra/gateway-responses.ts, infra/static-answers.ts, from the service's own lib/); the
 * stack takes them from that code's output, never by importing it: infra/public-api-answers-cli.ts
 * runs in a process of its own with the environments of the functions behind the doors (the token
 * authorizer's and the MCP function's), as osls runs
 * infra/package-resources-cli.ts for the template. A process boundary is not an import, so the
 * stack's import closure keeps to the data format (test/unit/stack-boundary.test.ts), and what it
 * answers is what the template says, made by the same code.
 */

/**
 * The gateway responses the local gateway answers with (API Gateway's response types). The answers'
 * shape here is the CLI's output read back, a copy of infra's types: test/unit/boundary-copies.test.ts
 * holds the two together (every type here answered, every method's shape assignable).
 */
export const GATEWAY_RESPONSE_TYPES = Object.freeze([
  'UNAUTHORIZED',
  'ACCESS_DENIED',
  'AUTHORIZER_FAILURE',
  'AUTHORIZER_CONFIGURATION_ERROR',
  'THROTTLED',
  'INVALID_API_KEY',
  'INTEGRATION_TIMEOUT',
  'INTEGRATION_FAILURE',
  'MISSING_AUTHENTICATION_TOKEN',
  'DEFAULT_4XX',
  'DEFAULT_5XX',
] as const);
export type GatewayResponseType = (typeof GATEWAY_RESPONSE_TYPES)[number];

/** One gateway response as the template has it: its status (none for the two defaults), its one sentence, headers and body template. */
interface GatewayResponseAnswer {
  status?: number;
  sentence: string;
  /** Every header but `Access-Control-Allow-Origin`, which the local gateway names per request (below). */
  headers: Record<string, string>;
  /** The body with API Gateway's `$context.<name>` variables (`requestId`, `authorizer.<key>`) still in it. */
  body: string;
}

/** A MOCK method as the template has it (`AWS::ApiGateway::Method` properties), the parts an integration is run from. */
export interface MockMethod {
  HttpMethod: string;
  Integration: {
    RequestTemplates: Record<string, string>;
    IntegrationResponses: Array<{
      StatusCode: string;
      ResponseParameters: Record<string, string>;
      ResponseTemplates: Record<string, string>;
    }>;
  };
}

export interface PublicApiAnswers {
  gatewayResponses: Partial<Record<GatewayResponseType, GatewayResponseAnswer>>;
  /** The routes API Gateway answers with a MOCK integration, with their methods. */
  staticAnswers: Array<{ path: string; method: MockMethod }>;
  /** The browser origins the MCP door admits: the ones whose pages may read a gateway response here. */
  admittedOrigins: string[];
  /** The doors' variables they are made from: the answers change only when one of these does. */
  variables: string[];
}

/** The answers could not be made: the MCP function's configuration is refused, or the process failed. */
export class PublicApiAnswersError extends Error {
  override name = 'PublicApiAnswersError';
}

const CLI = join('infra', 'public-api-answers-cli.ts');
/** A stuck process is cut after this; making the answers takes well under a second. */
const CLI_TIMEOUT_MS = 60_000;

/**
 * The public API's answers for the doors' environment `variables`, from
 * infra/public-api-answers-cli.ts run under tsx in the project's folder, with nothing of this
 * process's environment but PATH and the temporary folder (the configuration is the variables alone).
 */
export function publicApiAnswers(variables: Readonly<Record<string, string>>): Promise<PublicApiAnswers> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '' };
    for (const name of ['TMPDIR', 'TMP', 'TEMP', 'HOME']) if (process.env[name]) env[name] = process.env[name];
    const child = spawn(process.execPath, ['--import', 'tsx', CLI], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new PublicApiAnswersError(`${CLI} could not be run: ${error.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const said = Buffer.concat(err).toString('utf8').trim().split('\n')[0] ?? '';
      if (code !== 0) return reject(new PublicApiAnswersError(said || `${CLI} ended with status ${code}`));
      try {
        resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as PublicApiAnswers);
      } catch {
        reject(new PublicApiAnswersError(`${CLI} wrote no answers`));
      }
    });
    child.stdin.end(JSON.stringify({ variables }));
  });
}

/** `$context.requestId`, `$context.authorizer.<key>`: the simple substitution API Gateway makes in gateway response bodies. */
function substitute(template: string, variables: Readonly<Record<string, string>>): string {
  return template.replace(/\$context\.((?:[A-Za-z0-9_]+\.)*[A-Za-z0-9_]+)/g, (_whole, name: string) => variables[name] ?? '');
}

/**
 * A gateway response as the local gateway sends it: the template's headers, and its body with the
 * request id and the authorizer's context filled in. `status` is the case's own, for the two
 * defaults. An `Origin` the MCP door admits (the request's one value) is named in
 * `Access-Control-Allow-Origin`: on AWS a gateway response names one fixed browser origin (a
 * header value cannot be chosen per request, docs/decisions.md), locally each admitted page can
 * read its refusals. `localNote` is what the stack adds to the sentence, which AWS's answer cannot
 * say (why a token was refused).
 */
export function renderGatewayResponse(
  answers: PublicApiAnswers,
  type: GatewayResponseType,
  values: {
    requestId: string;
    authorizer?: Readonly<Record<string, string>>;
    status?: number;
    origins?: readonly string[];
    localNote?: string;
  },
): GatewayAnswer {
  const answer = answers.gatewayResponses[type];
  if (!answer) throw new Error(`the public API has no ${type} gateway response`);
  const variables: Record<string, string> = { requestId: values.requestId };
  for (const [key, value] of Object.entries(values.authorizer ?? {})) variables[`authorizer.${key}`] = value;
  const [origin, ...more] = values.origins ?? [];
  const admitted = origin !== undefined && more.length === 0 && answers.admittedOrigins.includes(origin);
  const body = values.localNote ? answer.body.replace(answer.sentence, () => `${answer.sentence} ${values.localNote}`) : answer.body;
  return {
    status: answer.status ?? values.status ?? (type === 'DEFAULT_4XX' ? 400 : 500),
    headers: { ...answer.headers, ...(admitted ? { 'Access-Control-Allow-Origin': origin } : {}) },
    body: substitute(body, variables),
  };
}

/** The static answer of one route (a MOCK method), or undefined when the API answers it with a function. */
export function staticAnswerOf(answers: PublicApiAnswers, method: string, path: string): MockMethod | undefined {
  return answers.staticAnswers.find((answer) => answer.path === path && answer.method.HttpMethod === method)?.method;
}
