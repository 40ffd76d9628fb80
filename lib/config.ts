import * as z from 'zod/mini';
import './data-format/zod-english-locale.js';
import { DEFAULT_REQUIRED_SCOPE, OBSERVATIONS_SCOPE, SCOPE_TOKEN } from './scope-names.js';

/**
 * The functions' configuration: each function its own schema (inventory, observations, mcp,
 * authorizer below), made of the variables it reads and nothing else, parsed from the environment
 * once, when its handler module loads (Lambda's init): a missing or bad variable fails the init
 * with one sentence naming every one (ConfigError), before any event is taken. serverless.yml gives
 * each function exactly the variables of its schema (the template tests check the two agree), and
 * the handler hands its configuration, a frozen plain object, to lib/ (nothing in lib/ reads the
 * environment of its own).
 *
 * One table says what each variable may be (VARIABLES) and one what each setting is made from
 * (SETTINGS); a function's schema is the settings it names, and its variables are the ones those
 * settings are made from.
 */

const POSITIVE_RULE = 'must be a whole number above 0';
const positiveInt = z.coerce.number({ error: POSITIVE_RULE }).check(z.int({ error: POSITIVE_RULE }), z.positive({ error: POSITIVE_RULE }));
/** An empty variable counts as unset, so `FOO=` falls back to the default. */
const optionalText = z.pipe(
  z.optional(z.string()),
  z.transform((v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim())),
);
/** A variable the function cannot do without: unset or empty is refused at init, naming it. */
const requiredText = z.pipe(optionalText, z.string({ error: 'is required (serverless.yml gives it to this function)' }));
/** `optionalText`, then `schema` when the variable is set. */
const optionalTextThen = <T extends z.ZodMiniType<unknown, string>>(schema: T) => z.pipe(optionalText, z.optional(schema));
/** An http:// or https:// URL (the URL parser alone takes `db.example:8000` as a URL of scheme `db.example:`). */
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
const ROLE_ARN = z.string().check(z.regex(/^arn:aws[a-z-]*:iam::[0-9]{12}:role\//, 'must be an IAM role ARN'));

/** A comma-separated list, spaces around entries ignored, empty entries dropped. */
function list(value: string): readonly string[] {
  return Object.freeze(
    value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
}

/** An origin exactly as a browser sends it (`scheme://host[:port]`, http or https, lower case, no path): `*` and `null` are not. */
const isExactOrigin = (value: string): boolean =>
  URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) && new URL(value).origin === value;

/** What each variable may be: its rule, and its default where it has one. */
const VARIABLES = {
  AWS_REGION: z._default(z.string().check(z.minLength(1)), 'us-east-1'),
  DATA_TABLE: z._default(z.string().check(z.minLength(3)), 'endpoint-data'),
  AUDIT_TABLE: z._default(z.string().check(z.minLength(3)), 'endpoint-audit'),
  DYNAMODB_ENDPOINT: optionalTextThen(httpUrl),
  DYNAMODB_TIMEOUT_MS: z._default(positiveInt, 3000),
  DYNAMODB_MAX_ATTEMPTS: z._default(positiveInt.check(z.maximum(10, { error: 'must be a whole number from 1 to 10' })), 3),
  TENANT_CLAIM: z._default(z.string().check(z.minLength(1)), 'tenant_id'),
  ENDPOINT_SCOPE_CLAIM: z._default(z.string().check(z.minLength(1)), 'endpoint_groups'),
  // Set but empty: no scope is required (an identity provider that issues none for this audience).
  REQUIRED_SCOPE: z._default(
    z
      .pipe(
        z.string(),
        z.transform((v: string) => v.trim()),
      )
      .check(
        z.refine((v: string) => v === '' || SCOPE_TOKEN.test(v), {
          error: 'must be one OAuth scope such as endpoints:read (no spaces or quotes), or empty for none',
        }),
      ),
    DEFAULT_REQUIRED_SCOPE,
  ),
  SCOPE_CLAIM: optionalTextThen(z.string().check(z.regex(/^[A-Za-z0-9_:.-]+$/, 'must be a claim name such as scope or scp'))),
  ONLINE_GRACE_SECONDS: z._default(positiveInt, 120),
  OBSERVATION_TTL_SECONDS: z._default(positiveInt, 600),
  SAMPLE_RETENTION_DAYS: z._default(positiveInt, 8),
  JWT_ISSUER: requiredText,
  JWT_AUDIENCE: z._default(z.string().check(z.minLength(1)), 'endpoint-read-service'),
  JWKS_URL: optionalTextThen(httpUrl),
  OBSERVATIONS_AUDIENCE: z._default(z.string().check(z.minLength(1)), 'endpoint-observations'),
  MCP_AUDIENCE: optionalText,
  PUBLIC_URL: z.pipe(requiredText, httpUrl),
  TICKET_SYSTEM: z._default(z.string().check(z.regex(/^[a-z][a-z0-9-]*$/)), 'servicenow'),
  BROKER_CLAIM: z._default(
    z.string().check(z.regex(/^[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*$/, 'must be a claim name or a dotted path such as act.sub')),
    'act.sub',
  ),
  BROKER_ALLOW_LIST: z.pipe(
    requiredText,
    z.string().check(z.refine((value) => list(value).length > 0, { error: 'must name at least one broker client id' })),
  ),
  BROKER_CLIENT_ID: requiredText,
  BROKER_CLIENT_SECRET: optionalText,
  BROKER_CLIENT_SECRET_ARN: optionalTextThen(
    z.string().check(z.regex(/^arn:aws[a-z-]*:secretsmanager:/, 'must be a Secrets Manager secret ARN')),
  ),
  TOKEN_ENDPOINT: z.pipe(requiredText, httpUrl),
  OBSERVATIONS_URL: z.pipe(requiredText, httpUrl),
  MCP_ALLOWED_ORIGINS: z._default(
    z.string().check(
      z.refine((value) => list(value).every(isExactOrigin), {
        error: 'must list exact browser origins such as https://app.example.com, comma-separated (* and null are refused)',
      }),
    ),
    '',
  ),
  UPSTREAM_TIMEOUT_MS: z._default(positiveInt, 16_000),
  TENANT_FENCING: z._default(z.enum(['off', 'iam'], { error: 'must be off or iam' }), 'off'),
  TENANT_READ_ROLE_ARN: optionalTextThen(ROLE_ARN),
  TENANT_AUDIT_ROLE_ARN: optionalTextThen(ROLE_ARN),
};

type VariableName = keyof typeof VARIABLES;
/** Every variable as read, where it is read. */
type Read = { [V in VariableName]: z.output<(typeof VARIABLES)[V]> };

/** The public URL as the settings use it: without a trailing slash. */
const publicUrlOf = (env: Read): string => env.PUBLIC_URL.replace(/\/+$/, '');

/**
 * Every setting a function may read: the variable it is, or the variables it is made from and how.
 */
const SETTINGS = {
  region: 'AWS_REGION',
  dataTable: 'DATA_TABLE',
  auditTable: 'AUDIT_TABLE',
  dynamoEndpoint: 'DYNAMODB_ENDPOINT',
  dynamoTimeoutMs: 'DYNAMODB_TIMEOUT_MS',
  dynamoMaxAttempts: 'DYNAMODB_MAX_ATTEMPTS',
  tenantClaim: 'TENANT_CLAIM',
  /** The claim naming the endpoint groups a caller may see (lib/auth/endpoint-scope.ts); taken as one claim name, never a path. */
  scopeClaim: 'ENDPOINT_SCOPE_CLAIM',
  /**
   * The OAuth scope a token needs at the public doors (lib/auth/scopes.ts); undefined when
   * REQUIRED_SCOPE is empty (none required).
   */
  requiredScope: { from: ['REQUIRED_SCOPE'], read: (env: Read) => (env.REQUIRED_SCOPE === '' ? undefined : env.REQUIRED_SCOPE) },
  /** The private observations operation's own scope, on the broker's exchanged token; none when the doors require none. */
  observationsScope: { from: ['REQUIRED_SCOPE'], read: (env: Read) => (env.REQUIRED_SCOPE === '' ? undefined : OBSERVATIONS_SCOPE) },
  /** Where a token's granted scopes are read: SCOPE_CLAIM, or when unset `scope` (space-separated), else `scp` (Entra ID). */
  oauthScopeClaim: 'SCOPE_CLAIM',
  onlineGraceSeconds: 'ONLINE_GRACE_SECONDS',
  observationTtlSeconds: 'OBSERVATION_TTL_SECONDS',
  sampleRetentionDays: 'SAMPLE_RETENTION_DAYS',
  jwtIssuer: 'JWT_ISSUER',
  jwtAudience: 'JWT_AUDIENCE',
  /**
   * Where the issuer's signing keys are fetched when set (JWKS_URL, an override); unset, the
   * `jwks_uri` of the issuer's discovery document (lib/auth/discovery.ts). No path is guessed.
   */
  jwksUrl: 'JWKS_URL',
  observationsAudience: 'OBSERVATIONS_AUDIENCE',
  /**
   * The public API's base URL as clients reach it (a custom domain, or the execute-api URL with
   * its stage), without a trailing slash: the RFC 9728 documents and every 401's
   * `resource_metadata` are under it (lib/auth/public-doors.ts).
   */
  publicUrl: { from: ['PUBLIC_URL'], read: publicUrlOf },
  /** The MCP resource: the `aud` of tokens for POST /api/mcp, and `resource` in its RFC 9728 metadata. */
  mcpAudience: { from: ['MCP_AUDIENCE', 'PUBLIC_URL'], read: (env: Read) => env.MCP_AUDIENCE ?? `${publicUrlOf(env)}/api/mcp` },
  ticketSystem: 'TICKET_SYSTEM',
  /** Where the observations handler finds the broker in the exchanged token: a claim or a dotted path. */
  brokerClaim: 'BROKER_CLAIM',
  /** The brokers (client ids) the private operation accepts. */
  brokerAllowList: { from: ['BROKER_ALLOW_LIST'], read: (env: Read) => list(env.BROKER_ALLOW_LIST) },
  /** The MCP function's client id at the issuer, with which it exchanges tokens. */
  brokerClientId: 'BROKER_CLIENT_ID',
  /**
   * Its client secret: the secret itself where no secret store holds it, else the ARN of the
   * Secrets Manager secret it is read from at run time (lib/mcp/broker-hop.ts); one of the two is required.
   */
  brokerSecret: {
    from: ['BROKER_CLIENT_SECRET', 'BROKER_CLIENT_SECRET_ARN'],
    read: (env: Read): BrokerSecretSource =>
      env.BROKER_CLIENT_SECRET !== undefined ? { secret: env.BROKER_CLIENT_SECRET } : { arn: env.BROKER_CLIENT_SECRET_ARN ?? '' },
  },
  /** Where the MCP function exchanges tokens, and where it reaches the private operation. */
  tokenEndpoint: 'TOKEN_ENDPOINT',
  observationsUrl: 'OBSERVATIONS_URL',
  mcpAllowedOrigins: { from: ['MCP_ALLOWED_ORIGINS'], read: (env: Read) => list(env.MCP_ALLOWED_ORIGINS) },
  upstreamTimeoutMs: 'UPSTREAM_TIMEOUT_MS',
  /** `iam`: data-table reads and audit puts use credentials fenced to the caller's tenant (lib/store/tenant-client.ts). */
  tenantFencing: 'TENANT_FENCING',
  tenantReadRoleArn: 'TENANT_READ_ROLE_ARN',
  tenantAuditRoleArn: 'TENANT_AUDIT_ROLE_ARN',
} satisfies Record<string, VariableName | { from: readonly VariableName[]; read: (env: Read) => unknown }>;

/** The broker's client secret: the secret itself, or the ARN of the secret that holds it. */
export type BrokerSecretSource = { readonly secret: string } | { readonly arn: string };

type SettingName = keyof typeof SETTINGS;
type SettingValue<E> = E extends VariableName ? Read[E] : E extends { read: (env: Read) => infer R } ? R : never;
/** Every setting, as the functions read them. A function's configuration is its part of it. */
export type Settings = { readonly [S in SettingName]: SettingValue<(typeof SETTINGS)[S]> };

/** The variables a setting is made from. */
const sourcesOf = (setting: SettingName): readonly VariableName[] => {
  const entry = SETTINGS[setting];
  return typeof entry === 'string' ? [entry] : entry.from;
};

/** A setting's value, from the variables as read. */
const settingValue = (setting: SettingName, env: Read): unknown => {
  const entry = SETTINGS[setting];
  return typeof entry === 'string' ? env[entry] : entry.read(env);
};

/** Rules across variables, applied in a schema that reads all the variables each names. */
const RULES: ReadonlyArray<{ needs: readonly VariableName[]; path: VariableName; message: string; holds: (env: Read) => boolean }> = [
  {
    needs: ['TENANT_FENCING', 'TENANT_READ_ROLE_ARN'],
    path: 'TENANT_READ_ROLE_ARN',
    message: 'is required when TENANT_FENCING is iam',
    holds: (env) => env.TENANT_FENCING !== 'iam' || env.TENANT_READ_ROLE_ARN !== undefined,
  },
  {
    needs: ['TENANT_FENCING', 'TENANT_AUDIT_ROLE_ARN'],
    path: 'TENANT_AUDIT_ROLE_ARN',
    message: 'is required when TENANT_FENCING is iam',
    holds: (env) => env.TENANT_FENCING !== 'iam' || env.TENANT_AUDIT_ROLE_ARN !== undefined,
  },
  {
    // The issuer's keys are found through its discovery document, under its URL (lib/auth/discovery.ts).
    needs: ['JWT_ISSUER', 'JWKS_URL'],
    path: 'JWT_ISSUER',
    message: 'must be an http:// or https:// URL, whose discovery document says where its keys are (or set JWKS_URL)',
    holds: (env) => env.JWKS_URL !== undefined || httpUrl.safeParse(env.JWT_ISSUER).success,
  },
  {
    needs: ['BROKER_CLIENT_SECRET', 'BROKER_CLIENT_SECRET_ARN'],
    path: 'BROKER_CLIENT_SECRET_ARN',
    message: 'is required (or BROKER_CLIENT_SECRET, the secret itself, where no secret store holds it)',
    holds: (env) => env.BROKER_CLIENT_SECRET !== undefined || env.BROKER_CLIENT_SECRET_ARN !== undefined,
  },
];

/** Raised at init when the environment is not a valid configuration; names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Variables whose value is never repeated in an error, whatever it is. */
const SECRET_VARIABLES = new Set(['BROKER_CLIENT_SECRET']);

/**
 * One variable's problem for the person who set it: the rule, the value it broke (never a
 * secret's; a long one cut), and, for a URL written without its scheme, the URL it likely meant.
 */
function problemOf(issue: { path: PropertyKey[]; message: string }, env: NodeJS.ProcessEnv): string {
  const name = issue.path.map(String).join('.');
  const value = env[name];
  if (value === undefined || SECRET_VARIABLES.has(name)) return `${name}: ${issue.message}`;
  const shown = value.length > 60 ? `${value.slice(0, 60)}…` : value;
  const meant =
    /^[^\s/:]+(:\d+)?(\/.*)?$/.test(value.trim()) && issue.message.includes('URL')
      ? `; write it with its scheme, e.g. http://${value.trim()}`
      : '';
  return `${name}: ${issue.message}, not ${JSON.stringify(shown)}${meant}`;
}

/** A function's configuration schema: the settings it reads, the variables they are made from, and the parse of an environment. */
export interface FunctionSchema<S extends SettingName> {
  /** Every variable the function reads, in the table's order. */
  readonly variables: readonly VariableName[];
  /** The function's configuration from an environment; pure. @throws ConfigError naming every bad variable */
  parse(env: NodeJS.ProcessEnv): Readonly<Pick<Settings, S>>;
}

function functionSchema<S extends SettingName>(...groups: readonly (readonly S[])[]): FunctionSchema<S> {
  const settings = groups.flat();
  const reads = new Set<VariableName>(settings.flatMap(sourcesOf));
  const variables = (Object.keys(VARIABLES) as VariableName[]).filter((name) => reads.has(name));
  const rules = RULES.filter((rule) => rule.needs.every((name) => reads.has(name)));
  const schema = z
    .object(Object.fromEntries(variables.map((name) => [name, VARIABLES[name]])) as Partial<typeof VARIABLES>)
    .check(...rules.map((rule) => z.refine((env) => rule.holds(env as unknown as Read), { path: [rule.path], message: rule.message })));
  return Object.freeze({
    variables: Object.freeze(variables),
    parse(env: NodeJS.ProcessEnv) {
      const parsed = schema.safeParse(env);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => problemOf(issue, env)).join('; ');
        throw new ConfigError(`Invalid configuration: ${problems}`);
      }
      const read = parsed.data as unknown as Read;
      return Object.freeze(Object.fromEntries(settings.map((name) => [name, settingValue(name, read)]))) as Readonly<Pick<Settings, S>>;
    },
  });
}

/** What the store's clients are made with (lib/store/tenant-client.ts): its region and bounds, and the read fence. */
export const STORE_SETTINGS = /* @__PURE__ */ Object.freeze([
  'region',
  'dynamoEndpoint',
  'dynamoTimeoutMs',
  'dynamoMaxAttempts',
  'tenantFencing',
  'tenantReadRoleArn',
] as const);

/** What a public door reads of the caller its authorizer handed over, and the challenge of its 401s. */
const PUBLIC_CALLER_SETTINGS = /* @__PURE__ */ Object.freeze(['publicUrl', 'requiredScope', 'tenantClaim', 'scopeClaim'] as const);

/** listEndpointInventory: the caller the authorizer handed over, and the tenant's agents, read (fenced) and summarised. */
export const INVENTORY_CONFIG = /* @__PURE__ */ functionSchema(PUBLIC_CALLER_SETTINGS, STORE_SETTINGS, ['dataTable', 'onlineGraceSeconds']);

/**
 * getEndpointObservations: the brokered caller's token (the issuer, its keys, the audience, the
 * claims, the brokers accepted, the operation's scope), the attribution, the reads (fenced) and
 * the evaluation, and the audit write (fenced).
 */
export const OBSERVATIONS_CONFIG = /* @__PURE__ */ functionSchema(
  [
    'jwtIssuer',
    'jwksUrl',
    'observationsAudience',
    'observationsScope',
    'oauthScopeClaim',
    'tenantClaim',
    'scopeClaim',
    'brokerClaim',
    'brokerAllowList',
    'ticketSystem',
  ],
  STORE_SETTINGS,
  ['dataTable', 'auditTable', 'tenantAuditRoleArn', 'onlineGraceSeconds', 'observationTtlSeconds', 'sampleRetentionDays'],
);
export type ObservationsConfig = ReturnType<typeof OBSERVATIONS_CONFIG.parse>;

/**
 * The MCP door: the caller the authorizer handed over, browser origins, its tools (list_endpoints
 * reads the inventory as listEndpointInventory does; observations asks the person and reads the
 * ticket policy), and the broker's hop (its client id and secret, the token exchange, the private
 * operation's address and audience).
 */
export const MCP_CONFIG = /* @__PURE__ */ functionSchema(
  PUBLIC_CALLER_SETTINGS,
  ['mcpAllowedOrigins', 'upstreamTimeoutMs', 'ticketSystem'],
  STORE_SETTINGS,
  [
    'dataTable',
    'onlineGraceSeconds',
    'brokerClientId',
    'brokerSecret',
    'tokenEndpoint',
    'observationsUrl',
    'observationsAudience',
    'observationsScope',
  ],
);
export type McpConfig = ReturnType<typeof MCP_CONFIG.parse>;

/** The token authorizer of both public doors: the issuer, its keys, each door's audience, and the claims it hands over. */
export const AUTHORIZER_CONFIG = /* @__PURE__ */ functionSchema([
  'jwtIssuer',
  'jwksUrl',
  'jwtAudience',
  'mcpAudience',
  'tenantClaim',
  'scopeClaim',
  'oauthScopeClaim',
]);

/**
 * The public REST API's static answers (no function runs for them: API Gateway answers them,
 * infra/static-answers.ts): the RFC 9728 documents name the public URL, the issuer, the MCP
 * audience and the scope, and the preflights admit the MCP door's origins. `npm run package` and
 * the local stack make them from the environments of the functions behind the doors: the token
 * authorizer's (the issuer and audience it checks) and the MCP function's (the scope and origins it admits).
 */
export const STATIC_ANSWERS_CONFIG = /* @__PURE__ */ functionSchema([
  'publicUrl',
  'jwtIssuer',
  'mcpAudience',
  'requiredScope',
  'mcpAllowedOrigins',
]);
export type StaticAnswersConfig = ReturnType<typeof STATIC_ANSWERS_CONFIG.parse>;

/** Each function's schema, by the function's name in serverless.yml. */
export const FUNCTION_CONFIGS = /* @__PURE__ */ Object.freeze({
  inventory: INVENTORY_CONFIG,
  observations: OBSERVATIONS_CONFIG,
  mcp: MCP_CONFIG,
  authorizer: AUTHORIZER_CONFIG,
});
