import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UNSCOPED } from '../../lib/auth/endpoint-scope.js';
import { EndpointDashboard } from '../../lib/contract/schemas.js';
import { policyKey, sampleKey } from '../../lib/data-format/keys.js';
import type { ObservationsRead } from '../../lib/observations/read.js';
import { sampleSeries } from '../../local/demo.js';
import { loadFleet } from '../../local/fleet.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { useEngine, useEnvironment } from '../helpers/env.js';
import { answeringEndpoint, type RecordedRequest, recordingProxy } from '../helpers/faults.js';

const minute = Math.floor(Date.now() / 60_000) * 60_000;
const agent = (id: string, extra: object = {}) => ({ agent_id: id, hostname: id, os: 'linux', arch: 'x86_64', version: '1', ...extra });

/**
 * The read as a function instance makes it, with the variables set just before (test/helpers/env.ts):
 * the observations function's configuration and store clients, made at its init.
 */
const loadRead = async () => {
  const cfg = (await import('../../lib/config.js')).OBSERVATIONS_CONFIG.parse(process.env);
  const source = { reads: (await import('../../lib/store/tenant-client.js')).tenantReads(cfg), cfg };
  const { readEndpointObservations } = await import('../../lib/observations/read.js');
  return (read: ObservationsRead) => readEndpointObservations(source, read);
};

