/**
 * The `WWW-Authenticate` value of a 401 from a protected resource (RFC 6750 §3, RFC 9728 §5.1):
 * the Bearer scheme, where the resource's metadata is (`resource_metadata`), and, when a token was
 * presented and refused, `error="invalid_token"` with a description. MCP clients follow
 * `resource_metadata` to the authorization server and sign in.
 */
export interface BearerChallenge {
  /** The URL of the resource's RFC 9728 metadata document. */
  resourceMetadata: string;
  /** Present when a token was presented and refused (RFC 6750 §3.1: not when none was sent). */
  error?: 'invalid_token' | 'invalid_request' | undefined;
  /** One sentence for a person; characters a quoted-string may not hold become spaces or `'`. */
  description?: string | undefined;
}

/** RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E (no `"`, no `\`, printable ASCII). */
function quotable(text: string): string {
  return text.replace(/"/g, "'").replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, ' ');
}

/**
 * The challenge, e.g. `Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/api/mcp", error="invalid_token", error_description="The bearer token has expired."`.
 * Invariant: always the Bearer scheme and `resource_metadata`; `error` only with a presented token.
 */
export function bearerChallenge(challenge: BearerChallenge): string {
  const params = [`resource_metadata="${quotable(challenge.resourceMetadata)}"`];
  if (challenge.error) params.push(`error="${challenge.error}"`);
  if (challenge.error && challenge.description) params.push(`error_description="${quotable(challenge.description)}"`);
  return `Bearer ${params.join(', ')}`;
}
