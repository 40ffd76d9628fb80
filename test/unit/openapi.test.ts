import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ATTRIBUTION_SOURCE_PATTERN } from '../../lib/contract/attribution.js';
import { buildOpenApiDocument, renderOpenApiDocument } from '../../lib/contract/openapi.js';
import { TICKET_NUMBER_PATTERN } from '../../lib/contract/schemas.js';
import { ContractMismatchError, expectResponseMatchesContract } from '../helpers/contract.js';
import { useEnvironment } from '../helpers/env.js';

// biome-ignore lint/suspicious/noExplicitAny: the generated OpenAPI document read as JSON; the tests drill into it and assert what they find.
type Json = { [key: string]: any };

const committedText = readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8');
const doc = JSON.parse(committedText) as Json;
const inventory = doc.paths['/api/agents'].get as Json;
const observations = doc.paths['/api/mcp/endpoint'].get as Json;
const schemas = doc.components.schemas as Record<string, Json>;

/** Every node of the document with its JSON pointer, for properties that must hold everywhere. */
function* walk(node: unknown, path = '#'): Generator<[string, Json]> {
  if (node === null || typeof node !== 'object') return;
  if (!Array.isArray(node)) yield [path, node as Json];
  for (const [key, child] of Object.entries(node)) yield* walk(child, `${path}/${key}`);
}

const isObjectSchema = (node: Json): boolean =>
  node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object')) || 'properties' in node;

/** 3.1 style: `type: [..., "null"]`, or `anyOf` with a `{ type: "null" }` branch. */
const acceptsNull = (schema: Json): boolean =>
  (Array.isArray(schema.type) && schema.type.includes('null')) ||
  (Array.isArray(schema.anyOf) && schema.anyOf.some((branch: Json) => branch.type === 'null'));

const parameter = (name: string): Json => observations.parameters.find((p: Json) => p.name === name);

