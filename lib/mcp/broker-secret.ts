import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Settings } from '../config.js';
import { traced } from '../observability/tracer.js';

/**
 * The broker's client secret at the issuer: a plain variable (BROKER_CLIENT_SECRET) where no
 * secret store holds it; on AWS it is read at run time from Secrets Manager (BROKER_CLIENT_SECRET_ARN)
 * and never appears in the template or the function's environment. Cached for a few minutes, so a
 * rotated secret is picked up without a deploy, and dropped at once when the issuer refuses it.
 * Ours rather than Powertools Parameters' getSecret (the same cache): its fetch takes no abort
 * signal, so it could not end with the invocation's deadline.
 */

const CACHE_MS = 5 * 60_000;

/** The secret cannot be had: misconfiguration (nothing configured) or Secrets Manager failing. */
export class BrokerSecretError extends Error {
  override name = 'BrokerSecretError';
  constructor(
    readonly kind: 'misconfigured' | 'unavailable',
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** A secret string is the secret itself, or a JSON object holding it as `client_secret`. */
function secretFrom(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed = JSON.parse(trimmed) as { client_secret?: unknown };
      return typeof parsed.client_secret === 'string' && parsed.client_secret !== '' ? parsed.client_secret : undefined;
    } catch {
      return undefined;
    }
  }
  return trimmed === '' ? undefined : trimmed;
}

/** The broker's client secret, as the MCP function reads it. */
export interface BrokerSecret {
  /** The secret: the one given, or Secrets Manager's (cached CACHE_MS); `signal` bounds its read. */
  read(signal: AbortSignal): Promise<string>;
  /** Forgets the cached secret, so the next exchange reads it again (after an `invalid_client`). */
  forget(): void;
}

/**
 * The MCP function's broker secret, made once at its init from its configuration: the secret
 * itself, or Secrets Manager's by ARN, read with a client made on first use from the environment as
 * the SDK reads it (region, credentials, AWS_ENDPOINT_URL_SECRETS_MANAGER).
 */
export function brokerSecret(cfg: Pick<Settings, 'brokerSecret' | 'region'>): BrokerSecret {
  const source = cfg.brokerSecret;
  if ('secret' in source) return { read: async () => source.secret, forget: () => undefined };
  let client: SecretsManagerClient | undefined;
  let cached: { secret: string; until: number } | undefined;
  return {
    forget() {
      cached = undefined;
    },
    async read(signal) {
      const now = Date.now();
      if (cached && cached.until > now) return cached.secret;
      client ??= traced(new SecretsManagerClient({ region: cfg.region, maxAttempts: 2 }));
      let value: string | undefined;
      try {
        const answer = await client.send(new GetSecretValueCommand({ SecretId: source.arn }), { abortSignal: signal });
        value = answer.SecretString;
      } catch (cause) {
        const name = (cause as { name?: string }).name ?? '';
        const kind = ['AccessDeniedException', 'ResourceNotFoundException', 'DecryptionFailure', 'InvalidRequestException'].includes(name)
          ? 'misconfigured'
          : 'unavailable';
        throw new BrokerSecretError(kind, `The broker's client secret could not be read (${name || 'error'}).`, { cause });
      }
      const secret = value === undefined ? undefined : secretFrom(value);
      if (!secret) throw new BrokerSecretError('misconfigured', 'The broker secret holds no usable client secret.');
      cached = { secret, until: now + CACHE_MS };
      return secret;
    },
  };
}
