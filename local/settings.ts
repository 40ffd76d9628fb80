import { readFunctionSpecs } from './lambda/function-specs.js';
import { LOOPBACK_NAMES } from './own-address.js';

/**
 * The local stack's own configuration, read from `npm start`'s environment (README, Configuration):
 * where it listens, which engine it uses, and the values it must agree on with the functions it
 * runs: the issuer it signs as, the audiences and claims it signs, the broker it registers, the
 * tables it creates and seeds. Each is the variable when set, else what serverless.yml gives the
 * functions (a `params.default`), else the stack's own choice, which it then passes to the
 * functions (local/lambda/environment.ts), as a stage's parameters do on AWS. The service's
 * own configuration (lib/config.ts) is the functions' to read, at their init: the stack checks
 * only what it reads itself, and a bad value of any other variable fails the init of the
 * functions it is given to, as it would on AWS.
 */

/** The service's defaults for what the stack reads too (lib/config.ts's, copied: test/unit/boundary-copies.test.ts holds them equal). */
export const SERVICE_DEFAULTS = Object.freeze({
  region: 'us-east-1',
  dataTable: 'endpoint-data',
  auditTable: 'endpoint-audit',
  jwtAudience: 'endpoint-read-service',
  onlineGraceSeconds: 120,
  sampleRetentionDays: 8,
  dynamoTimeoutMs: 3000,
  dynamoMaxAttempts: 3,
  requiredScope: 'endpoints:read',
  observationsScope: 'observations:read',
  observationsAudience: 'endpoint-observations',
  tenantClaim: 'tenant_id',
  scopeClaim: 'endpoint_groups',
});

/** The stack's ports and the local broker's client id when no variable names others. */
export const STACK_DEFAULTS = Object.freeze({ port: 3000, privatePort: 3001, dynamoPort: 8000, brokerClientId: 'local-broker' });

/** A variable of the stack's configuration that is not valid: the message names every one, as lib/config.ts does for a function. */
export class StackConfigError extends Error {
  override name = 'StackConfigError';
}

/** Where the stack listens and which engine it uses (PORT, PRIVATE_PORT, DYNAMODB_PORT, DYNAMODB_ENDPOINT). */
export interface StackPorts {
  port: number;
  privatePort: number;
  dynamoPort: number;
  /** An external DynamoDB API (DynamoDB Local, AWS); none: the embedded engine on `dynamoPort`. */
  dynamoEndpoint: string | undefined;
}

/** What the stack and its CLIs agree on with the functions (field names as lib/config.ts's). */
export interface StackConfig {
  region: string;
  dataTable: string;
  auditTable: string;
  dynamoTimeoutMs: number;
  dynamoMaxAttempts: number;
  onlineGraceSeconds: number;
  sampleRetentionDays: number;
  /** `iss` of the tokens the local issuer signs, and the issuer the functions accept. */
  jwtIssuer: string;
  /** The public listener as clients reach it, without a trailing slash. */
  publicUrl: string;
  jwtAudience: string;
  mcpAudience: string;
  observationsAudience: string;
  tenantClaim: string;
  scopeClaim: string;
  /** The OAuth scope the public doors ask for (REQUIRED_SCOPE); undefined when set empty (none required). */
  requiredScope: string | undefined;
  /** The scope the broker's exchanged token carries for the private operation; undefined when the doors require none. */
  observationsScope: string | undefined;
  /** The claim granted scopes are read from (SCOPE_CLAIM); undefined: `scope`, else `scp`. */
  oauthScopeClaim: string | undefined;
  brokerClientId: string;
  brokerAllowList: readonly string[];
  /** The browser origins MCP_ALLOWED_ORIGINS lists (the user's; the stack adds its own, ownOrigins). */
  mcpAllowedOrigins: readonly string[];
  /** The public listener's own origins: the public URL's, and on a loopback name the same port on each loopback name. */
  ownOrigins: readonly string[];
  /** Origins whose client ID metadata documents the sign-in fetches though they may be on this machine or a private network (CLIENT_ID_DOCUMENT_DEV_ORIGINS; none by default). */
  clientIdDocumentDevOrigins: readonly string[];
  /**
   * Each tenant's throttle at the public doors where set (TENANT_RATE_LIMIT, TENANT_BURST_LIMIT);
   * else the tenants' usage plan's (the stage parameters tenantRateLimit and tenantBurstLimit).
   */
  tenantThrottle: { rateLimit?: number; burstLimit?: number };
}

