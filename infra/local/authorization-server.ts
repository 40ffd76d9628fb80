import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isGroupName, MAX_GROUP_NAME_CHARACTERS } from '../../lib/auth/endpoint-scope.js';
import { TOKEN_EXCHANGE_GRANT } from '../../lib/auth/token-exchange.js';
import type { Config } from '../../lib/config.js';
import { MethodNotAllowedError } from '../../lib/errors.js';
import { DEMO_TENANTS } from './demo.js';
import { pathOf, targetOf } from './events.js';
import { prune } from './expiring-map.js';
import { BodyTooLargeError, readBoundedBody } from './http.js';
import type { LocalIssuer } from './issuer.js';
import { ClientError, ClientRegistry, isLoopbackHost, type OAuthClient, redirectUriMatches } from './oauth-clients.js';
import { GrantStore } from './oauth-grants.js';
import { errorPage, PAGE_HEADERS, signInPage } from './sign-in-page.js';
import { answerTokenRequest, EXCHANGED_TOKEN_SECONDS } from './token-exchange.js';

/**
 * The local issuer as a complete OAuth 2.1 authorization server for development, so any MCP
 * client signs in to `npm start` the way it signs in to an organisation's identity provider:
 * - RFC 8414 metadata advertising all of the below; the JWKS of the issuer's key;
 * - authorization code with PKCE (S256 only) behind a sign-in page that picks a tenant and a user
 *   (no password, answered only to this machine), with the RFC 9207 `iss` in the redirect;
 * - RFC 8707 resource indicators: a token is issued for the resource asked (its `aud`), one of the
 *   service's public doors (the MCP resource, the inventory audience); any other is refused;
 * - RFC 7591 dynamic client registration, and client ID metadata documents (a URL as `client_id`);
 * - rotating refresh tokens; and the RFC 8693 token exchange of the MCP broker.
 * Its routes are mounted on the public listener in one place: `handle` answers them and returns
 * false for any other request.
 */

export interface AuthorizationServerOptions {
  issuer: LocalIssuer;
  /** The MCP broker's client secret (the one confidential client, for the token exchange). */
  brokerSecret: string;
  /** The public listener's base URL, known once it listens. */
  publicUrl: () => string;
  /** The stack's configuration (its issuer, audiences, claims), known once it listens. */
  config: () => Config;
  /** The tenants the sign-in page offers (default the demo tenants). */
  tenants?: () => readonly string[];
}

export interface LocalAuthorizationServer {
  /** Answers the request when it is one of the issuer's routes (true), else leaves it alone (false). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

/** The issuer's routes, by path. */
export const ISSUER_PATHS = Object.freeze({
  jwks: '/.well-known/jwks.json',
  metadata: '/.well-known/oauth-authorization-server',
  authorize: '/oauth2/authorize',
  token: '/oauth2/token',
  register: '/oauth2/register',
});

const SIGN_IN_SECONDS = 600;
const MAX_PENDING = 1_000;
const FORM_MAX_BYTES = 65_536;
const NAME = /^[A-Za-z0-9._@:+-]{1,128}$/;

/** Public documents and endpoints any web page may call (no cookies are involved anywhere). */
const CORS = Object.freeze({ 'Access-Control-Allow-Origin': '*' });
const NO_STORE_JSON = Object.freeze({
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  ...CORS,
});

interface PendingSignIn {
  client: OAuthClient;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scope: string | undefined;
  expiresAt: number;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = NO_STORE_JSON): void {
  res.writeHead(status, headers);
  res.end(JSON.stringify(body));
}

function sendPage(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, PAGE_HEADERS);
  res.end(html);
}

function sendOAuthError(res: ServerResponse, error: ClientError): void {
  const headers: Record<string, string> = { ...NO_STORE_JSON };
  if (error.status === 401) headers['WWW-Authenticate'] = 'Basic realm="local-issuer"';
  sendJson(res, error.status, { error: error.error, error_description: error.message }, headers);
}

async function readText(req: IncomingMessage): Promise<string> {
  try {
    return (await readBoundedBody(req, FORM_MAX_BYTES)).toString('utf8');
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new ClientError('invalid_request', 'The request body is larger than 64 KiB.');
    throw error;
  }
}

/** The sign-in page answers this machine only: it signs anyone in as anyone. */
function fromThisMachine(req: IncomingMessage): boolean {
  const address = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  return address === '127.0.0.1' || address === '::1' || isLoopbackHost(address);
}

/** `redirectUri` with the authorization response's parameters (and RFC 9207's `iss`). */
function redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new ClientError('invalid_request', `The parameter ${name} was sent more than once.`);
  return values[0];
}