describe('Contract: openapi.json', () => {
  describe('File: generation', () => {
    it('is byte for byte what `npm run openapi` generates from lib/contract', () => {
      // Prepare & act
      const fresh = renderOpenApiDocument();

      // Assess
      expect(committedText, 'openapi.json is stale: run `npm run openapi` and commit it').toBe(fresh);
      expect(fresh.endsWith('}\n')).toBe(true);
    });

    it('generates the same document every time, whatever TICKET_SYSTEM the environment holds', () => {
      // Prepare
      const previous = process.env.TICKET_SYSTEM;
      process.env.TICKET_SYSTEM = 'jira';

      // Act
      const first = renderOpenApiDocument();
      const second = renderOpenApiDocument(buildOpenApiDocument());
      if (previous === undefined) delete process.env.TICKET_SYSTEM;
      else process.env.TICKET_SYSTEM = previous;

      // Assess
      expect(second).toBe(first);
      expect(first).toBe(committedText);
    });

    it('documents another ticket system only when asked to', () => {
      const other = buildOpenApiDocument({ ticketSystem: 'jira' }) as Json;
      const header = other.paths['/api/mcp/endpoint'].get.parameters.find((p: Json) => p.name === 'X-Service-Ticket-System');
      expect(header.schema).toEqual({ type: 'string', const: 'jira' });
    });
  });

  describe('Document: OpenAPI 3.1', () => {
    it('is a valid OpenAPI 3.1 document', async () => {
      // Prepare
      const validator = new Validator();

      // Act
      const result = await validator.validate(structuredClone(doc));

      // Assess
      expect(result.errors).toBeUndefined();
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.info.version).toBe('1.0.0');
    });

    it('has exactly the two read operations, GET only, with their operation ids', () => {
      const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
        Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${(op as Json).operationId}`),
      );
      expect(operations).toEqual(['GET /api/agents listEndpointInventory', 'GET /api/mcp/endpoint getEndpointObservations']);
      expect(doc.webhooks).toBeUndefined();
    });

    it('requires the bearer scheme on both operations', () => {
      expect(doc.components.securitySchemes).toEqual({
        bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
      });
      expect(inventory.security).toEqual([{ bearerAuth: [] }]);
      expect(observations.security).toEqual([{ bearerAuth: [] }]);
    });

    it('marks the observations read internal, reached only privately by the MCP broker', () => {
      expect(observations['x-internal']).toBe(true);
      expect(inventory['x-internal']).toBeUndefined();
      expect(observations.description).toMatch(/reached only privately by the MCP broker/);
      expect(observations.description).toMatch(/never reachable at the public API host/);
      expect(observations.description).toContain('`tools/call` on `/api/mcp`');
      expect(observations.servers[0].variables.private_base_url.default).toBe(
        'https://private-api-id.execute-api.us-east-1.amazonaws.com/prod',
      );
    });

    it('takes no parameters on the inventory and documents every observations parameter with its bounds', () => {
      expect(inventory.parameters).toBeUndefined();
      expect(observations.parameters.map((p: Json) => `${p.in}:${p.name}:${p.required}`)).toEqual([
        'query:agent_id:true',
        'query:minutes:false',
        'query:limit:false',
        'header:X-Service-Reason:true',
        'header:X-Service-Reason-Encoding:false',
        'header:X-Service-Ticket-Number:false',
        'header:X-Service-Ticket-System:false',
        'header:X-Service-Attribution-Source:false',
      ]);
      expect(parameter('agent_id').schema).toEqual({ type: 'string', minLength: 1, maxLength: 128 });
      expect(parameter('minutes').schema).toEqual({ type: 'integer', minimum: 5, maximum: 10080, default: 60 });
      expect(parameter('limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 500, default: 100 });
      expect(parameter('X-Service-Reason').schema).toEqual({ type: 'string', minLength: 3, maxLength: 500 });
      expect(parameter('X-Service-Reason-Encoding').schema).toEqual({ type: 'string', const: 'percent' });
      expect(parameter('X-Service-Attribution-Source').schema).toMatchObject({
        type: 'string',
        pattern: ATTRIBUTION_SOURCE_PATTERN.source,
      });
      expect(parameter('X-Service-Ticket-Number').schema).toEqual({
        type: 'string',
        minLength: 1,
        maxLength: 100,
        pattern: '^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,99}$',
      });
      expect(parameter('X-Service-Ticket-Number').schema.pattern).toBe(TICKET_NUMBER_PATTERN.source);
    });

    it("marks the headers of ours beyond the contract's attribution headers as extensions, never required", () => {
      const extensions = observations.parameters.filter((p: Json) => p['x-extension'] === true).map((p: Json) => `${p.name}:${p.required}`);

      expect(extensions).toEqual(['X-Service-Reason-Encoding:false', 'X-Service-Attribution-Source:false']);
      expect(parameter('X-Service-Attribution-Source').description).toMatch(
        /`argument` when the value was the assistant's tool argument, `person` when the tool asked the person/,
      );
      for (const value of parameter('X-Service-Attribution-Source').schema.examples) expect(value).toMatch(ATTRIBUTION_SOURCE_PATTERN);
    });

    it('allows exactly one ticket system, the configured default, as a const', async () => {
      // The observations function's configuration, with nothing but what it cannot do without.
      useEnvironment({});
      const { ticketSystem } = (await import('../../lib/config.js')).OBSERVATIONS_CONFIG.parse(process.env);
      expect(ticketSystem).toBe('servicenow');
      expect(parameter('X-Service-Ticket-System').schema).toEqual({ type: 'string', const: ticketSystem });
      expect(parameter('X-Service-Ticket-System').description).toMatch(/Sent together with `X-Service-Ticket-Number`/);
    });

    it('answers 200 application/json with the wire type and a text/plain string on any failure', () => {
      for (const [operation, component] of [
        [inventory, 'AgentInventory'],
        [observations, 'EndpointDashboard'],
      ] as const) {
        expect(Object.keys(operation.responses)).toEqual(['200', 'default']);
        expect(operation.responses['200'].content).toEqual({
          'application/json': { schema: { $ref: `#/components/schemas/${component}` } },
        });
        expect(operation.responses.default.content).toEqual({ 'text/plain': { schema: { type: 'string', minLength: 1 } } });
        expect(operation.responses.default.headers['Cache-Control'].schema).toEqual({ type: 'string', const: 'no-store' });
      }
      expect(schemas.AgentInventory).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/AgentSummary' } });
    });

    it('states the failure statuses of DESIGN §6 on each operation', () => {
      const observationsFailures = observations.responses.default.description as string;
      for (const status of ['400', '401 with `WWW-Authenticate: Bearer`', '403', '404', '503 with `Retry-After`', '504', '500']) {
        expect(observationsFailures).toContain(`- ${status}`);
      }
      expect(observationsFailures).toMatch(/audit write failed/);
      expect(observationsFailures).toMatch(/another tenant's: the same answer/);
      const inventoryFailures = inventory.responses.default.description as string;
      for (const status of ['401 with `WWW-Authenticate: Bearer`', '403', '503 with `Retry-After`', '504', '500']) {
        expect(inventoryFailures).toContain(`- ${status}`);
      }
      expect(inventoryFailures).not.toMatch(/- 400|- 404/);
    });

    it('states the meaning DESIGN §4 gives to the open fields', () => {
      expect(inventory.description).toMatch(/`stale`.*`disconnected`.*`never_connected`/s);
      expect(inventory.description).toMatch(/`is_online` is true exactly when `connection_state` is `connected`/);
      expect(inventory.description).toMatch(
        /order: the store's sort-key order of the endpoints' records, which is `agent_id` ascending by Unicode code point/,
      );
      expect(inventory.description).toMatch(/never `200 \[\]`/);
      for (const phrase of [
        'endpoint-dashboard/v1',
        'percent used, 0 to 100',
        'oldest first',
        'critical > warning > unknown > ok',
        'warning at 85 or more, critical at 95 or more',
        '`null` exactly when `metrics` is `null`',
        'never an empty dashboard',
      ]) {
        expect(observations.description).toContain(phrase);
      }
      expect(parameter('limit').description).toMatch(/downsampled into `limit` equal time buckets/);
    });

    it('closes every object schema with additionalProperties: false', () => {
      const objects = [...walk(doc)].filter(([, node]) => isObjectSchema(node));
      expect(objects.map(([path]) => path).sort()).toEqual([
        '#/components/schemas/AgentSummary',
        '#/components/schemas/DashboardEndpoint',
        '#/components/schemas/DashboardFinding',
        '#/components/schemas/DashboardMetric',
        '#/components/schemas/DashboardSample',
        '#/components/schemas/EndpointDashboard',
      ]);
      for (const [path, node] of objects) expect(node.additionalProperties, path).toBe(false);
    });

    it('writes nullable fields in 3.1 style (type arrays or anyOf null), and only the nullable ones', () => {
      const nullable = Object.fromEntries(
        Object.entries(schemas)
          .filter(([, schema]) => schema.type === 'object')
          .map(([name, schema]) => [
            name,
            Object.entries(schema.properties as Record<string, Json>)
              .filter(([, field]) => acceptsNull(field))
              .map(([field]) => field),
          ]),
      );
      expect(nullable).toEqual({
        AgentSummary: [],
        DashboardEndpoint: ['client_name', 'last_heartbeat'],
        DashboardMetric: ['value'],
        DashboardSample: ['cpu', 'memory', 'disk'],
        DashboardFinding: [],
        EndpointDashboard: ['observed_at', 'expires_at', 'metrics', 'history', 'findings'],
      });
      expect([...walk(doc)].filter(([, node]) => 'nullable' in node && typeof node.nullable === 'boolean')).toEqual([]);
    });

    it('requires every dashboard field, and on AgentSummary only the seven basics', () => {
      for (const name of ['EndpointDashboard', 'DashboardEndpoint', 'DashboardMetric', 'DashboardSample', 'DashboardFinding']) {
        expect(schemas[name]!.required, name).toEqual(Object.keys(schemas[name]!.properties));
      }
      expect(schemas.AgentSummary!.required).toEqual(['agent_id', 'hostname', 'os', 'arch', 'version', 'is_online', 'connection_state']);
      expect(schemas.DateTime).toMatchObject({ type: 'string', format: 'date-time' });
    });

    it('resolves every $ref to a component of the document', () => {
      const refs = [...walk(doc)].filter(([, node]) => typeof node.$ref === 'string').map(([, node]) => node.$ref as string);
      expect(refs.length).toBeGreaterThan(0);
      for (const ref of refs) expect(schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
    });
  });
});

