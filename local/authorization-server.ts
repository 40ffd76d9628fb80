import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { type Configuration, errors, interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
// oidc-provider's own refresh grant, wrapped below (keepingDoorScope): the package has no hook between its parameters and the grant.
import * as refreshTokenGrant from 'oidc-provider/lib/actions/grants/refresh_token.js';
import { isGroupName, MAX_GROUP_NAME_CHARACTERS } from '../lib/data-format/index.js';
import { authorizationStore, type StoreLimits } from './authorization-store.js';
import { clientIdDocuments, documentRefused, FAILURE_ANSWER_MS, isDocumentUrl } from './client-id-documents.js';
import { DEMO_TENANTS } from './demo.js';
import { targetOf } from './events.js';
import { LocalRefusal } from './failure.js';
import type { LocalIssuer } from './issuer.js';
import { BodyTooLargeError, readBoundedBody } from './listener-io.js';
import type { LocalRoute } from './listener-router.js';
import { LOOPBACK_NAMES } from './own-address.js';
import { admitsOrigin, doorResources, SERVICE_DEFAULTS, type StackConfig } from './settings.js';
import { errorPage, PAGE_HEADERS, signInPage } from './sign-in-page.js';
import { TOKEN_EXCHANGE_GRANT } from './token-exchange.js';
import { TOKEN_EXCHANGE_PARAMETERS, tokenExchangeGrant } from './token-exchange-grant.js';

/**
 * The local authorization server, for development: oidc-provider configured so any MCP client
 * signs in to `npm start` as it signs in to an organisation's identity provider:
 * - RFC 8414 metadata, and the JWKS of the issuer's key (the one `npm run token` signs with);
 * - authorization code with PKCE (S256 only) behind a sign-in page that picks a tenant, a user
 *   and endpoint groups (no password), with the RFC 9207 `iss` in the redirect;
 * - RFC 8707 resource indicators for both public doors, as their RFC 9728 documents name them:
 *   JWT access tokens for the door asked, carrying the tenant and endpoint-scope claims chosen;
 * - RFC 7591 registration and client ID metadata documents; rotating refresh tokens, the reuse of
 *   a rotated one ending the grant; and the RFC 8693 token exchange of the MCP broker.
 * What oidc-provider does not do, this module does in a few lines, each saying so.
 */

export interface AuthorizationServerOptions {
  issuer: LocalIssuer;
  /** The MCP broker's client secret (the one confidential client, for the token exchange). */
  brokerSecret: string;
  /** The stack's configuration once it listens (its issuer, public URL, audiences, claims). */
  config: StackConfig;
  /** The tenants the sign-in page offers (default the demo tenants). */
  tenants?: () => readonly string[];
  /** How much of each kind its store keeps (local/authorization-store.ts; default STORE_LIMITS). */
  storeLimits?: StoreLimits;
  /** The fixed time of every client ID metadata document failure (local/client-id-documents.ts; default FAILURE_ANSWER_MS). */
  documentFailureMs?: number;
  /** The development origins of client ID metadata documents in force (default the configuration's, CLIENT_ID_DOCUMENT_DEV_ORIGINS). */
  documentDevOrigins?: () => readonly string[];
}

export interface LocalAuthorizationServer {
  /** Its routes, for the public listener's table. */
  routes: readonly LocalRoute[];
}

/**
 * The server's routes, by path. Its keys are where oidc-provider's own route puts them, under
 * /oauth2, not at `/.well-known/jwks.json`: most providers do not serve that path, and the
 * functions find keys as they find a real provider's, through the discovery document's
 * `jwks_uri` (OpenID Connect's, and RFC 8414's, both served).
 */
export const ISSUER_PATHS = Object.freeze({
  jwks: '/oauth2/jwks',
  metadata: '/.well-known/oauth-authorization-server',
  openIdConfiguration: '/.well-known/openid-configuration',
  authorize: '/oauth2/authorize',
  token: '/oauth2/token',
  register: '/oauth2/register',
  interaction: '/oauth2/interaction',
});

export const ACCESS_TOKEN_SECONDS = 3_600;
/** The one scope of both doors (REQUIRED_SCOPE), granted here even when the doors require none. */
const doorScopeOf = (cfg: StackConfig): string => cfg.requiredScope ?? SERVICE_DEFAULTS.requiredScope;
/** The scopes oidc-provider itself knows (OpenID Connect's), which a sign-in grants when asked. */
const PROVIDER_SCOPES = new Set(['openid', 'offline_access']);
const REFRESH_TOKEN_SECONDS = 7 * 86_400;
const SIGN_IN_SECONDS = 600;
const FORM_MAX_BYTES = 65_536;
const NAME = /^[A-Za-z0-9._@:+-]{1,128}$/;
/** Grants a client may register: the broker's exchange is the broker's alone. */
const CLIENT_GRANTS = new Set(['authorization_code', 'refresh_token']);
/** Schemes no redirect may use: they run or read something in the browser itself. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'about:',
  'blob:',
  'ftp:',
  'ws:',
  'wss:',
  'view-source:',
  'chrome:',
  'chrome-extension:',
  'edge:',
  'filesystem:',
  'resource:',
  'moz-extension:',
  'mailto:',
  'tel:',
  'intent:',
]);

/** The sign-in's choice, kept as the account id oidc-provider carries through codes and refresh tokens. */
interface SignedIn {
  tenant: string;
  user: string;
  groups?: string[];
}

const accountIdOf = (signedIn: SignedIn): string => JSON.stringify(signedIn);

const REFRESH_TOKEN_GRANT = 'refresh_token';
/** A grant type's handler, as oidc-provider's registerGrantType takes it. */
type GrantHandler = Parameters<Provider['registerGrantType']>[1];
const signedInOf = (accountId: string): SignedIn => JSON.parse(accountId) as SignedIn;

/**
 * A redirect URI a client may register, on top of oidc-provider's own rules (which admit http on
 * any host for a web client, and for a native app a private-use scheme named after a domain,
 * reversed, RFC 8252 §7.1): https; http on a loopback name only (RFC 8252 §7.3); or a private-use
 * scheme, never one that runs or reads something in the browser.
 */
function redirectUriRefusal(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'each redirect URI must be a string';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'each redirect URI must be an absolute URL';
  }
  if (value.includes('#') || url.username !== '' || url.password !== '') return 'a redirect URI may have no fragment and no user name';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:')
    return LOOPBACK_NAMES.includes(url.hostname)
      ? undefined
      : 'an http redirect URI must point at this machine (localhost, 127.0.0.1 or [::1]); use https otherwise';
  if (FORBIDDEN_SCHEMES.has(url.protocol) || !/^[a-z][a-z0-9+.-]*:$/.test(url.protocol))
    return `a redirect URI may not use ${url.protocol}`;
  return undefined;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  try {
    return new URLSearchParams((await readBoundedBody(req, FORM_MAX_BYTES)).toString('utf8'));
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new LocalRefusal(400, 'The sign-in form is larger than 64 KiB.');
    throw error;
  }
}

