// oidc-provider's refresh-token grant module, which its own declarations (@types/oidc-provider) leave out.
declare module 'oidc-provider/lib/actions/grants/refresh_token.js' {
  import type Provider from 'oidc-provider';

  export const handler: Parameters<Provider['registerGrantType']>[1];
  export const parameters: Set<string>;
}
