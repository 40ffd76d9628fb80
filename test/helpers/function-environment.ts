/**
 * What serverless.yml gives every function and the service cannot do without (its issuer and
 * public URL, lib/config.ts): the `example` stage's placeholders, as a deployed function has them.
 * The unit files, which load the service's modules as they are, run with them
 * (vitest.config.ts); a file that loads them afresh with variables of its own starts from them
 * (test/helpers/env.ts).
 */
export const FUNCTION_ENVIRONMENT: Readonly<Record<string, string>> = Object.freeze({
  JWT_ISSUER: 'https://issuer.example.com/',
  PUBLIC_URL: 'https://api.example.com',
});
