import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { createMcpHandler, isLegacyRequest, McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { agentsPartition } from '../lib/data-format/keys.js';

/**
 * The MCP door's cold-start floor: a Lambda handler that is nothing but the MCP SDK serving one
 * tool, `list_endpoints`, that makes one DynamoDB `Query` (the first page of the caller's tenant,
 * from the authorizer's context as the door takes it) and returns the items as text, statelessly
 * and in JSON in both protocol eras as the SDK's documentation composes it (and the door does): a
 * 2025-era request through a stateless Streamable HTTP transport of its own with JSON responses
 * (the SDK's own legacy fallback answers with an event stream, which took the floor above the
 * door), a 2026-07-28 one through the SDK's per-request handler (`createMcpHandler`). Bundled by
 * the bench with the very esbuild options of the service's bundles and run in the MCP function's
 * sandbox, so the door's ratio to it measures what the door adds to the SDK it is built on;
 * bench/bare-sdk-handler.ts, without MCP, says what the SDK itself costs.
 */
const client = new DynamoDBClient({
  region: process.env.AWS_REGION ?? 'us-east-1',
  ...(process.env.DYNAMODB_ENDPOINT ? { endpoint: process.env.DYNAMODB_ENDPOINT } : {}),
});

function server(tenant: unknown): McpServer {
  const built = new McpServer({ name: 'bare-mcp', version: '1.0.0' });
  built.registerTool('list_endpoints', { description: "The tenant's first page of agent records." }, async () => {
    const page = await client.send(
      new QueryCommand({
        TableName: process.env.DATA_TABLE,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: agentsPartition(String(tenant ?? '')) } },
      }),
    );
    return { content: [{ type: 'text', text: JSON.stringify(page.Items ?? []) }] };
  });
  return built;
}

const modern = createMcpHandler((ctx) => server(ctx.authInfo?.extra?.tenant), { legacy: 'reject', responseMode: 'json' });

export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers.set(name, value);
  const body = event.body === null ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  const request = new Request(`https://${headers.get('host') ?? 'localhost'}${event.path}`, { method: event.httpMethod, headers, body });
  // The body parsed once and handed over, as the SDK allows (reading it from the Request's stream a second time costs more).
  const parsedBody: unknown = JSON.parse(body);
  const tenant = event.requestContext.authorizer?.tenant;
  const options = { authInfo: { token: '', clientId: 'bench', scopes: [], extra: { tenant } }, parsedBody };
  let response: Response;
  if (await isLegacyRequest(request, parsedBody)) {
    const legacy = server(tenant);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await legacy.connect(transport);
    response = await transport.handleRequest(request, options);
  } else {
    response = await modern.fetch(request, options);
  }
  return { statusCode: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}