export function localAuthorizationServer(options: AuthorizationServerOptions): LocalAuthorizationServer {
  const { config } = options;
  const clients = new ClientRegistry();
  const pending = new Map<string, PendingSignIn>();
  const grants = new GrantStore(options.issuer, () => ({
    issuer: config().jwtIssuer,
    tenantClaim: config().tenantClaim,
    scopeClaim: config().scopeClaim,
  }));
  const tenants = options.tenants ?? (() => DEMO_TENANTS);
  const endpoint = (path: string): string => `${options.publicUrl()}${path}`;

  /** The resources a user may get a token for: the public doors. Observations is the broker's alone. */
  const resources = (): string[] => [config().mcpAudience, config().jwtAudience];

  const metadata = (): Record<string, unknown> => ({
    issuer: config().jwtIssuer,
    authorization_endpoint: endpoint(ISSUER_PATHS.authorize),
    token_endpoint: endpoint(ISSUER_PATHS.token),
    registration_endpoint: endpoint(ISSUER_PATHS.register),
    jwks_uri: endpoint(ISSUER_PATHS.jwks),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE_GRANT],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  });

  /** GET /oauth2/authorize: checks the request, then shows the sign-in page (RFC 6749 §4.1.1, OAuth 2.1). */
  async function authorize(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const params = targetOf(req).searchParams;
    // Until client and redirect URI are known good, errors are shown here, never redirected (RFC 6749 §4.1.2.1).
    let client: OAuthClient | undefined;
    let redirectUri: string | undefined;
    try {
      const clientId = single(params, 'client_id');
      if (!clientId) throw new ClientError('invalid_request', 'client_id is missing.');
      client = await clients.find(clientId);
      if (!client)
        throw new ClientError(
          'invalid_client',
          'This client is not registered here: register it (dynamic client registration) or use a client ID metadata document URL.',
        );
      redirectUri = single(params, 'redirect_uri') ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
      if (!redirectUri || !redirectUriMatches(client, redirectUri))
        throw new ClientError('invalid_request', 'redirect_uri is missing or is not one the client registered.');
    } catch (error) {
      if (!(error instanceof ClientError)) throw error;
      sendPage(res, 400, errorPage(error.message));
      return;
    }
    const state = params.get('state');
    const back = (error: string, description: string): void => {
      res.writeHead(303, {
        Location: redirectWith(redirectUri ?? '', { error, error_description: description, state, iss: config().jwtIssuer }),
        'Cache-Control': 'no-store',
      });
      res.end();
    };
    try {
      if (single(params, 'response_type') !== 'code') return back('unsupported_response_type', 'Only response_type=code is served.');
      const challenge = single(params, 'code_challenge');
      if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
        return back('invalid_request', 'PKCE is required: send code_challenge (the S256 of a code verifier).');
      if (single(params, 'code_challenge_method') !== 'S256')
        return back('invalid_request', 'code_challenge_method must be S256 (plain is not accepted).');
      const resource = single(params, 'resource') ?? config().mcpAudience;
      if (!resources().includes(resource))
        return back('invalid_target', `resource must be one of this server's resources: ${resources().join(', ')}.`);
      const requestId = randomBytes(24).toString('base64url');
      pending.set(requestId, {
        client,
        redirectUri,
        state,
        codeChallenge: challenge,
        resource,
        scope: single(params, 'scope'),
        expiresAt: Date.now() + SIGN_IN_SECONDS * 1000,
      });
      prune(pending, MAX_PENDING);
      sendPage(
        res,
        200,
        signInPage({
          requestId,
          clientName: client.client_name ?? client.client_id,
          redirectUri,
          resource,
          tenants: tenants(),
          action: ISSUER_PATHS.authorize,
        }),
      );
    } catch (error) {
      if (!(error instanceof ClientError)) throw error;
      back(error.error, error.message);
    }
  }

  /** POST /oauth2/authorize: the sign-in form; sends the browser back with a code, or `access_denied`. */
  async function signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readText(req));
    const requestId = form.get('request') ?? '';
    const request = pending.get(requestId);
    pending.delete(requestId);
    if (!request || request.expiresAt <= Date.now()) {
      sendPage(res, 400, errorPage('This sign-in has expired or was already used: start again from your client.'));
      return;
    }
    const iss = config().jwtIssuer;
    const go = (params: Record<string, string | null>): void => {
      res.writeHead(303, {
        Location: redirectWith(request.redirectUri, { ...params, state: request.state, iss }),
        'Cache-Control': 'no-store',
      });
      res.end();
    };
    if (form.get('action') !== 'allow') return go({ error: 'access_denied', error_description: 'The user cancelled the sign-in.' });
    const tenant = form.get('tenant') ?? '';
    const user = form.get('user') ?? '';
    if (!NAME.test(tenant) || !NAME.test(user)) {
      sendPage(res, 400, errorPage('Tenant and user must be 1 to 128 letters, digits or ._@:+- characters. Go back and correct them.'));
      return;
    }
    // Endpoint groups, separated by spaces; none: a token without the scope claim (the whole tenant).
    const groups = (form.get('groups') ?? '').split(' ').filter((g) => g !== '');
    if (!groups.every(isGroupName)) {
      sendPage(
        res,
        400,
        errorPage(
          `Endpoint groups must be names of 1 to ${MAX_GROUP_NAME_CHARACTERS} characters separated by spaces, or * for all. Go back and correct them.`,
        ),
      );
      return;
    }
    const code = grants.issueCode(
      {
        clientId: request.client.client_id,
        tenant,
        subject: user,
        resource: request.resource,
        scope: request.scope,
        ...(groups.length > 0 ? { groups } : {}),
      },
      request.redirectUri,
      request.codeChallenge,
    );
    go({ code });
  }

  /** POST /oauth2/token: the user grants (code, refresh) for registered clients, the exchange for the broker. */
  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readText(req));
    const grantType = form.get('grant_type');
    if (grantType === TOKEN_EXCHANGE_GRANT) {
      const cfg = config();
      const answer = await answerTokenRequest(
        options.issuer,
        {
          issuer: cfg.jwtIssuer,
          clients: new Map([[cfg.brokerClientId, options.brokerSecret]]),
          subjectAudience: cfg.mcpAudience,
          targetAudiences: [cfg.observationsAudience],
          tenantClaim: cfg.tenantClaim,
          scopeClaim: cfg.scopeClaim,
          lifetimeSeconds: EXCHANGED_TOKEN_SECONDS,
        },
        form,
        req.headers.authorization,
      );
      sendJson(res, answer.status, answer.body, { ...answer.headers, ...CORS });
      return;
    }
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
      throw new ClientError('unsupported_grant_type', `grant_type must be authorization_code, refresh_token or ${TOKEN_EXCHANGE_GRANT}.`);
    }
    const client = await clients.authenticate(form, req.headers.authorization);
    const tokens = grantType === 'authorization_code' ? await grants.redeemCode(client, form) : await grants.refresh(client, form);
    sendJson(res, 200, tokens);
  }

  /** POST /oauth2/register: RFC 7591 dynamic client registration (201 with the client's information). */
  async function register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(await readText(req));
    } catch (error) {
      if (error instanceof ClientError) throw error;
      throw new ClientError('invalid_client_metadata', 'The registration body must be JSON.');
    }
    const { source: _source, ...registered } = clients.register(body);
    sendJson(res, 201, registered);
  }

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>> = {
    [`GET ${ISSUER_PATHS.jwks}`]: async (_req, res) =>
      sendJson(res, 200, options.issuer.jwks, {
        'Content-Type': 'application/json; charset=utf-8',
        'Cache-Control': 'max-age=300',
        ...CORS,
      }),
    [`GET ${ISSUER_PATHS.metadata}`]: async (_req, res) =>
      sendJson(res, 200, metadata(), { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'max-age=300', ...CORS }),
    [`GET ${ISSUER_PATHS.authorize}`]: authorize,
    [`POST ${ISSUER_PATHS.authorize}`]: signIn,
    [`POST ${ISSUER_PATHS.token}`]: token,
    [`POST ${ISSUER_PATHS.register}`]: register,
  };
  /** Paths a browser-based client calls with fetch (and so may preflight). */
  const corsPaths = new Set<string>([ISSUER_PATHS.jwks, ISSUER_PATHS.metadata, ISSUER_PATHS.token, ISSUER_PATHS.register]);
  const issuerPaths = new Set<string>(Object.values(ISSUER_PATHS));

  return {
    async handle(req, res) {
      const path = pathOf(req);
      if (!issuerPaths.has(path)) return false;
      const method = req.method ?? 'GET';
      if (method === 'OPTIONS' && corsPaths.has(path)) {
        res.writeHead(204, {
          ...CORS,
          'Access-Control-Allow-Methods': 'GET, POST',
          'Access-Control-Allow-Headers': 'Authorization, Content-Type, Mcp-Protocol-Version',
          'Access-Control-Max-Age': '600',
        });
        res.end();
        return true;
      }
      const route = routes[`${method} ${path}`];
      if (!route) {
        // The listener answers it as every failure: text/plain, the request id, no-store, with Allow.
        throw new MethodNotAllowedError(
          'This method is not served here.',
          Object.keys(routes)
            .filter((r) => r.endsWith(` ${path}`))
            .map((r) => r.slice(0, r.indexOf(' '))),
        );
      }
      if (path === ISSUER_PATHS.authorize && !fromThisMachine(req)) {
        sendPage(res, 403, errorPage('The local sign-in page answers only on this machine (it signs anyone in without a password).'));
        return true;
      }
      try {
        await route(req, res);
      } catch (error) {
        if (!(error instanceof ClientError)) throw error;
        sendOAuthError(res, error);
      }
      return true;
    },
  };
}
