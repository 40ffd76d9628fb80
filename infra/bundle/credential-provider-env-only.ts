import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (infra/build.ts maps the
 * one onto the other). A Lambda function's credentials are always in its environment
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), so the SDK's full chain (SSO,
 * shared files, processes, web identity, the instance metadata service, and the STS, SSO and
 * sign-in clients they bring) is dead weight: about 120 KiB of every bundle and its load time.
 *
 * Invariant: same export, same call shape as the package it replaces (`defaultProvider(init)`
 * returns a credential provider); it reads the environment only.
 */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}): ReturnType<typeof fromEnv> => fromEnv(init);
