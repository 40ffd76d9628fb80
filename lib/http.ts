/** A JSON success response; tenant data is never cached by intermediaries. */
export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): { statusCode: number; headers: Record<string, string>; body: string } {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}