/** A dashboard that satisfies the contract, nulls included where they are allowed. */
function dashboard(): Json {
  return {
    schema: 'endpoint-dashboard/v1',
    endpoint: { id: 'a-1', hostname: 'web-1', os: 'linux', client_name: null, last_heartbeat: '2026-11-21T10:00:00Z' },
    evaluated_at: '2026-11-21T10:05:00.000Z',
    observed_at: '2026-11-21T10:00:00Z',
    expires_at: '2026-11-21T10:10:00Z',
    window_minutes: 60,
    status: 'unknown',
    metrics: [
      { key: 'cpu', label: 'CPU usage', value: 12.5, status: 'ok', detail: '12.5% (warning at 85%, critical at 95%)' },
      { key: 'memory', label: 'Memory usage', value: null, status: 'unknown', detail: 'not reported' },
      { key: 'disk', label: 'Disk usage', value: 40, status: 'ok', detail: '40% (warning at 85%, critical at 95%)' },
    ],
    history: [{ observed_at: '2026-11-21T10:00:00Z', cpu: 12.5, memory: null, disk: 40 }],
    findings: [{ scope: 'metric', label: 'Memory not reported', detail: 'No memory value in the newest sample.', status: 'unknown' }],
    policy_description: 'Percent used; warning at 85, critical at 95.',
  };
}

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };
const TEXT_HEADERS = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' };