/** Reads variables, gathering every problem, so that one message names them all. */
class Variables {
  readonly problems: string[] = [];
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** The trimmed value; unset or empty is undefined (`FOO= npm start` falls back to the default). */
  text(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  refuse(name: string, rule: string, hint = ''): undefined {
    const value = this.env[name] ?? '';
    const shown = value.length > 60 ? `${value.slice(0, 60)}…` : value;
    this.problems.push(`${name}: ${rule}, not ${JSON.stringify(shown)}${hint}`);
    return undefined;
  }

  port(name: string, fallback: number): number {
    const value = this.text(name);
    if (value === undefined) return fallback;
    const port = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
    return port >= 0 && port <= 65535 ? port : (this.refuse(name, 'must be a port number from 0 to 65535') ?? fallback);
  }

  positive(name: string, fallback: number): number {
    const value = this.text(name);
    if (value === undefined) return fallback;
    return /^[0-9]+$/.test(value) && Number(value) > 0 ? Number(value) : (this.refuse(name, 'must be a whole number above 0') ?? fallback);
  }

  /** A number above 0, decimals allowed (a rate); undefined when unset. */
  rate(name: string): number | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    return /^[0-9]+(\.[0-9]+)?$/.test(value) && Number(value) > 0 ? Number(value) : this.refuse(name, 'must be a number above 0');
  }

  /** An http:// or https:// URL; one written without its scheme gets the URL it likely meant. */
  url(name: string): string | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)) return value;
    const hint = /^[^\s/:]+(:\d+)?(\/.*)?$/.test(value) ? `; write it with its scheme, e.g. http://${value}` : '';
    return this.refuse(name, 'must be an http:// or https:// URL', hint);
  }

  /** A comma-separated list of exact origins (`scheme://host[:port]`, browser origins unless `what` says otherwise); `*` and `null` are none. */
  origins(name: string, what = 'browser origins'): readonly string[] {
    const entries = list(this.text(name) ?? '');
    const exact = (v: string): boolean => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol) && new URL(v).origin === v;
    if (entries.every(exact)) return entries;
    this.refuse(name, `must list exact ${what} such as https://app.example.com, comma-separated (* and null are refused)`);
    return [];
  }

  /** Throws one StackConfigError naming every problem found. */
  check(): void {
    if (this.problems.length > 0) throw new StackConfigError(`Invalid configuration: ${this.problems.join('; ')}`);
  }
}

/**
 * A comma-separated list, spaces around entries ignored, empty entries dropped: the service's
 * rule (lib/config.ts), copied since the stack reads nothing of lib/ but the data format;
 * test/unit/boundary-copies.test.ts holds the two equal.
 */
