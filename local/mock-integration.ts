import type { IncomingMessage } from 'node:http';
import { render } from 'velocityjs';
import { targetOf } from './events.js';
import { type GatewayAnswer, headerValues } from './listener-io.js';
import type { MockMethod } from './public-api-answers.js';

/**
 * API Gateway's MOCK integration, run locally from the method the template has
 * (infra/static-answers.ts, as local/public-api-answers.ts takes it): its request template gives the status code, which selects the
 * integration response; that response's static header parameters and its template (Velocity, run
 * by velocityjs as serverless-offline runs API Gateway's templates) make the answer, with what a
 * template may set through `$context.responseOverride` (status, headers). The subset API Gateway's
 * templates use here: `$input.params(name)` (path, query string, then header, as API Gateway
 * searches them), `$context.requestId`, and static `'value'` parameters; anything else the
 * template asks for is refused loudly, never guessed.
 */

type Integration = MockMethod['Integration'];

/** What a MOCK integration reads of a request: its target and its headers. */
export type MockRequest = Pick<IncomingMessage, 'url' | 'rawHeaders'>;

/** `$input.params(name)`: the path, then the query string, then the header (its last value), as API Gateway reads them; '' when absent. */
function requestParams(req: MockRequest): (name: string) => string {
  const target = targetOf(req as IncomingMessage);
  return (name) => target.searchParams.get(name) ?? headerValues(req as IncomingMessage, name.toLowerCase()).at(-1) ?? '';
}

/** Renders a template of this integration for the request, with its `$context.responseOverride`. */
function renderTemplate(
  template: string,
  req: MockRequest,
  requestId: string,
): { text: string; override: { status?: number; header: Record<string, unknown> } } {
  const override: { status?: number; header: Record<string, unknown> } = { header: {} };
  const text = render(template, {
    input: { params: requestParams(req), body: '' },
    context: { requestId, responseOverride: override },
  });
  return { text, override };
}

/** The value of a static response parameter (`'value'`); any other mapping is not one a MOCK integration here uses. */
function staticValue(parameter: string, expression: string): string {
  const quoted = /^'(.*)'$/s.exec(expression);
  if (!quoted) throw new Error(`the local gateway maps static response parameters only: ${parameter} = ${expression}`);
  return quoted[1] ?? '';
}

/** API Gateway's answer to `req` from a MOCK integration, with its request id. */
export function answerMockIntegration(integration: Integration, req: MockRequest, requestId: string): GatewayAnswer {
  // No body content type (a GET, a preflight): API Gateway takes the application/json template.
  const requestTemplate = integration.RequestTemplates['application/json'];
  if (requestTemplate === undefined) throw new Error('a MOCK integration without an application/json request template');
  const statusCode = String((JSON.parse(renderTemplate(requestTemplate, req, requestId).text) as { statusCode: unknown }).statusCode);
  const chosen =
    integration.IntegrationResponses.find((r) => r.StatusCode === statusCode) ??
    integration.IntegrationResponses.find((r) => !('SelectionPattern' in r));
  if (!chosen) throw new Error(`a MOCK integration with no integration response for ${statusCode}`);
  const headers: Record<string, string> = {};
  for (const [parameter, expression] of Object.entries(chosen.ResponseParameters)) {
    headers[parameter.replace(/^method\.response\.header\./, '')] = staticValue(parameter, expression);
  }
  const template = chosen.ResponseTemplates['application/json'] ?? '';
  const { text, override } = renderTemplate(template, req, requestId);
  for (const [name, value] of Object.entries(override.header)) headers[name] = String(value);
  // API Gateway gives an answer without a content type of its own the template's.
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  return { status: override.status ?? Number(chosen.StatusCode), headers, body: text };
}
