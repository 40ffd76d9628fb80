import { describe, expect, it } from 'vitest';
import { type AuditItem, auditRecord } from '../../lib/store/audit.js';
import { connectionRecordItem, durableRecordItem, policyItem, sampleItem } from '../../lib/store/items.js';
import { sampleSortKey } from '../../lib/store/keys.js';
import { resolveIntrinsics } from '../helpers/iam.js';
import type { Json } from '../helpers/package.js';
import { ofType, resource, template } from '../helpers/template.js';

/**
 * The two DynamoDB tables of the packaged template, judged by what the code puts into them: the
 * items producers write (lib/store/items.ts) and the audit items the observations function writes
 * (lib/store/audit.ts) must fit each table's keys, be told apart by them, sort as the reads need
 * and expire only where they should; and the functions must be given these very tables.
 */

const resources = template.Resources as Json;
const RETENTION_DAYS = 8;
const at = (iso: string): Date => new Date(iso);

/** An item of each kind the data table holds, for two tenants and two agents, as producers write them. */
function dataItems(): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  for (const tenant of ['acme', 'acme#2']) {
    for (const agent of ['a-1', 'a#1']) {
      const hello = { agent_id: agent, hostname: 'h', os: 'linux', arch: 'x86_64', version: '1' };
      items.push(durableRecordItem(tenant, hello));
      items.push(connectionRecordItem(tenant, { ...hello, state: 'connected', connected_at: '2026-11-27T10:00:00.000Z' }));
      for (const observed of ['2026-11-27T10:00:00.000Z', '2026-11-27T10:01:00.000Z']) {
        items.push(sampleItem(tenant, agent, { observed_at: observed, cpu: 1, memory: null, disk: 2 }, RETENTION_DAYS));
      }
    }
    items.push(policyItem(tenant, { ticket: 'required', scope: 'optional', thresholds: {} }));
  }
  return items;
}

function auditItems(): Array<Record<string, unknown>> {
  const item = (tenant: string | null, id: string, time: string): AuditItem => ({
    audit_id: id,
    request_id: id,
    api_request_id: null,
    at: time,
    tenant_id: tenant,
    subject: 'alice',
    broker: 'mcp-broker',
    agent_id: 'a-1',
    scope: null,
    reason: 'disk alert',
    ticket_number: null,
    ticket_system: null,
    reason_source: 'argument',
    ticket_source: null,
    minutes: 60,
    limit: 100,
    outcome: 'allowed',
    status_code: 200,
  });
  return [
    item('acme', 'r-1', '2026-11-27T10:00:00.000Z'),
    item('acme', 'r-2', '2026-11-27T10:00:00.000Z'),
    item('globex', 'r-1', '2026-11-27T10:00:00.000Z'),
    item(null, 'r-3', '2026-11-27T10:00:01.000Z'),
  ].map(auditRecord);
}

const TABLES = { DataTable: dataItems, AuditTable: auditItems } as const;

/** The JavaScript type DynamoDB's scalar attribute type takes in a document (S, N, B). */
const JS_TYPE: Readonly<Record<string, string>> = { S: 'string', N: 'number', B: 'object' };

const keysOf = (id: string): Array<{ name: string; type: string; role: string }> => {
  const p = resource(id).Properties;
  return (p.KeySchema as Json[]).map((k) => ({
    name: k.AttributeName as string,
    role: k.KeyType as string,
    type: (p.AttributeDefinitions as Json[]).find((d) => d.AttributeName === k.AttributeName)?.AttributeType as string,
  }));
};

describe('Template: tables (judged by the items the code writes)', () => {
  it('are the tables every function is given, and no other', () => {
    const names = Object.keys(TABLES).map((id) => resolveIntrinsics({ Ref: id }, resources));
    expect(
      ofType('AWS::DynamoDB::Table')
        .map(([id]) => id)
        .sort(),
    ).toEqual(Object.keys(TABLES).sort());
    for (const [id, f] of ofType('AWS::Lambda::Function')) {
      const env = resolveIntrinsics(f.Properties.Environment.Variables, resources) as Record<string, string>;
      expect([env.DATA_TABLE, env.AUDIT_TABLE], id).toEqual(names);
    }
  });

  it.each(Object.entries(TABLES))('%s: every item the code writes carries its keys, of the declared types', (id, items) => {
    const keys = keysOf(id);
    expect(keys.map((k) => k.role).sort()).toEqual(['HASH', 'RANGE']);
    for (const item of items()) {
      for (const key of keys) expect(typeof item[key.name], `${key.name} of ${JSON.stringify(item)}`).toBe(JS_TYPE[key.type]);
    }
  });

  it.each(Object.entries(TABLES))('%s: its keys tell apart every item the code writes (no put overwrites another record)', (id, items) => {
    const [hash, range] = ['HASH', 'RANGE'].map((role) => keysOf(id).find((k) => k.role === role)!.name);
    const written = items();
    const distinct = new Set(written.map((item) => JSON.stringify([item[hash!], item[range!]])));
    expect(distinct.size).toBe(written.length);
  });

  it("DataTable: sorts an agent's samples by time, so a window is one range of its sort key", () => {
    const range = keysOf('DataTable').find((k) => k.role === 'RANGE')!;
    const times = ['2026-11-27T09:59:59.999Z', '2026-11-27T10:00:00.000Z', '2026-11-27T10:00:00.001Z', '2026-12-01T00:00:00.000Z'];
    const sortKeys = times.map((time) => sampleSortKey(at(time)));

    // An S sort key is ordered by its UTF-8 bytes.
    expect(range.type).toBe('S');
    expect([...sortKeys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))).toEqual(sortKeys);
  });

  it('DataTable: expires samples by the attribute they carry, at their time plus the retention, and nothing else it holds', () => {
    const ttl = resource('DataTable').Properties.TimeToLiveSpecification as Json;
    const items = dataItems();
    const samples = items.filter((item) => item.observed_at !== undefined && item.cpu !== undefined);

    expect(ttl.Enabled).toBe(true);
    for (const sample of samples) {
      expect(sample[ttl.AttributeName]).toBe(Date.parse(sample.observed_at as string) / 1000 + RETENTION_DAYS * 86_400);
    }
    for (const item of items.filter((i) => !samples.includes(i))) expect(item[ttl.AttributeName]).toBeUndefined();
  });

  it('AuditTable: lets no audit item expire (retention is the operator’s decision)', () => {
    expect(resource('AuditTable').Properties.TimeToLiveSpecification).toBeUndefined();
  });

  it.each(Object.keys(TABLES))(
    '%s: outlives the stack and its mistakes: kept on delete and replace, deletion-protected, point-in-time recovery, encrypted, on demand',
    (id) => {
      const table = resource(id);

      expect([table.DeletionPolicy, table.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
      expect(table.Properties).toMatchObject({
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        BillingMode: 'PAY_PER_REQUEST',
      });
    },
  );
});
