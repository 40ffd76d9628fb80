import * as z from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** An empty variable counts as unset, so `FOO= npm start` falls back to the default. */
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const EnvSchema = z
  .object({
    PORT: port.default(3000),
    PRIVATE_PORT: port.default(3001),
    AWS_REGION: z.string().min(1).default('us-east-1'),
    DATA_TABLE: z.string().min(3).default('endpoint-data'),
    AUDIT_TABLE: z.string().min(3).default('endpoint-audit'),
    DYNAMODB_ENDPOINT: optionalText.pipe(z.url().optional()),
    DYNAMODB_TIMEOUT_MS: positiveInt.default(3000),
    DYNAMODB_MAX_ATTEMPTS: positiveInt.max(10).default(3),
    TENANT_CLAIM: z.string().min(1).default('tenant_id'),
    ONLINE_GRACE_SECONDS: positiveInt.default(120),
    OBSERVATION_TTL_SECONDS: positiveInt.default(600),
    SAMPLE_RETENTION_DAYS: positiveInt.default(8),
    JWT_ISSUER: optionalText,
    JWT_AUDIENCE: z.string().min(1).default('endpoint-read-service'),
    JWKS_URL: optionalText.pipe(z.url().optional()),
    OBSERVATIONS_AUDIENCE: optionalText,
    TICKET_SYSTEM: z.string().regex(/^[a-z][a-z0-9-]*$/).default('servicenow'),
    BROKER_ALLOW_LIST: z.string().default('local-broker'),
  })
  .transform((env) => {
    const issuer = env.JWT_ISSUER ?? `http://localhost:${env.PORT}`;
    return Object.freeze({
      port: env.PORT,
      privatePort: env.PRIVATE_PORT,
      region: env.AWS_REGION,
      dataTable: env.DATA_TABLE,
      auditTable: env.AUDIT_TABLE,
      dynamoEndpoint: env.DYNAMODB_ENDPOINT,
      dynamoTimeoutMs: env.DYNAMODB_TIMEOUT_MS,
      dynamoMaxAttempts: env.DYNAMODB_MAX_ATTEMPTS,
      tenantClaim: env.TENANT_CLAIM,
      onlineGraceSeconds: env.ONLINE_GRACE_SECONDS,
      observationTtlSeconds: env.OBSERVATION_TTL_SECONDS,
      sampleRetentionDays: env.SAMPLE_RETENTION_DAYS,
      jwtIssuer: issuer,
      jwtAudience: env.JWT_AUDIENCE,
      jwksUrl: env.JWKS_URL ?? `${issuer.replace(/\/$/, '')}/.well-known/jwks.json`,
      observationsAudience: env.OBSERVATIONS_AUDIENCE ?? env.JWT_AUDIENCE,
      ticketSystem: env.TICKET_SYSTEM,
      brokerAllowList: Object.freeze(
        env.BROKER_ALLOW_LIST.split(',')
          .map((s) => s.trim())
          .filter((s) => s.length > 0),
      ),
    });
  });

export type Config = z.output<typeof EnvSchema>;

/** Raised at start when the environment is not a valid configuration; names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses a configuration from an environment; pure, for tests and CLIs. */
export function parseConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

let cached: Config | undefined;

/** The service configuration, read from process.env once and frozen. */
export function config(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}

/** Forgets the cached configuration; only the local stack and tests call it after changing process.env. */
export function resetConfig(): void {
  cached = undefined;
}