describe('Function: readEndpointObservations against a real DynamoDB API', () => {
  let engine: TestEngine;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let readEndpointObservations: Awaited<ReturnType<typeof loadRead>>;
  /** What the use case asked the engine, through a proxy that records it. */
  let log: RecordedRequest[] = [];
  const read = (agentId: string, minutes = 60) =>
    readEndpointObservations({
      tenantId: 'acme',
      scope: UNSCOPED,
      query: { agent_id: agentId, minutes, limit: 100 },
      attribution: { reason: 'test' },
      now: new Date(minute + 1000),
    });

  beforeAll(async () => {
    engine = await startTestEngine();
    proxy = await recordingProxy(engine.endpoint);
    useEngine({ ...engine, endpoint: proxy.endpoint });
    readEndpointObservations = await loadRead();
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
              agent('corrupt', { samples: sampleSeries(minute, 10, 'ok', () => 0.5) }),
              agent('only-corrupt'),
              agent('ahead', { samples: sampleSeries(minute - 3 * 3_600_000, 1, 'ok', () => 0.5) }),
            ],
          },
        ],
      },
      8,
    );
    // Stored samples no writer of ours makes: an unreadable time, a metric stored as text.
    const put = (item: Record<string, unknown>) => engine.db.send(new PutCommand({ TableName: engine.tables.dataTable, Item: item }));
    const bad = (agentId: string, at: number, fields: Record<string, unknown>) =>
      put({ ...sampleKey('acme', agentId, new Date(at)), kind: 'sample', tenant_id: 'acme', agent_id: agentId, ...fields });
    await bad('corrupt', minute - 90_000, { observed_at: 'yesterday', cpu: 10 });
    await bad('corrupt', minute - 30_000, { observed_at: new Date(minute - 30_000).toISOString(), cpu: 'high' });
    await bad('only-corrupt', minute - 60_000, { observed_at: 'not a time', cpu: 50, memory: 50, disk: 50 });
    // A sample stamped an hour ahead of the clock (a skewed agent), and an agent record whose agent_id breaks the contract.
    await put({
      ...sampleKey('acme', 'ahead', new Date(minute + 3_600_000)),
      kind: 'sample',
      tenant_id: 'acme',
      agent_id: 'ahead',
      observed_at: new Date(minute + 3_600_000).toISOString(),
      cpu: 99,
      memory: 99,
      disk: 99,
    });
  });
  afterAll(async () => {
    await proxy.close();
    await engine.close();
  });
  beforeEach(() => {
    proxy.requests.length = 0;
    log = proxy.requests;
  });

  it('reads policy and agent in one BatchGetItem and the window with one Query, and no newest-sample Query when the window has samples', async () => {
    const dashboard = EndpointDashboard.parse(await read('busy', 300));

    expect(log.map((c) => c.operation).sort()).toEqual(['BatchGetItem', 'Query']);
    expect(log.some((c) => c.input.Limit === 1)).toBe(false);
    expect(dashboard.history).toHaveLength(100);
  });

  it('adds a one-item Query for the newest sample only when the window is empty', async () => {
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

  it('leaves out samples that cannot be read, counts them in a finding, and keeps the rest', async () => {
    const dashboard = EndpointDashboard.parse(await read('corrupt'));

    expect(dashboard.history).toHaveLength(10);
    expect(dashboard.findings).toContainEqual(
      expect.objectContaining({
        scope: 'observation',
        label: 'Unreadable samples',
        status: 'unknown',
        detail: expect.stringMatching(/^2 stored samples of this endpoint could not be read/),
      }),
    );
    expect(dashboard.status).toBe('unknown');
  });

  it('never calls an endpoint whose only samples cannot be read "Never reported"', async () => {
    const dashboard = EndpointDashboard.parse(await read('only-corrupt'));

    expect(dashboard.findings?.map((f) => f.label)).not.toContain('Never reported');
    expect(dashboard.findings).toContainEqual(
      expect.objectContaining({
        label: 'Unreadable samples',
        detail: expect.stringMatching(/^1 stored sample of this endpoint could not be read/),
      }),
    );
    expect(dashboard.metrics?.map((m) => m.value)).toEqual([null, null, null]);
    expect(dashboard.history).toEqual([]);
  });

  it("fails rather than fall back to the default policy (and drop a ticket rule) when a tenant's stored policy cannot be read", async () => {
    await loadFleet(engine.db, engine.tables, { tenants: [{ tenant_id: 'strict', agents: [agent('s-1')] }] }, 8);
    await engine.db.send(
      new PutCommand({
        TableName: engine.tables.dataTable,
        Item: { ...policyKey('strict'), kind: 'policy', tenant_id: 'strict', ticket: 'sometimes' },
      }),
    );

    const reading = readEndpointObservations({
      tenantId: 'strict',
      scope: UNSCOPED,
      query: { agent_id: 's-1', minutes: 60, limit: 100 },
      attribution: { reason: 'test' },
      now: new Date(minute),
    });

    await expect(reading).rejects.toThrow();
    await expect(reading).rejects.not.toHaveProperty('statusCode');
  });

  it('never takes a sample stamped after now as the newest one (the window is bounded by now, and so is this read)', async () => {
    const dashboard = EndpointDashboard.parse(await read('ahead'));

    const finding = dashboard.findings?.find((f) => f.label === 'No sample in the window');
    expect(finding?.detail).toContain(new Date(minute - 3 * 3_600_000).toISOString().slice(0, 16));
    expect(JSON.stringify(dashboard)).not.toContain(new Date(minute + 3_600_000).toISOString().slice(0, 16));
  });
});

describe('Function: readEndpointObservations when the store answers what DynamoDB never does', () => {
  it('answers 502, never 404 or an empty dashboard, for a Query answer without Items (fault injector: a server answering {})', async () => {
    const injector = await answeringEndpoint('{}');
    try {
      useEnvironment({ DYNAMODB_ENDPOINT: injector.endpoint, DYNAMODB_MAX_ATTEMPTS: '1' });
      const readEndpointObservations = await loadRead();

      const read = readEndpointObservations({
        tenantId: 'acme',
        scope: UNSCOPED,
        query: { agent_id: 'a-1', minutes: 60, limit: 100 },
        attribution: { reason: 'test' },
        now: new Date(),
      });

      await expect(read).rejects.toMatchObject({
        statusCode: 502,
        message: 'The observations store gave an answer that cannot be read; try again later.',
      });
    } finally {
      await injector.close();
    }
  });
});
