import * as z from 'zod/mini';
import { DEFAULT_REQUIRED_SCOPE, OBSERVATIONS_SCOPE, SCOPE_TOKEN } from './scope-names.js';
import './data-format/zod-english-locale.js';

const POSITIVE_RULE = 'must be a whole number above 0';
const positiveInt = z.coerce.number({ error: POSITIVE_RULE }).check(z.int({ error: POSITIVE_RULE }), z.positive({ error: POSITIVE_RULE }));
/** An empty variable counts as unset, so `FOO=` falls back to the default. */
const optionalText = z.pipe(
  z.optional(z.string()),
  z.transform((v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim())),
);
/** A variable every function needs: unset or empty is refused at init, naming it. */
const requiredText = z.pipe(optionalText, z.string({ error: 'is required (serverless.yml gives it to every function)' }));
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

const EnvVariables = z.object({
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
  BROKER_ALLOW_LIST: optionalText,
  BROKER_CLIENT_ID: optionalText,
  BROKER_CLIENT_SECRET: optionalText,
  BROKER_CLIENT_SECRET_ARN: optionalTextThen(
    z.string().check(z.regex(/^arn:aws[a-z-]*:secretsmanager:/, 'must be a Secrets Manager secret ARN')),
  ),
  TOKEN_ENDPOINT: optionalTextThen(httpUrl),
  OBSERVATIONS_URL: optionalTextThen(httpUrl),
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
});

const EnvSchema = z.pipe(
  EnvVariables.check(
    z.refine((env) => env.TENANT_FENCING !== 'iam' || env.TENANT_READ_ROLE_ARN !== undefined, {
      path: ['TENANT_READ_ROLE_ARN'],
      message: 'is required when TENANT_FENCING is iam',
    }),
    z.refine((env) => env.TENANT_FENCING !== 'iam' || env.TENANT_AUDIT_ROLE_ARN !== undefined, {
      path: ['TENANT_AUDIT_ROLE_ARN'],
      message: 'is required when TENANT_FENCING is iam',
    }),
    // The issuer's keys are found through its discovery document, under its URL (lib/auth/discovery.ts).
    z.refine((env) => env.JWKS_URL !== undefined || httpUrl.safeParse(env.JWT_ISSUER).success, {
      path: ['JWT_ISSUER'],
      message: 'must be an http:// or https:// URL, whose discovery document says where its keys are (or set JWKS_URL)',
    }),
  ),
  z.transform((env) => {
    const issuer = env.JWT_ISSUER;
    const publicUrl = env.PUBLIC_URL.replace(/\/+$/, '');
    return Object.freeze({
      region: env.AWS_REGION,
      dataTable: env.DATA_TABLE,
      auditTable: env.AUDIT_TABLE,
      dynamoEndpoint: env.DYNAMODB_ENDPOINT,
      dynamoTimeoutMs: env.DYNAMODB_TIMEOUT_MS,
      dynamoMaxAttempts: env.DYNAMODB_MAX_ATTEMPTS,
      tenantClaim: env.TENANT_CLAIM,
      /** The claim naming the endpoint groups a caller may see (lib/auth/endpoint-scope.ts); taken as one claim name, never a path. */
      scopeClaim: env.ENDPOINT_SCOPE_CLAIM,
      /**
       * The OAuth scope a token needs at the public doors (lib/auth/scopes.ts); undefined when
       * REQUIRED_SCOPE is empty (none required). The private observations operation then needs its
       * own, OBSERVATIONS_SCOPE, on the broker's exchanged token (undefined too when none is required).
       */
      requiredScope: env.REQUIRED_SCOPE === '' ? undefined : env.REQUIRED_SCOPE,
      observationsScope: env.REQUIRED_SCOPE === '' ? undefined : OBSERVATIONS_SCOPE,
      /** Where a token's granted scopes are read: SCOPE_CLAIM, or when unset `scope` (space-separated), else `scp` (Entra ID). */
      oauthScopeClaim: env.SCOPE_CLAIM,
      onlineGraceSeconds: env.ONLINE_GRACE_SECONDS,
      observationTtlSeconds: env.OBSERVATION_TTL_SECONDS,
      sampleRetentionDays: env.SAMPLE_RETENTION_DAYS,
      jwtIssuer: issuer,
      jwtAudience: env.JWT_AUDIENCE,
      /**
       * Where the issuer's signing keys are fetched when set (JWKS_URL, an override); unset, the
       * `jwks_uri` of the issuer's discovery document (lib/auth/discovery.ts). No path is guessed.
       */
      jwksUrl: env.JWKS_URL,
      observationsAudience: env.OBSERVATIONS_AUDIENCE,
      /**
       * The public API's base URL as clients reach it (a custom domain, or the execute-api URL with
       * its stage), without a trailing slash: the RFC 9728 documents and every 401's
       * `resource_metadata` are under it (lib/auth/public-doors.ts).
       */
      publicUrl,
      /** The MCP resource: the `aud` of tokens for POST /api/mcp, and `resource` in its RFC 9728 metadata. */
      mcpAudience: env.MCP_AUDIENCE ?? `${publicUrl}/api/mcp`,
      ticketSystem: env.TICKET_SYSTEM,
      /** Where the observations handler finds the broker in the exchanged token: a claim or a dotted path. */
      brokerClaim: env.BROKER_CLAIM,
      /** The brokers the private operation accepts (none when unset: it then refuses every token). */
      brokerAllowList: list(env.BROKER_ALLOW_LIST ?? ''),
      brokerClientId: env.BROKER_CLIENT_ID,
      /** The secret itself, where no secret store holds it; on AWS it is read at run time from `brokerClientSecretArn`. */
      brokerClientSecret: env.BROKER_CLIENT_SECRET,
      brokerClientSecretArn: env.BROKER_CLIENT_SECRET_ARN,
      /** Where the MCP function exchanges tokens, and where it reaches the private operation (serverless.yml gives both to it alone). */
      tokenEndpoint: env.TOKEN_ENDPOINT,
      observationsUrl: env.OBSERVATIONS_URL,
      mcpAllowedOrigins: list(env.MCP_ALLOWED_ORIGINS),
      upstreamTimeoutMs: env.UPSTREAM_TIMEOUT_MS,
      /** `iam`: data-table reads and audit puts use credentials fenced to the caller's tenant (lib/store/tenant-client.ts). */
      tenantFencing: env.TENANT_FENCING,
      tenantReadRoleArn: env.TENANT_READ_ROLE_ARN,
      tenantAuditRoleArn: env.TENANT_AUDIT_ROLE_ARN,
    });
  }),
);

export type Config = z.output<typeof EnvSchema>;

/** Raised at start when the environment is not a valid configuration; names every bad variable. */
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

/** Parses a configuration from an environment; pure. */
export function parseConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => problemOf(issue, env)).join('; ');
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

/**
 * The service configuration, parsed from the environment once, when this module loads (Lambda's
 * init): a bad variable fails the function's init with ConfigError's one sentence, as Lambda
 * reports an init error, before any event is taken.
 */
const loaded = parseConfig(process.env);

/** The service configuration this function started with (frozen). */
export function config(): Config {
  return loaded;
}
