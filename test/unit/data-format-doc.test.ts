import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { connectionRecordItem, durableRecordItem, policyItem, sampleItem } from '../../lib/data-format/items.js';
import { readConnectionRecord, readDurableRecord, readSampleRecord } from '../../lib/data-format/records.js';
import type { AuditItem } from '../../lib/store/audit.js';

/**
 * The producers' guide (docs/data-format.md) shows one item of each kind for writers in other
 * languages to copy: each must be exactly what the service's own item builders write, and read back.
 */

const guide = readFileSync(join(ROOT, 'docs', 'data-format.md'), 'utf8');
const examples = [...guide.matchAll(/```json\n(.+)\n```/g)].map((m) => JSON.parse(m[1] ?? 'null') as Record<string, unknown>);
const asDynamoJson = (item: Record<string, unknown>): Record<string, unknown> => marshall(item, { removeUndefinedValues: true });

const TENANT = 'Müller IT';
const AGENT = 'ops/db #1';
const hello = { agent_id: AGENT, hostname: 'db-01.muller.example', os: 'linux', arch: 'x86_64', version: '2.4.1' };

describe('Docs: the example items of docs/data-format.md', () => {
  it('shows exactly what the service writes for a durable record, a connection record, a sample and a policy', () => {
    const written = [
      durableRecordItem(TENANT, {
        ...hello,
        client_id: 'c-17',
        client_name: 'Müller IT',
        enrolled_at: '2026-03-02T08:15:00.000Z',
        update_ring: 'stable',
        last_heartbeat: '2026-11-20T09:00:12.000Z',
        groups: ['emea', 'databases'],
      }),
      connectionRecordItem(TENANT, {
        ...hello,
        state: 'connected',
        connected_at: '2026-11-20T07:58:41.000Z',
        last_heartbeat: '2026-11-20T09:00:12.000Z',
      }),
      sampleItem(TENANT, AGENT, { observed_at: '2026-11-20T09:00:00.000Z', cpu: 12.5, memory: null, disk: 40 }, 8),
      policyItem(TENANT, { ticket: 'required', scope: 'optional', thresholds: { disk: { warning: 80, critical: 90 } } }),
    ].map(asDynamoJson);

    expect(examples).toEqual(written);
  });

  it('reads each example record back as the record it shows', () => {
    const [durable, connection, sample] = examples as [Record<string, never>, Record<string, never>, Record<string, never>];

    expect(readDurableRecord(durable)).toMatchObject({ agent_id: AGENT, groups: ['emea', 'databases'] });
    expect(readConnectionRecord(connection)).toMatchObject({ agent_id: AGENT, state: 'connected' });
    expect(readSampleRecord(sample)).toEqual({ observed_at: '2026-11-20T09:00:00.000Z', cpu: 12.5, memory: null, disk: 40 });
  });
});

describe('Docs: the audit item of docs/data-format.md', () => {
  /** Every attribute of an audit item, once: the compiler holds this list to AuditItem (a missing or an extra one does not build). */
  const ATTRIBUTES: Record<keyof AuditItem, true> = {
    audit_id: true,
    request_id: true,
    api_request_id: true,
    at: true,
    tenant_id: true,
    subject: true,
    broker: true,
    agent_id: true,
    scope: true,
    reason: true,
    ticket_number: true,
    ticket_system: true,
    reason_source: true,
    ticket_source: true,
    minutes: true,
    limit: true,
    outcome: true,
    status_code: true,
  };
  const example = JSON.parse(/```jsonl\n(.+)\n```/.exec(guide)?.[1] ?? 'null') as Record<string, unknown>;
  const table = [
    ...guide.slice(guide.indexOf('## What the service writes: audit items')).matchAll(/^\| ((?:`[a-z_]+`(?:, |(?= \|)))+)/gm),
  ].flatMap((row) => [...(row[1] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));

  it('shows an item with exactly the attributes of an audit item, and explains each in its table', () => {
    expect(Object.keys(example)).toEqual(Object.keys(ATTRIBUTES));
    expect([...table].sort()).toEqual(Object.keys(ATTRIBUTES).sort());
    expect(example).toMatchObject({ reason_source: 'argument', ticket_source: 'person' });
  });
});
