import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Checks real HTTP responses against the committed `openapi.json` (the contract clients read),
 * not against the zod types it was generated from: a response that passes here is one a client
 * generated from the document accepts. Call it from every e2e test.
 */

type JsonObject = { [key: string]: unknown };

export interface ContractResponse {
  status: number;
  /** A fetch `Headers`, or a plain record such as a Lambda result's `headers` (any key case). */
  headers: Headers | Record<string, string | number | boolean | undefined>;
  body: string;
}

/** A response that breaks the contract; the message lists every problem and quotes the body. */
export class ContractMismatchError extends Error {
  override name = 'ContractMismatchError';
  constructor(
    readonly operationId: string,
    readonly status: number,
    readonly problems: string[],
    body: string,
  ) {
    const quoted = body.length > 600 ? `${body.slice(0, 600)}… (${body.length} characters)` : body;
    super(
      `${operationId} answered ${status} outside the contract (openapi.json):\n` +
        problems.map((p) => `  - ${p}`).join('\n') +
        `\n  body: ${quoted === '' ? '(empty)' : quoted}`,
    );
  }
}

const DOCUMENT_ID = 'urn:endpoint-read-service:openapi';
const OPENAPI_PATH = new URL('../../openapi.json', import.meta.url);

/** DESIGN §6: these failures carry a header the client acts on. */
const HEADER_REQUIRED_FOR_STATUS: Readonly<Record<number, string>> = { 401: 'www-authenticate', 503: 'retry-after' };

interface OperationContract {
  responses: Record<string, ResponseContract>;
}
interface ResponseContract {
  mediaType: string;
  body: ValidateFunction;
  headers: { name: string; required: boolean; validate: ValidateFunction }[];
}

let operations: Map<string, OperationContract> | undefined;

function pointer(...parts: string[]): string {
  return parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
}

/**
 * Compiles every response of every operation once. The whole document is one schema resource, so
 * `#/components/schemas/...` references resolve exactly as an OpenAPI tool resolves them; its
 * non-schema top-level keys are declared as annotation-only keywords so ajv stays strict.
 */
function loadOperations(): Map<string, OperationContract> {
  const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as JsonObject & { paths: Record<string, Record<string, JsonObject>> };
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  // Header values arrive as strings; `Retry-After: 5` is an integer header.
  const headerAjv = new Ajv2020({ strict: true, allErrors: true, coerceTypes: true, allowUnionTypes: true });
  addFormats(headerAjv);
  ajv.addVocabulary(Object.keys(document).filter((k) => !k.startsWith('$')));
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });

  const result = new Map<string, OperationContract>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const operationId = operation.operationId as string;
      const responses: Record<string, ResponseContract> = {};
      for (const [status, response] of Object.entries(operation.responses as Record<string, JsonObject>)) {
        const content = response.content as Record<string, JsonObject>;
        const [mediaType] = Object.keys(content);
        const at = `${DOCUMENT_ID}#/${pointer('paths', path, method, 'responses', status, 'content', mediaType!, 'schema')}`;
        const body = ajv.getSchema(at);
        if (!body) throw new Error(`openapi.json: no schema at ${at}`);
        const headers = Object.entries((response.headers ?? {}) as Record<string, JsonObject>).map(([name, header]) => ({
          name: name.toLowerCase(),
          required: header.required === true,
          validate: headerAjv.compile(header.schema as JsonObject),
        }));
        responses[status] = { mediaType: mediaType!, body, headers };
      }
      result.set(operationId, { responses });
    }
  }
  return result;
}

function headerOf(headers: ContractResponse['headers'], name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && value !== undefined) return String(value);
  }
  return undefined;
}

function describeError(e: ErrorObject): string {
  const where = e.instancePath === '' ? 'body' : `body${e.instancePath}`;
  if (e.keyword === 'additionalProperties') return `${where} has the undeclared property "${String(e.params.additionalProperty)}"`;
  if (e.keyword === 'required') return `${where} lacks the required property "${String(e.params.missingProperty)}"`;
  if (e.keyword === 'pattern') return `${where} does not match the pattern of its schema`;
  return `${where} ${e.message ?? e.keyword}`;
}

