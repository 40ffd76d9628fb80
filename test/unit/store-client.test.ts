import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient, isLocalEndpoint } from '../../lib/store/client.js';

describe('Function: isLocalEndpoint', () => {
  it.each([
    ['http://localhost:8000', true],
    ['http://127.0.0.1:8000', true],
    ['http://127.4.5.6:9000', true],
    ['http://[::1]:8000', true],
    ['https://dynamodb.eu-west-1.amazonaws.com', false],
    ['http://dynamodb-local.internal:8000', false],
  ])('%s is on this machine: %s', (endpoint, local) => {
    expect(isLocalEndpoint(endpoint)).toBe(local);
  });
});

describe('Function: createDocumentClient', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  const identity = async (endpoint: string): Promise<string> => {
    const client = createDocumentClient({ region: 'eu-west-1', endpoint, maxAttempts: 1, timeoutMs: 1000 });
    const credentials = client.config.credentials as unknown as () => Promise<{ accessKeyId: string }>;
    const { accessKeyId } = await credentials();
    client.destroy();
    return accessKeyId;
  };

  it("signs for an engine on this machine with dummy credentials, and for AWS's endpoint with the caller's own (npm run seed into a deployed table)", async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDCALLER', AWS_SECRET_ACCESS_KEY: 'secret' });

    expect(await identity('http://127.0.0.1:8000')).toBe('local');
    expect(await identity('https://dynamodb.eu-west-1.amazonaws.com')).toBe('AKIDCALLER');
  });
});
