/**
 * The local authorization server's sign-in page: pick a tenant and a user, no password. Local
 * development only, and it says so in red at the top. Every value shown is HTML-escaped (a
 * registered client chooses its own name).
 */

const ENTITIES: Readonly<Record<string, string>> = Object.freeze({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' });
const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

/**
 * The headers of every page: HTML, never cached, never framed, no script. The referrer policy is
 * `same-origin`, not `no-referrer`: under `no-referrer` a browser posts the page's own form with
 * `Origin: null`, which the listener's guard and the form's check refuse as they refuse any page
 * whose origin they cannot see; under `same-origin` the form's post names the page's origin, while
 * no other origin (the client's redirect URI included) is ever sent this page's URL (SECURITY.md).
 */
export const PAGE_HEADERS = Object.freeze({
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'Referrer-Policy': 'same-origin',
});

const STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
.banner{background:#b00020;color:#fff;padding:.8rem 1rem;border-radius:.3rem;font-weight:600}
label{display:block;margin:1rem 0 .3rem}select,input{font-size:1rem;padding:.3rem;width:100%}
button{font-size:1rem;padding:.5rem 1.2rem;margin:1.2rem .5rem 0 0}code{background:#eee;padding:0 .2rem}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><p class="banner">Local development sign-in: no password. Anyone who can open this page on this machine can sign in as any user of any tenant. It exists only in <code>npm start</code>; never expose it.</p>
${body}
</body></html>
`;
}

export interface SignInView {
  clientName: string;
  /** Where the browser is sent afterwards (its origin is shown). */
  redirectUri: string;
  resource: string;
  tenants: readonly string[];
  /** Where the form posts (this sign-in's interaction URL). */
  action: string;
}

export function signInPage(view: SignInView): string {
  let destination = view.redirectUri;
  try {
    const url = new URL(view.redirectUri);
    destination = url.origin === 'null' ? `${url.protocol}//${url.host}` : url.origin;
  } catch {
    // shown as registered
  }
  const options = view.tenants
    .map((t, i) => `<option value="${escapeHtml(t)}"${i === 0 ? ' selected' : ''}>${escapeHtml(t)}</option>`)
    .join('');
  return page(
    'Sign in (local development) — endpoint read service',
    `<h1>Sign in to the endpoint read service</h1>
<p>The client <strong>${escapeHtml(view.clientName)}</strong> asks for a token for <code>${escapeHtml(view.resource)}</code>. After sign-in your browser goes back to <code>${escapeHtml(destination)}</code>.</p>
<form method="post" action="${escapeHtml(view.action)}">
<label for="tenant">Tenant</label>
<select id="tenant" name="tenant">${options}</select>
<label for="user">User (the token's <code>sub</code>)</label>
<input id="user" name="user" value="demo-user" required maxlength="128" pattern="[A-Za-z0-9._@:+\\-]{1,128}">
<label for="groups">Endpoint groups (optional, separated by spaces, <code>*</code> for all; empty: no scope claim, the whole tenant)</label>
<input id="groups" name="groups" value="" placeholder="emea servers">
<button type="submit" name="action" value="allow">Sign in</button>
<button type="submit" name="action" value="deny">Cancel</button>
</form>`,
  );
}

/**
 * A page for a request the server does not send back to the client: any invalid authorization
 * request (even one naming a registered client and redirect URI: a redirect nobody asked for would
 * make the server an open redirector, RFC 9700 §4.11.2), an expired sign-in, a refused form.
 */
export function errorPage(sentence: string): string {
  return page('Sign-in failed (local development) — endpoint read service', `<h1>Sign-in failed</h1>\n<p>${escapeHtml(sentence)}</p>`);
}