/**
 * One line per problem. ajv reports a failed nullable (`anyOf: [T, null]`) as one error per branch
 * plus the anyOf itself: say "must be string or null" instead, or nothing when a deeper error
 * already explains it; and skip the date-time pattern when its format error says the same.
 */
function describeErrors(errors: ErrorObject[]): string[] {
  const lines: string[] = [];
  for (const e of errors) {
    const siblings = errors.filter((o) => o.instancePath === e.instancePath);
    const inAnyOf = siblings.some((o) => o.keyword === 'anyOf');
    if (e.keyword === 'pattern' && siblings.some((o) => o.keyword === 'format')) continue;
    if (inAnyOf && (e.keyword === 'type' || e.keyword === 'anyOf')) {
      const deeper = errors.some((o) => o.instancePath.startsWith(`${e.instancePath}/`));
      if (deeper || e.keyword === 'type') continue;
      const types = siblings.filter((o) => o.keyword === 'type').map((o) => String(o.params.type));
      lines.push(`${e.instancePath === '' ? 'body' : `body${e.instancePath}`} must be ${types.join(' or ')}`);
      continue;
    }
    lines.push(describeError(e));
  }
  return [...new Set(lines)];
}

/** The media type without parameters, lower case: `text/plain; charset=utf-8` -> `text/plain`. */
function mediaTypeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase();
}

/**
 * Asserts that a response of `operationId` is one the contract allows: a 200 is `application/json`
 * whose parsed body validates against the operation's 200 schema (ajv, JSON Schema 2020-12, formats
 * checked); any other status is the `default` failure, `text/plain` with a non-empty body. Declared
 * response headers are checked too (`Cache-Control: no-store`), and a 401 must carry
 * `WWW-Authenticate`, a 503 `Retry-After`. Throws a ContractMismatchError listing every problem.
 */
export function expectResponseMatchesContract(operationId: string, response: ContractResponse): void {
  operations ??= loadOperations();
  const operation = operations.get(operationId);
  if (!operation) {
    throw new Error(`openapi.json has no operation "${operationId}" (known: ${[...operations.keys()].join(', ')})`);
  }
  const key = response.status === 200 ? '200' : 'default';
  const contract = operation.responses[key];
  if (!contract) throw new Error(`openapi.json: ${operationId} declares no "${key}" response`);

  const problems: string[] = [];
  const contentType = headerOf(response.headers, 'content-type');
  if (mediaTypeOf(contentType) !== contract.mediaType) {
    problems.push(
      `Content-Type is ${contentType === undefined ? 'missing' : `"${contentType}"`}, expected ${contract.mediaType} for status ${response.status}`,
    );
  }

  let body: unknown = response.body;
  if (contract.mediaType === 'application/json') {
    try {
      body = JSON.parse(response.body);
    } catch {
      problems.push('body is not JSON');
      body = undefined;
    }
  }
  if (contract.mediaType !== 'application/json' && response.body.trim() === '') {
    problems.push('body is empty; a failure must say what failed');
  } else if (body !== undefined && !contract.body(body)) {
    problems.push(...describeErrors(contract.body.errors ?? []));
  }

  for (const header of contract.headers) {
    const value = headerOf(response.headers, header.name);
    if (value === undefined) {
      if (header.required) problems.push(`header ${header.name} is missing`);
    } else if (!header.validate(value)) {
      problems.push(`header ${header.name} "${value}" ${header.validate.errors?.[0]?.message ?? 'is invalid'}`);
    }
  }
  const statusHeader = HEADER_REQUIRED_FOR_STATUS[response.status];
  if (statusHeader && headerOf(response.headers, statusHeader) === undefined) {
    problems.push(`header ${statusHeader} is missing; a ${response.status} must carry it`);
  }

  if (problems.length > 0) throw new ContractMismatchError(operationId, response.status, problems, response.body);
}
