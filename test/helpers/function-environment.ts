/**
 * What serverless.yml gives the functions and none can do without (lib/config.ts: each function's
 * schema requires its own), with the `example` stage's placeholders, as a deployed function has
 * them: the issuer and public URL, the brokers the private operation accepts, and the MCP
 * function's hop (its client id and secret's ARN, the token endpoint, the private operation's
 * URL). Each function reads its own and ignores the rest. The unit files, which load the service's
 * modules as they are, run with them (vitest.config.ts); a file that loads them afresh with
 * variables of its own starts from them (test/helpers/env.ts).
 */
export const FUNCTION_ENVIRONMENT: Readonly<Record<string, string>> = Object.freeze({
  JWT_ISSUER: 'https://issuer.example.com/',
  PUBLIC_URL: 'https://api.example.com',
  BROKER_ALLOW_LIST: 'mcp-broker',
  BROKER_CLIENT_ID: 'mcp-broker',
  BROKER_CLIENT_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp-broker-client-secret-AbCdEf',
  TOKEN_ENDPOINT: 'https://issuer.example.com/oauth2/token',
  OBSERVATIONS_URL: 'https://private-api.example.com/example/api/mcp/endpoint',
});
