import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/inventory/handler.js';
import { resetConfig } from '../../lib/config.js';
import { setDynamo } from '../../lib/store/client.js';
import { eventFixture, testContext } from '../helpers/events.js';
import { closedPortEndpoint, silentEndpoint } from '../helpers/faults.js';

type Result = { statusCode: number; headers: Record<string, string>; body: string };

function pointAt(endpoint: string): void {
  Object.assign(process.env, { DYNAMODB_ENDPOINT: endpoint, DYNAMODB_TIMEOUT_MS: '300', DYNAMODB_MAX_ATTEMPTS: '2' });
  resetConfig();
  setDynamo(undefined);
}

const list = async (): Promise<Result> =>
  (await handler(eventFixture<APIGatewayProxyEventV2WithJWTAuthorizer>('http-api', 'list-agents'), testContext('inventory'))) as Result;

describe('Handler: inventory when DynamoDB fails (real network faults)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('returns 503 with Retry-After, never 200 [], when DynamoDB refuses connections', async () => {
    pointAt(await closedPortEndpoint());

    const response = await list();

    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toMatch(/^[0-9]+$/);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toMatch(/^The inventory store is unavailable right now; try again later\. \(request id: [0-9a-f-]{36}\)\n$/);
  });

  it('returns 504 when DynamoDB accepts the connection but never answers', async () => {
    const silent = await silentEndpoint();
    cleanups.push(silent.close);
    pointAt(silent.endpoint);

    const response = await list();

    expect(response.statusCode).toBe(504);
    expect(response.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toMatch(/^The inventory store timed out; try again\. \(request id: [0-9a-f-]{36}\)\n$/);
    expect(response.body).not.toMatch(/127\.0\.0\.1|Error|at /);
  });
});
