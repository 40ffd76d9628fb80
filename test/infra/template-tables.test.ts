import { describe, expect, it } from 'vitest';
import { ofType, resource } from '../helpers/template.js';

/** The two DynamoDB tables of the packaged template. */

describe('Template: tables', () => {
  it.each(['DataTable', 'AuditTable'])('%s: on demand, PITR, encrypted, deletion-protected, retained, pk/sk keys', (id) => {
    const table = resource(id);

    expect(table.Type).toBe('AWS::DynamoDB::Table');
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
    });
  });

  it('expires samples through TTL on the data table attribute `ttl`', () => {
    expect(resource('DataTable').Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(ofType('AWS::DynamoDB::Table')).toHaveLength(2);
  });
});