function list(value: string): readonly string[] {
  return Object.freeze(
    value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
}

/** The stack's ports and engine (README, Configuration); a bad value throws StackConfigError. */
export function readStackPorts(env: NodeJS.ProcessEnv): StackPorts {
  const vars = new Variables(env);
  const ports = {
    port: vars.port('PORT', STACK_DEFAULTS.port),
    privatePort: vars.port('PRIVATE_PORT', STACK_DEFAULTS.privatePort),
    dynamoPort: vars.port('DYNAMODB_PORT', STACK_DEFAULTS.dynamoPort),
    dynamoEndpoint: vars.url('DYNAMODB_ENDPOINT'),
  };
  vars.check();
  return ports;
}

/** What a CLI run beside the stack reads: the stack's configuration, and the engine it uses. */
export function readCliSettings(env: NodeJS.ProcessEnv): { cfg: StackConfig; endpoint: string } {
  const ports = readStackPorts(env);
  return { cfg: readStackConfig(env, ports.port), endpoint: engineEndpoint(ports) };
}

/** The DynamoDB API the stack and its CLIs use: DYNAMODB_ENDPOINT, else the embedded engine on its port. */
export function engineEndpoint(ports: StackPorts): string {
  return ports.dynamoEndpoint ?? `http://127.0.0.1:${ports.dynamoPort}`;
}

/** The origins of a public URL: its own, and for a loopback name the same scheme and port on each loopback name. */
function originsOf(publicUrl: string): readonly string[] {
  const url = new URL(publicUrl);
  if (!LOOPBACK_NAMES.includes(url.hostname)) return [url.origin];
  return LOOPBACK_NAMES.map((name) => `${url.protocol}//${name}${url.port === '' ? '' : `:${url.port}`}`);
}

/**
 * The paths of the public doors (serverless.yml's routes behind an authorizer), with their resource
 * identifiers and audiences below: lib/auth/public-doors.ts's, copied (test/unit/boundary-copies.test.ts
 * holds them equal).
 */
export const DOOR_PATHS = Object.freeze({ inventory: '/api/agents', mcp: '/api/mcp' });

/**
 * The doors' resource identifiers (RFC 8707, RFC 9728 `resource`: the URL clients call, as the
 * functions' documents name it), each with the audience the local issuer gives its tokens: the
 * MCP door's is its audience (MCP_AUDIENCE); the inventory's tokens carry JWT_AUDIENCE.
 */
export function doorResources(cfg: Pick<StackConfig, 'publicUrl' | 'jwtAudience' | 'mcpAudience'>): ReadonlyMap<string, string> {
  return new Map([
    [cfg.mcpAudience, cfg.mcpAudience],
    [`${cfg.publicUrl}${DOOR_PATHS.inventory}`, cfg.jwtAudience],
  ]);
}

/** The audience of the tokens of the door at `path` (a route's resource); undefined when no door is there. */
export function audienceAt(cfg: Pick<StackConfig, 'jwtAudience' | 'mcpAudience'>, path: string): string | undefined {
  return path === DOOR_PATHS.mcp ? cfg.mcpAudience : path === DOOR_PATHS.inventory ? cfg.jwtAudience : undefined;
}

/** Whether a browser `Origin` is one the public listener admits: its own, or one MCP_ALLOWED_ORIGINS lists. */
export function admitsOrigin(cfg: Pick<StackConfig, 'ownOrigins' | 'mcpAllowedOrigins'>, origin: string): boolean {
  return cfg.ownOrigins.includes(origin) || cfg.mcpAllowedOrigins.includes(origin);
}

let deployedCache: Readonly<Record<string, string | undefined>> | undefined;
/**
 * What serverless.yml gives the functions where it names a value (its `params.default`s), by
 * variable: read once, as it does not change while the stack runs.
 */
function deployedValues(): Readonly<Record<string, string | undefined>> {
  const values: Readonly<Record<string, string | undefined>> =
    deployedCache ?? Object.freeze(Object.assign({}, ...Object.values(readFunctionSpecs()).map((spec) => spec.environment)));
  deployedCache = values;
  return values;
}

/**
 * The stack's configuration (above) for a public listener on `publicPort`; throws StackConfigError
 * naming every bad variable it reads. Pure but for reading serverless.yml.
 */
export function readStackConfig(env: NodeJS.ProcessEnv, publicPort: number, deployed = deployedValues()): StackConfig {
  const vars = new Variables(env);
  const given = (name: string): string | undefined => vars.text(name) ?? (deployed[name]?.trim() || undefined);
  const publicUrl = (vars.url('PUBLIC_URL') ?? `http://localhost:${publicPort}`).replace(/\/+$/, '');
  const brokerClientId = vars.text('BROKER_CLIENT_ID') ?? STACK_DEFAULTS.brokerClientId;
  // Set but empty means none required, as for the functions: only an unset variable takes the default.
  const requiredScope = (env.REQUIRED_SCOPE ?? deployed.REQUIRED_SCOPE ?? SERVICE_DEFAULTS.requiredScope).trim() || undefined;
  const config: StackConfig = {
    region: vars.text('AWS_REGION') ?? SERVICE_DEFAULTS.region,
    dataTable: vars.text('DATA_TABLE') ?? SERVICE_DEFAULTS.dataTable,
    auditTable: vars.text('AUDIT_TABLE') ?? SERVICE_DEFAULTS.auditTable,
    dynamoTimeoutMs: vars.positive('DYNAMODB_TIMEOUT_MS', SERVICE_DEFAULTS.dynamoTimeoutMs),
    dynamoMaxAttempts: vars.positive('DYNAMODB_MAX_ATTEMPTS', SERVICE_DEFAULTS.dynamoMaxAttempts),
    onlineGraceSeconds: vars.positive('ONLINE_GRACE_SECONDS', SERVICE_DEFAULTS.onlineGraceSeconds),
    sampleRetentionDays: vars.positive('SAMPLE_RETENTION_DAYS', SERVICE_DEFAULTS.sampleRetentionDays),
    jwtIssuer: vars.url('JWT_ISSUER') ?? `http://localhost:${publicPort}`,
    publicUrl,
    jwtAudience: vars.text('JWT_AUDIENCE') ?? SERVICE_DEFAULTS.jwtAudience,
    mcpAudience: vars.text('MCP_AUDIENCE') ?? `${publicUrl}${DOOR_PATHS.mcp}`,
    observationsAudience: given('OBSERVATIONS_AUDIENCE') ?? SERVICE_DEFAULTS.observationsAudience,
    tenantClaim: given('TENANT_CLAIM') ?? SERVICE_DEFAULTS.tenantClaim,
    scopeClaim: given('ENDPOINT_SCOPE_CLAIM') ?? SERVICE_DEFAULTS.scopeClaim,
    requiredScope,
    observationsScope: requiredScope === undefined ? undefined : SERVICE_DEFAULTS.observationsScope,
    oauthScopeClaim: given('SCOPE_CLAIM'),
    brokerClientId,
    // As serverless.yml's `${param:brokerAllowList, param:brokerClientId}`: the one broker the stack registers.
    brokerAllowList: list(vars.text('BROKER_ALLOW_LIST') ?? brokerClientId),
    mcpAllowedOrigins: vars.origins('MCP_ALLOWED_ORIGINS'),
    ownOrigins: originsOf(publicUrl),
    clientIdDocumentDevOrigins: vars.origins('CLIENT_ID_DOCUMENT_DEV_ORIGINS', 'origins'),
    tenantThrottle: {
      ...(vars.text('TENANT_RATE_LIMIT') ? { rateLimit: vars.rate('TENANT_RATE_LIMIT') } : {}),
      ...(vars.text('TENANT_BURST_LIMIT') ? { burstLimit: vars.positive('TENANT_BURST_LIMIT', 0) } : {}),
    },
  };
  vars.check();
  return Object.freeze(config);
}
