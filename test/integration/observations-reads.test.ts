import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleSeries } from '../../infra/local/demo.js';
import { loadFleet } from '../../infra/local/fleet.js';
import { EndpointDashboard } from '../../lib/contract/schemas.js';
import { readEndpointObservations } from '../../lib/observations/read.js';
import { setDynamo } from '../../lib/store/client.js';
import { documentClient, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine } from '../helpers/env.js';

const minute = Math.floor(Date.now() / 60_000) * 60_000;
const agent = (id: string, extra: object = {}) => ({ agent_id: id, hostname: id, os: 'linux', arch: 'x86_64', version: '1', ...extra });

/** A real client to the real engine that records every command it sends (observation, not a fake). */
function recordingClient(endpoint: string, log: { name: string; input: Record<string, unknown> }[]): DynamoDBDocumentClient {
  const client = documentClient(endpoint);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      log.push({ name: String(context.commandName), input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  return client;
}

describe('Function: readEndpointObservations against a real DynamoDB API', () => {
  let engine: TestEngine;
  const log: { name: string; input: Record<string, unknown> }[] = [];
  const read = (agentId: string, minutes = 60) =>
    readEndpointObservations({ tenantId: 'acme', query: { agent_id: agentId, minutes, limit: 100 }, attribution: { reason: 'test' }, now: new Date(minute + 1000) });

  beforeAll(async () => {
    engine = await startTestEngine();
    useEngine(engine);
    await loadFleet(
      engine.db,
      engine.tables,
      {
        tenants: [
          {
            tenant_id: 'acme',
            agents: [
              agent('busy', { samples: sampleSeries(minute, 600, 'ok', () => 0.5) }),
              agent('old', { samples: sampleSeries(minute - 5 * 3_600_000, 3, 'ok', () => 0.5) }),
              // Past the 8-day retention: TTL deletion may lag, reads must ignore it.
              agent('ancient', { samples: sampleSeries(minute - 9 * 86_400_000, 3, 'critical', () => 0.5) }),
            ],
          },
        ],
      },
      8,
    );
    setDynamo(recordingClient(engine.endpoint, log));
  });
  afterAll(async () => {
    await engine.close();
  });

  it('reads policy, agent and the window with one Query, and no newest-sample Query when the window has samples', async () => {
    log.length = 0;

    const dashboard = EndpointDashboard.parse(await read('busy', 300));

    expect(log.map((c) => c.name).sort()).toEqual(['GetItemCommand', 'QueryCommand', 'QueryCommand']);
    expect(log.some((c) => c.input.Limit === 1)).toBe(false);
    expect(dashboard.history).toHaveLength(100);
  });

  it('adds a one-item Query for the newest sample only when the window is empty', async () => {
    log.length = 0;

    const dashboard = EndpointDashboard.parse(await read('old'));

    const newest = log.filter((c) => c.input.Limit === 1);
    expect(newest).toHaveLength(1);
    expect(newest[0]?.input.ScanIndexForward).toBe(false);
    expect(dashboard.metrics?.map((m) => m.value)).toEqual([null, null, null]);
    expect(dashboard.history).toEqual([]);
  });

  it('ignores samples past retention that TTL has not deleted yet: never reported', async () => {
    const dashboard = EndpointDashboard.parse(await read('ancient', 10080));

    expect(dashboard).toMatchObject({ metrics: null, history: null, status: 'unknown' });
  });
});