function sendPage(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, PAGE_HEADERS);
  res.end(html);
}

/**
 * The doors' scope added to an authorization request that lacks it (true when the request
 * changed): oidc-provider puts in a resource's token only the scopes the request asked, and MCP
 * clients ask none, or only the OpenID scopes they found listed (mcp-remote asks `openid
 * offline_access`), while every resource this server knows is a door whose tokens need it.
 */
function askDoorScope(target: URL, doorScope: string): boolean {
  const scope = withDoorScope(target.searchParams.get('scope') ?? '', doorScope);
  if (scope === undefined) return false;
  target.searchParams.set('scope', scope);
  return true;
}

/**
 * A space-separated scope list with the doors' scope added; undefined when it already holds it.
 * Empty entries (doubled or edge spaces) are dropped, so the list written back is well formed.
 * The one place an authorization request, a refresh grant and a client registration add it.
 */
function withDoorScope(list: string, doorScope: string): string | undefined {
  const scopes = list.split(' ').filter((scope) => scope !== '');
  return scopes.includes(doorScope) ? undefined : [...scopes, doorScope].join(' ');
}

/**
 * oidc-provider's refresh grant, asked with a `scope` that lacks the doors' scope, the doors' scope
 * added (when it has no `scope`, the refresh token's own scopes, the doors' among them, are used).
 * oidc-provider gives the new access token only the scopes asked, so a client that asks what it
 * registered (`openid offline_access`) would get a 200 token that no door takes. The refresh token
 * holds the doors' scope (every authorization asks it), so adding it grants nothing new.
 */
