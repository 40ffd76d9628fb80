import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FunctionName } from '../../infra/build.js';
import { type LocalRestApiOptions, localRestApi } from '../../local/gateway.js';
import { prebuiltBundles } from '../../local/lambda/bundles.js';
import { functionEnvironment, UNREACHABLE_STACK_VALUES } from '../../local/lambda/environment.js';
import { type LambdaFunctionSpec, readFunctionSpecs } from '../../local/lambda/function-specs.js';
import { type LocalFunctions, startLocalFunctions } from '../../local/lambda/local-functions.js';
import { type LambdaRuntime, lambdaRuntime } from '../../local/lambda/runtimes.js';
import { listenerRouter } from '../../local/listener-router.js';
import { type PublicApiAnswers, publicApiAnswers } from '../../local/public-api-answers.js';

/**
 * The local gateway and sandboxes with the fixture functions of test/fixtures/functions/ in place
 * of the deployed ones (functions that crash, hang, allocate or stream on demand: faults the real
 * functions give only by accident), each run exactly as the stack runs a deployed bundle: its own
 * process, its runtime client, serverless.yml's settings for its name unless a test overrides them.
 */

export const FIXTURE_FUNCTIONS = join(import.meta.dirname, '..', 'fixtures', 'functions');

export interface FixtureFunctions extends LocalFunctions {
  /** Lines the stack said about the functions (crashes, timeouts, memory, init failures, throttles). */
  said: string[];
  /** Lines the functions wrote, with the function's name. */
  logged: Array<{ name: FunctionName; line: string }>;
}

/**
 * A process's environment as the kernel holds it (/proc/<pid>/environ, Linux): what it was started
 * with, including what it took out of its own environment since (the runtime client's token).
 */
export function environmentOf(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

/** The fixture functions in sandboxes, with serverless.yml's settings changed where `overrides` says. */
export async function fixtureFunctions(
  overrides: Partial<Record<FunctionName, Partial<LambdaFunctionSpec>>> = {},
  runtime?: LambdaRuntime,
): Promise<FixtureFunctions> {
  const read = readFunctionSpecs({ DataTable: 'fixture-data', AuditTable: 'fixture-audit' });
  const specs = Object.fromEntries(
    (Object.keys(read) as FunctionName[]).map((name) => [name, { ...read[name], ...overrides[name] }]),
  ) as Record<FunctionName, LambdaFunctionSpec>;
  const said: string[] = [];
  const logged: FixtureFunctions['logged'] = [];
  const functions = startLocalFunctions({
    specs,
    bundles: prebuiltBundles(FIXTURE_FUNCTIONS),
    runtime: runtime ?? (await lambdaRuntime({})),
    environment: (spec) => functionEnvironment(spec, Object.values(specs), UNREACHABLE_STACK_VALUES, {}),
    userEnv: { PATH: process.env.PATH },
    log: (name, line) => logged.push({ name, line }),
    say: (line) => said.push(line),
  });
  return Object.assign(functions, { said, logged });
}

/** What the fixture gateway writes its gateway responses with: a public URL, and no browser origin admitted. */
export const FIXTURE_GATEWAY_CONFIG = Object.freeze({
  publicUrl: 'https://api.example.com',
  mcpAllowedOrigins: [] as readonly string[],
  requiredScope: 'endpoints:read' as string | undefined,
});

let fixtureAnswers: Promise<PublicApiAnswers> | undefined;
/** The public API's own answers with FIXTURE_GATEWAY_CONFIG's values, made once per file as the stack makes its own. */
export function fixtureGatewayAnswers(): Promise<PublicApiAnswers> {
  fixtureAnswers ??= publicApiAnswers({
    PUBLIC_URL: FIXTURE_GATEWAY_CONFIG.publicUrl,
    JWT_ISSUER: 'https://issuer.example.com',
    REQUIRED_SCOPE: FIXTURE_GATEWAY_CONFIG.requiredScope ?? '',
    MCP_ALLOWED_ORIGINS: FIXTURE_GATEWAY_CONFIG.mcpAllowedOrigins.join(','),
  });
  return fixtureAnswers;
}

export interface FixtureGateway {
  base: string;
  close(): Promise<void>;
}

/** One of the local REST APIs over real HTTP on a loopback port, routed as a listener routes it, in front of `functions`. */
export async function fixtureGateway(
  functions: LocalFunctions,
  options: Omit<LocalRestApiOptions, 'functions' | 'answers'> & { answers?: LocalRestApiOptions['answers'] },
): Promise<FixtureGateway> {
  const router = listenerRouter(localRestApi({ answers: fixtureGatewayAnswers, ...options, functions }));
  const server: Server = createServer((req, res) => void router.handle(req, res, randomUUID()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