describe('Helper: expectResponseMatchesContract', () => {
  it('accepts a dashboard that follows the contract', () => {
    expect(() =>
      expectResponseMatchesContract('getEndpointObservations', { status: 200, headers: JSON_HEADERS, body: JSON.stringify(dashboard()) }),
    ).not.toThrow();
  });

  it('accepts an inventory with an offline endpoint whose optional fields are omitted', () => {
    const body = JSON.stringify([
      {
        agent_id: 'a-1',
        hostname: 'web-1',
        os: 'linux',
        arch: 'x86_64',
        version: '2.4.1',
        is_online: false,
        connection_state: 'never_connected',
      },
    ]);
    const headers = new Headers({ ...JSON_HEADERS });
    expect(() => expectResponseMatchesContract('listEndpointInventory', { status: 200, headers, body })).not.toThrow();
  });

  it('requires the inventory to say it is never cached (Cache-Control: no-store, a required header)', () => {
    const { 'Cache-Control': _, ...withoutCacheControl } = JSON_HEADERS;
    expect(() => expectResponseMatchesContract('listEndpointInventory', { status: 200, headers: withoutCacheControl, body: '[]' })).toThrow(
      /header cache-control is missing/,
    );
    expect(() =>
      expectResponseMatchesContract('listEndpointInventory', {
        status: 200,
        headers: { ...JSON_HEADERS, 'Cache-Control': 'max-age=60' },
        body: '[]',
      }),
    ).toThrow(/header cache-control/);
  });

  it('rejects an undeclared property and names it', () => {
    const body = JSON.stringify({ ...dashboard(), tenant_id: 'acme' });
    expect(() => expectResponseMatchesContract('getEndpointObservations', { status: 200, headers: JSON_HEADERS, body })).toThrow(
      /body has the undeclared property "tenant_id"/,
    );
  });

  it('rejects a null where the field is not nullable', () => {
    const value = dashboard();
    value.endpoint.hostname = null;
    expect(() =>
      expectResponseMatchesContract('getEndpointObservations', { status: 200, headers: JSON_HEADERS, body: JSON.stringify(value) }),
    ).toThrow(/body\/endpoint\/hostname must be string/);
  });

  it('rejects an empty string where an optional inventory field must be omitted instead', () => {
    const body = JSON.stringify([
      {
        agent_id: 'a-1',
        hostname: 'h',
        os: 'linux',
        arch: 'x86_64',
        version: '1',
        is_online: false,
        connection_state: 'stale',
        last_heartbeat: '',
      },
    ]);
    expect(() => expectResponseMatchesContract('listEndpointInventory', { status: 200, headers: JSON_HEADERS, body })).toThrow(
      /body\/0\/last_heartbeat/,
    );
  });

  it('rejects a 200 that is not application/json, or not JSON at all', () => {
    expect(() =>
      expectResponseMatchesContract('listEndpointInventory', {
        status: 200,
        headers: { ...JSON_HEADERS, 'Content-Type': 'text/plain' },
        body: '[]',
      }),
    ).toThrow(/Content-Type is "text\/plain", expected application\/json for status 200/);
    expect(() => expectResponseMatchesContract('listEndpointInventory', { status: 200, headers: JSON_HEADERS, body: 'ok' })).toThrow(
      /body is not JSON/,
    );
  });

  it('accepts a text/plain failure with a sentence', () => {
    expect(() =>
      expectResponseMatchesContract('getEndpointObservations', {
        status: 404,
        headers: new Headers(TEXT_HEADERS),
        body: 'No such endpoint. (request id: r-1)\n',
      }),
    ).not.toThrow();
  });

  it('rejects a failure answered as application/json', () => {
    const call = () =>
      expectResponseMatchesContract('getEndpointObservations', {
        status: 400,
        headers: JSON_HEADERS,
        body: JSON.stringify({ message: 'bad request' }),
      });
    expect(call).toThrow(ContractMismatchError);
    expect(call).toThrow(/getEndpointObservations answered 400 outside the contract[\s\S]*expected text\/plain for status 400/);
  });

  it('rejects a failure with an empty body, or without Cache-Control: no-store', () => {
    expect(() => expectResponseMatchesContract('listEndpointInventory', { status: 500, headers: TEXT_HEADERS, body: '' })).toThrow(
      /body is empty/,
    );
    expect(() =>
      expectResponseMatchesContract('listEndpointInventory', { status: 500, headers: { 'Content-Type': 'text/plain' }, body: 'Failed.' }),
    ).toThrow(/header cache-control is missing/);
  });

  it('rejects a 401 without WWW-Authenticate and a 503 without Retry-After', () => {
    expect(() => expectResponseMatchesContract('listEndpointInventory', { status: 401, headers: TEXT_HEADERS, body: 'No token.' })).toThrow(
      /www-authenticate is missing/,
    );
    expect(() =>
      expectResponseMatchesContract('listEndpointInventory', {
        status: 401,
        headers: { ...TEXT_HEADERS, 'WWW-Authenticate': 'Bearer' },
        body: 'No token.',
      }),
    ).not.toThrow();
    expect(() => expectResponseMatchesContract('getEndpointObservations', { status: 503, headers: TEXT_HEADERS, body: 'Later.' })).toThrow(
      /retry-after is missing/,
    );
    expect(() =>
      expectResponseMatchesContract('getEndpointObservations', {
        status: 503,
        headers: { ...TEXT_HEADERS, 'Retry-After': 5 },
        body: 'Later.',
      }),
    ).not.toThrow();
  });

  it('rejects a timestamp that is not an RFC 3339 date-time', () => {
    const value = { ...dashboard(), evaluated_at: 'yesterday' };
    expect(() =>
      expectResponseMatchesContract('getEndpointObservations', { status: 200, headers: JSON_HEADERS, body: JSON.stringify(value) }),
    ).toThrow(/body\/evaluated_at must match format "date-time"/);
  });

  it('refuses an operation the contract does not have', () => {
    expect(() => expectResponseMatchesContract('deleteAgent', { status: 200, headers: JSON_HEADERS, body: '{}' })).toThrow(
      /no operation "deleteAgent"/,
    );
  });
});