function keepingDoorScope(handler: GrantHandler, doorScope: string): GrantHandler {
  return (ctx, next) => {
    const params = ctx.oidc.params as { scope?: unknown };
    if (typeof params.scope === 'string') params.scope = withDoorScope(params.scope, doorScope) ?? params.scope;
    return handler(ctx, next);
  };
}

/** The one value of a parameter oidc-provider parsed (a string, or the first of several). */
const single = (value: unknown): string | undefined => (Array.isArray(value) ? value[0] : typeof value === 'string' ? value : undefined);

/**
 * An authorization request that fails is shown on a page, never sent to the redirect URI (RFC 9700
 * §4.11.2), except the user's own cancel: oidc-provider redirects (or posts, in form_post mode) any
 * error once client and redirect URI are known. What decides is how the request ended, as
 * oidc-provider reports it (its `authorization.error` and `server_error` events for this request),
 * never what the redirect's URL says: a registered redirect URI may itself carry `code` or `error`.
 * A completed sign-in (a code) and a cancelled one (the `access_denied` the sign-in page stored as
 * the interaction's result) go back to the client.
 */
function showInvalidAuthorizationsOnAPage(provider: Provider): void {
  const failed = new WeakMap<object, { error: string; description: string | undefined }>();
  const record = (ctx: KoaContextWithOIDC, error: Error & { error?: unknown; error_description?: unknown; expose?: unknown }): void => {
    if (ctx.oidc?.route !== 'authorization' && ctx.oidc?.route !== 'resume') return;
    const code = typeof error.error === 'string' ? error.error : 'server_error';
    const cancelled =
      ctx.oidc?.route === 'resume' && code === 'access_denied' && ctx.oidc.entities.Interaction?.result?.error === 'access_denied';
    if (cancelled) return;
    const description = typeof error.error_description === 'string' && error.expose !== false ? error.error_description : undefined;
    failed.set(ctx, { error: code, description });
  };
  provider.on('authorization.error', record);
  provider.on('server_error', record);
  provider.use(async (ctx, next) => {
    await next();
    const failure = failed.get(ctx);
    if (!failure) return;
    // Whatever oidc-provider made of it (a redirect, a form that posts itself, a page), the failure's page.
    ctx.remove('Location');
    if (ctx.status < 400) ctx.status = 400;
    ctx.set(PAGE_HEADERS);
    ctx.body = errorPage(`${failure.description ?? 'The authorization request could not be served'} (${failure.error}).`);
  });
}

