import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient, isAwsEndpoint } from '../../lib/store/client.js';

describe('Function: isAwsEndpoint', () => {
  it.each([
    ['https://dynamodb.eu-west-1.amazonaws.com', true],
    ['https://vpce-0a1b2c3d-4e5f6a7b.dynamodb.eu-west-1.vpce.amazonaws.com', true],
    ['https://dynamodb.cn-north-1.amazonaws.com.cn', true],
    ['https://dynamodb.eu-west-1.api.aws', true],
    ['http://localhost:8000', false],
    ['http://127.0.0.1:8000', false],
    ['http://[::1]:8000', false],
    ['http://dynamodb-local:8000', false],
    ['https://amazonaws.com.example.net', false],
  ])('%s is AWS: %s', (endpoint, aws) => {
    expect(isAwsEndpoint(endpoint)).toBe(aws);
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

  it("signs for a local engine with dummy credentials, and for AWS's endpoint with the caller's own (npm run seed into a deployed table)", async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDCALLER', AWS_SECRET_ACCESS_KEY: 'secret' });

    expect(await identity('http://127.0.0.1:8000')).toBe('local');
    expect(await identity('http://dynamodb-local:8000')).toBe('local');
    expect(await identity('https://dynamodb.eu-west-1.amazonaws.com')).toBe('AKIDCALLER');
  });
});
