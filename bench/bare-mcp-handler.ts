import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { agentsPartition } from '../lib/store/keys.js';

/**
 * The MCP door's cold-start floor: a Lambda handler that is nothing but the MCP SDK's own handler
 * (`createMcpHandler`, its defaults) serving one tool, `list_endpoints`, that makes one DynamoDB
 * `Query` (the first page of the caller's tenant, from the authorizer's context as the door takes
 * it) and returns the items as text. Bundled by the bench with the very esbuild options of the
 * service's bundles and run in the MCP function's sandbox, so the door's ratio to it measures what
 * the door adds to the SDK it is built on; bench/bare-sdk-handler.ts, without MCP, says what the
 * SDK itself costs.
 */
const client = new DynamoDBClient({
  region: process.env.AWS_REGION ?? 'us-east-1',
  ...(process.env.DYNAMODB_ENDPOINT ? { endpoint: process.env.DYNAMODB_ENDPOINT } : {}),
});

const mcp = createMcpHandler((ctx) => {
  const server = new McpServer({ name: 'bare-mcp', version: '1.0.0' });
  server.registerTool('list_endpoints', { description: "The tenant's first page of agent records." }, async () => {
    const page = await client.send(
      new QueryCommand({
        TableName: process.env.DATA_TABLE,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: agentsPartition(String(ctx.authInfo?.extra?.tenant ?? '')) } },
      }),
    );
    return { content: [{ type: 'text', text: JSON.stringify(page.Items ?? []) }] };
  });
  return server;
});

export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers.set(name, value);
  const request = new Request(`https://${headers.get('host') ?? 'localhost'}${event.path}`, {
    method: event.httpMethod,
    headers,
    body: event.body === null ? null : event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body,
  });
  const tenant = event.requestContext.authorizer?.tenant;
  const response = await mcp.fetch(request, { authInfo: { token: '', clientId: 'bench', scopes: [], extra: { tenant } } });
  return { statusCode: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}