export async function localAuthorizationServer(options: AuthorizationServerOptions): Promise<LocalAuthorizationServer> {
  const cfg = options.config;
  const tenants = options.tenants ?? (() => DEMO_TENANTS);
  const resources = doorResources(cfg);
  const store = authorizationStore(options.storeLimits);
  // oidc-provider's own client store, where a client ID metadata document's client is put for the token endpoint to find.
  const clientStore = store('Client');
  const doorScope = doorScopeOf(cfg);

  // The sign-in is asked every time (tenant, user and groups are chosen per client), never taken from an earlier one.
  const policy = interactionPolicy.base();
  policy
    .get('login')
    ?.checks.add(
      new interactionPolicy.Check('local_sign_in', 'the local sign-in picks tenant and user for each client', (ctx) =>
        ctx.oidc.result?.login ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );

  const configuration: Configuration = {
    // In memory, a store per model (local/authorization-store.ts): forgotten at a restart, as this server is meant to be.
    adapter: store,
    clients: [
      {
        client_id: cfg.brokerClientId,
        client_secret: options.brokerSecret,
        grant_types: [TOKEN_EXCHANGE_GRANT],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    // Native (RFC 8252) unless a client says `web`: http on loopback only, private-use schemes, any loopback port.
    clientDefaults: {
      application_type: 'native',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    responseTypes: ['code'],
    // Listed in the metadata's scopes_supported, so clients that ask what they find listed ask for the doors' scope too.
    scopes: [...PROVIDER_SCOPES, doorScope],
    pkce: { methods: ['S256'], required: () => true },
    jwks: { keys: [options.issuer.signingKey as never] },
    routes: {
      authorization: ISSUER_PATHS.authorize,
      token: ISSUER_PATHS.token,
      registration: ISSUER_PATHS.register,
      jwks: ISSUER_PATHS.jwks,
    },
    cookies: {
      keys: [randomBytes(32).toString('base64url')],
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    // Every lifetime set here (oidc-provider prints a notice for each one left to its default).
    ttl: {
      AccessToken: ACCESS_TOKEN_SECONDS,
      IdToken: ACCESS_TOKEN_SECONDS,
      AuthorizationCode: 60,
      RefreshToken: REFRESH_TOKEN_SECONDS,
      Grant: REFRESH_TOKEN_SECONDS,
      Interaction: SIGN_IN_SECONDS,
      Session: SIGN_IN_SECONDS,
    },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // issueRegistrationAccessToken is an option of oidc-provider 8 that its type declarations leave out.
      registration: {
        enabled: true,
        initialAccessToken: false,
        issueRegistrationAccessToken: false,
        idFactory: () => `local-${randomBytes(16).toString('base64url')}`,
      } as NonNullable<NonNullable<Configuration['features']>['registration']>,
      resourceIndicators: {
        enabled: true,
        // A client that names no resource signs in for the MCP door, as MCP clients before RFC 8707 expect.
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? cfg.mcpAudience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          const audience = resources.get(resource);
          if (audience === undefined)
            throw new errors.InvalidTarget(`resource must be one of this server's resources: ${[...resources.keys()].join(', ')}.`);
          return {
            scope: doorScope,
            audience,
            accessTokenTTL: ACCESS_TOKEN_SECONDS,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    interactions: { policy, url: (_ctx, interaction) => `${ISSUER_PATHS.interaction}/${interaction.uid}` },
    findAccount: (_ctx, accountId) => ({ accountId, claims: () => ({ sub: signedInOf(accountId).user }) }),
    // Refresh tokens for every client that registered the grant (no offline_access scope needed), rotated at each use.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    formats: {
      customizers: {
        // The sign-in's choice into the token: the user as `sub`, the tenant claim, and the endpoint groups when any were given.
        jwt: (_ctx, token, jwt) => {
          const { accountId } = token as { accountId?: string };
          if (!accountId) return jwt;
          const signedIn = signedInOf(accountId);
          jwt.payload.sub = signedIn.user;
          jwt.payload[cfg.tenantClaim] = signedIn.tenant;
          if (signedIn.groups) jwt.payload[cfg.scopeClaim] = signedIn.groups;
          return jwt;
        },
      },
    },
    clientBasedCORS: (_ctx, origin) => admitsOrigin(cfg, origin),
    extraClientMetadata: {
      properties: ['software_id', 'software_version'],
      // Runs for every client (registered, metadata document, configured): the redirect and grant rules oidc-provider leaves open.
      validator: (_ctx, key, _value, metadata) => {
        if (key !== 'software_id') return;
        const grants = (metadata.grant_types as string[] | undefined) ?? [];
        if (metadata.client_id !== cfg.brokerClientId && grants.some((g) => !CLIENT_GRANTS.has(g)))
          throw new errors.InvalidClientMetadata('grant_types may list authorization_code and refresh_token only');
        const uris = (metadata.redirect_uris as unknown[] | undefined) ?? [];
        for (const uri of uris) {
          const refusal = redirectUriRefusal(uri);
          if (refusal) throw new errors.InvalidClientMetadata(`redirect_uris: ${refusal}`);
        }
        // A client that registers a scope set (mcp-remote: `openid offline_access`) is held to it at
        // each authorization, where the doors' scope is always asked (askDoorScope): the doors' scope
        // joins its set, as RFC 7591 §2 lets a server change what it registers (its answer says so).
        if (typeof metadata.scope === 'string') metadata.scope = withDoorScope(metadata.scope, doorScope) ?? metadata.scope;
      },
    },
    discovery: { client_id_metadata_document_supported: true },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.set(PAGE_HEADERS);
      ctx.body = errorPage(typeof out.error_description === 'string' ? out.error_description : 'The request could not be served.');
    },
  };
  const provider = new Provider(cfg.jwtIssuer, configuration);
  provider.registerGrantType(
    TOKEN_EXCHANGE_GRANT,
    tokenExchangeGrant(options.issuer, () => ({
      issuer: cfg.jwtIssuer,
      brokerClientId: cfg.brokerClientId,
      subjectAudience: cfg.mcpAudience,
      targetAudience: cfg.observationsAudience,
      tenantClaim: cfg.tenantClaim,
      scopeClaim: cfg.scopeClaim,
      grantableScope: cfg.observationsScope,
    })),
    [...TOKEN_EXCHANGE_PARAMETERS],
    [],
  );

  provider.registerGrantType(REFRESH_TOKEN_GRANT, keepingDoorScope(refreshTokenGrant.handler, doorScope), refreshTokenGrant.parameters, [
    'resource',
  ]);

  // CORS only for the admitted origins, never `*` (oidc-provider answers any origin on its public documents and preflights).
  provider.use(async (ctx, next) => {
    await next();
    const origin = ctx.get('Origin');
    if (origin !== '' && admitsOrigin(cfg, origin)) {
      if (ctx.response.get('Access-Control-Allow-Origin')) ctx.set('Access-Control-Allow-Origin', origin);
    } else for (const name of Object.keys(ctx.response.headers)) if (name.startsWith('access-control-')) ctx.remove(name);
  });
  showInvalidAuthorizationsOnAPage(provider);

  // A document's client goes into the client store, where oidc-provider checks it as it checks a registration.
  const documentFailureMs = options.documentFailureMs ?? FAILURE_ANSWER_MS;
  const documents = clientIdDocuments({
    failureAnswerMs: documentFailureMs,
    devOrigins: options.documentDevOrigins ?? (() => cfg.clientIdDocumentDevOrigins),
    accept: async (url, metadata) => {
      try {
        await clientStore.upsert(url, metadata, REFRESH_TOKEN_SECONDS);
        await provider.Client.find(url);
        return true;
      } catch {
        await clientStore.destroy(url);
        return false;
      }
    },
  });
  const callback = provider.callback();
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    await callback(req, res);
  };

  /** GET /oauth2/authorize: a client named by its metadata document is fetched here, the one place that fetches it. */
  const authorize = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const target = targetOf(req);
    if (askDoorScope(target, doorScope)) req.url = `${target.pathname}${target.search}`;
    const [url, ...more] = target.searchParams.getAll('client_id');
    if (url !== undefined && more.length === 0 && isDocumentUrl(url) && !(await documents.load(url)).ok)
      return sendPage(res, 400, errorPage(documentRefused(documentFailureMs)));
    await serve(req, res);
  };

  /** The sign-in `uid` names, as this browser's cookie holds it; undefined (and a page said so) when it is gone or another's. */
  const interactionOf = async (
    req: IncomingMessage,
    res: ServerResponse,
    uid: string | undefined,
  ): Promise<Awaited<ReturnType<Provider['interactionDetails']>> | undefined> => {
    const details = await provider.interactionDetails(req, res).catch(() => undefined);
    if (details?.uid === uid) return details;
    sendPage(res, 400, errorPage('This sign-in has expired or was already used: start again from your client.'));
    return undefined;
  };

  /** GET /oauth2/interaction/:uid: the sign-in page. */
  const signInForm = async (req: IncomingMessage, res: ServerResponse, uid: string | undefined): Promise<void> => {
    const details = await interactionOf(req, res, uid);
    if (!details) return;
    const clientId = single(details.params.client_id) ?? '';
    const client = await provider.Client.find(clientId);
    sendPage(
      res,
      200,
      signInPage({
        clientName: client?.clientName ?? clientId,
        redirectUri: single(details.params.redirect_uri) ?? client?.redirectUris?.[0] ?? '',
        resource: single(details.params.resource) ?? cfg.mcpAudience,
        tenants: tenants(),
        action: `${ISSUER_PATHS.interaction}/${details.uid}`,
      }),
    );
  };

  /** POST /oauth2/interaction/:uid: the sign-in form, from a page of this server only; back to the client with a code, or `access_denied`. */
  const signIn = async (req: IncomingMessage, res: ServerResponse, uid: string | undefined): Promise<void> => {
    // A form posted from any other page is refused (it would sign anyone in as anyone): the browser names the page's origin.
    const origins = req.headers.origin;
    if (typeof origins !== 'string' || !cfg.ownOrigins.includes(origins))
      throw new LocalRefusal(403, 'The sign-in form is accepted only from the sign-in page of this server (its Origin).');
    const form = await readForm(req);
    const details = await interactionOf(req, res, uid);
    if (!details) return;
    if (form.get('action') !== 'allow') {
      return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user cancelled the sign-in.' });
    }
    const tenant = form.get('tenant') ?? '';
    const user = form.get('user') ?? '';
    if (!NAME.test(tenant) || !NAME.test(user)) {
      return sendPage(
        res,
        400,
        errorPage('Tenant and user must be 1 to 128 letters, digits or ._@:+- characters. Go back and correct them.'),
      );
    }
    // Endpoint groups, separated by spaces; none: a token without the scope claim (the whole tenant).
    const groups = (form.get('groups') ?? '').split(' ').filter((g) => g !== '');
    if (!groups.every(isGroupName)) {
      return sendPage(
        res,
        400,
        errorPage(
          `Endpoint groups must be names of 1 to ${MAX_GROUP_NAME_CHARACTERS} characters separated by spaces, or * for all. Go back and correct them.`,
        ),
      );
    }
    const accountId = accountIdOf({ tenant, user, ...(groups.length > 0 ? { groups } : {}) });
    const grant = new provider.Grant({ accountId, clientId: single(details.params.client_id) ?? '' });
    const asked = details.params.resource;
    for (const resource of Array.isArray(asked) ? asked : [asked ?? cfg.mcpAudience]) grant.addResourceScope(String(resource), doorScope);
    // The doors' scope is in the server's `scopes` (so its metadata lists it), so the grant names it there too.
    const oidcScopes = (single(details.params.scope) ?? '').split(' ').filter((scope) => PROVIDER_SCOPES.has(scope) || scope === doorScope);
    if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
    let grantId: string;
    try {
      grantId = await grant.save();
    } catch (error) {
      // The store's cap for this client (local/authorization-store.ts), said in its sentence.
      if (!(error instanceof errors.TemporarilyUnavailable)) throw error;
      return sendPage(res, 400, errorPage(error.error_description ?? 'The sign-in could not be kept; try again later.'));
    }
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  };

  // oidc-provider 8 serves its metadata at the OpenID Connect path only; RFC 8414's is the one served here.
  const metadata = (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    req.url = ISSUER_PATHS.openIdConfiguration;
    return serve(req, res);
  };

  const routes: LocalRoute[] = [
    { methods: ['GET', 'OPTIONS'], path: ISSUER_PATHS.metadata, handler: metadata },
    { methods: ['GET', 'OPTIONS'], path: ISSUER_PATHS.openIdConfiguration, handler: serve },
    { methods: ['GET', 'OPTIONS'], path: ISSUER_PATHS.jwks, handler: serve },
    { methods: ['GET'], path: ISSUER_PATHS.authorize, handler: authorize },
    { methods: ['GET'], path: `${ISSUER_PATHS.authorize}/:uid`, handler: serve },
    { methods: ['POST', 'OPTIONS'], path: ISSUER_PATHS.token, handler: serve },
    { methods: ['POST', 'OPTIONS'], path: ISSUER_PATHS.register, handler: serve },
    { methods: ['GET'], path: `${ISSUER_PATHS.interaction}/:uid`, handler: (req, res, _id, params) => signInForm(req, res, params.uid) },
    { methods: ['POST'], path: `${ISSUER_PATHS.interaction}/:uid`, handler: (req, res, _id, params) => signIn(req, res, params.uid) },
  ];
  return { routes };
}
