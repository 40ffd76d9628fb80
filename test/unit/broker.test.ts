import { describe, expect, it } from 'vitest';
import { allowedBroker, brokerName } from '../../lib/auth/broker.js';

const assumed = { userArn: 'arn:aws:sts::123456789012:assumed-role/mcp-broker/session-42', user: 'AROAEXAMPLE:session-42' };

describe('Function: allowedBroker', () => {
  it.each([
    ['a role name', ['mcp-broker']],
    ['the role ARN', ['arn:aws:iam::123456789012:role/mcp-broker']],
    ['the role ARN with a path', ['arn:aws:iam::123456789012:role/services/mcp-broker']],
    ['the exact session ARN', ['arn:aws:sts::123456789012:assumed-role/mcp-broker/session-42']],
  ])('admits an assumed-role broker listed by %s', (_how, list) => {
    expect(allowedBroker(assumed, list)).toBe('mcp-broker');
  });

  it.each([
    ['another role', ['other-broker']],
    ['the same role name in another account', ['arn:aws:iam::999999999999:role/mcp-broker']],
    ['an empty allow-list', []],
  ])('refuses with 403 when the allow-list holds %s', (_how, list) => {
    expect(() => allowedBroker(assumed, list)).toThrow(expect.objectContaining({ statusCode: 403 }));
  });

  it('refuses a call with no IAM identity', () => {
    expect(() => allowedBroker(undefined, ['mcp-broker'])).toThrow(expect.objectContaining({ statusCode: 403 }));
    expect(brokerName(null)).toBeUndefined();
  });
});
