/**
 * Stands in for `@aws-sdk/middleware-endpoint-discovery` in the Lambda bundles (infra/build.ts maps
 * the one onto the other). DynamoDB's endpoint discovery is off unless a client or the environment
 * turns it on, and nothing here does: bundled, it is 9 KiB (an LRU endpoint cache and its
 * dependencies) and a middleware that, discovery off, only works out a cache key per request to
 * find an empty cache.
 *
 * Invariant: the names the DynamoDB client imports exist with the same shapes; discovery stays off,
 * and asking for it (the client option, AWS_ENABLE_ENDPOINT_DISCOVERY, AWS_ENDPOINT_DISCOVERY_ENABLED
 * or the profile's endpoint_discovery_enabled) fails at once with a sentence saying why.
 */
function unavailable(): never {
  throw new Error('DynamoDB endpoint discovery is not bundled; leave it off (infra/bundle/no-endpoint-discovery.ts)');
}

const asksForDiscovery = (value: string | undefined): boolean => value !== undefined && value !== 'false' && value !== '0';

export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: (env: Record<string, string | undefined>): false | undefined => {
    if (asksForDiscovery(env.AWS_ENABLE_ENDPOINT_DISCOVERY) || asksForDiscovery(env.AWS_ENDPOINT_DISCOVERY_ENABLED)) unavailable();
    return undefined;
  },
  configFileSelector: (profile: Record<string, string | undefined>): false | undefined => {
    if (asksForDiscovery(profile.endpoint_discovery_enabled)) unavailable();
    return undefined;
  },
  default: undefined,
};

export const resolveEndpointDiscoveryConfig = <T extends { endpointDiscoveryEnabled?: boolean | undefined }>(
  input: T,
  _options: { endpointDiscoveryCommandCtor: unknown },
): T => {
  if (input.endpointDiscoveryEnabled === true) unavailable();
  return Object.assign(input, { endpointDiscoveryEnabled: () => Promise.resolve(false), isClientEndpointDiscoveryEnabled: false });
};

const noMiddleware = (): { applyToStack: () => void } => ({ applyToStack: () => undefined });

export const endpointDiscoveryMiddlewareOptions = {
  name: 'endpointDiscoveryMiddleware',
  step: 'build',
  tags: ['ENDPOINT_DISCOVERY'],
  override: true,
};
export const getEndpointDiscoveryPlugin = noMiddleware;
export const getEndpointDiscoveryRequiredPlugin = (): never => unavailable();
export const getEndpointDiscoveryOptionalPlugin = noMiddleware;
