import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, MCP_CONFIG } from '../../lib/config.js';
import { type BrokerSecret, BrokerSecretError, brokerSecret } from '../../lib/mcp/broker-secret.js';
import { useEnvironment } from '../helpers/env.js';

/**
 * The broker's client secret on AWS comes from Secrets Manager (BROKER_CLIENT_SECRET_ARN). No
 * Secrets Manager engine runs on these machines, so the real SDK client talks real HTTP to a small
 * stand-in that answers GetSecretValue in the service's JSON protocol: the secret it is told to
 * hold, or the error it is told to give. What is under test is ours: the secret's two shapes, the
 * cache, and which failures are a misconfiguration and which an outage.
 */

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:mcp-broker-AbCdEf';

type Answer = { status: 200; secret: string } | { status: 400 | 500 | 503; type: string };

let server: Server;
let answer: Answer;
let requests: { target: string | undefined; secretId: unknown }[];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      requests.push({
        target: req.headers['x-amz-target'] as string | undefined,
        secretId: (JSON.parse(body) as { SecretId?: unknown }).SecretId,
      });
      const json =
        answer.status === 200
          ? { ARN, Name: 'mcp-broker', SecretString: answer.secret }
          : { __type: answer.type, message: 'stand-in failure' };
      res.writeHead(answer.status, {
        'content-type': 'application/x-amz-json-1.1',
        ...(answer.status === 200 ? {} : { 'x-amzn-errortype': answer.type }),
      });
      res.end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/**
 * The MCP function's broker secret as it makes it at init: its configuration read from these
 * variables (lib/config.ts MCP_CONFIG), Secrets Manager at the stand-in by the SDK's own service
 * endpoint variable, signed with the environment's credentials, as on Lambda.
 */
let secret: BrokerSecret;

function load(env: Record<string, string | undefined>): void {
  const { port } = server.address() as AddressInfo;
  useEnvironment({
    AWS_REGION: 'eu-west-1',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${port}`,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SESSION_TOKEN: undefined,
    ...env,
  });
  secret = brokerSecret(MCP_CONFIG.parse(process.env));
}

beforeEach(() => {
  requests = [];
  load({ BROKER_CLIENT_SECRET: undefined, BROKER_CLIENT_SECRET_ARN: ARN });
});

const read = (): Promise<string> => secret.read(new AbortController().signal);
const failure = async (): Promise<BrokerSecretError> => {
  const error = await read().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BrokerSecretError);
  return error as BrokerSecretError;
};

describe('Function: brokerSecret, from a stand-in Secrets Manager', () => {
  it('reads the secret named by BROKER_CLIENT_SECRET_ARN with GetSecretValue', async () => {
    answer = { status: 200, secret: 'plain-broker-secret' };

    expect(await read()).toBe('plain-broker-secret');
    expect(requests).toEqual([{ target: 'secretsmanager.GetSecretValue', secretId: ARN }]);
  });

  it('takes client_secret from a secret stored as a JSON object', async () => {
    answer = { status: 200, secret: JSON.stringify({ client_id: 'mcp-broker', client_secret: 'json-broker-secret' }) };

    expect(await read()).toBe('json-broker-secret');
  });

  it.each([
    ['an empty secret', ''],
    ['a JSON object without client_secret', JSON.stringify({ client_id: 'mcp-broker' })],
    ['a JSON object with an empty client_secret', JSON.stringify({ client_secret: '' })],
    ['a broken JSON object', '{"client_secret": '],
  ])('calls %s a misconfiguration, without echoing what it holds', async (_what, secret) => {
    answer = { status: 200, secret };

    const error = await failure();
    expect(error.kind).toBe('misconfigured');
    expect(error.message).toBe('The broker secret holds no usable client secret.');
  });

  it('reads Secrets Manager once for many exchanges within the cache time, and again after it (the clock moved on)', async () => {
    answer = { status: 200, secret: 'first' };
    const now = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now });
    try {
      expect(await read()).toBe('first');
      answer = { status: 200, secret: 'rotated' };
      vi.setSystemTime(now + 60_000);
      expect(await read()).toBe('first');
      expect(requests).toHaveLength(1);
      vi.setSystemTime(now + 5 * 60_000 + 1);
      expect(await read()).toBe('rotated');
      expect(requests).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads it again at once when the issuer refused it (forget), so a rotated secret is picked up', async () => {
    answer = { status: 200, secret: 'before-rotation' };
    expect(await read()).toBe('before-rotation');

    answer = { status: 200, secret: 'after-rotation' };
    secret.forget();
    expect(await read()).toBe('after-rotation');
    expect(requests).toHaveLength(2);
  });

  it.each(['AccessDeniedException', 'ResourceNotFoundException', 'DecryptionFailure'])(
    'calls %s a misconfiguration and names it',
    async (type) => {
      answer = { status: 400, type };

      const error = await failure();
      expect(error.kind).toBe('misconfigured');
      expect(error.message).toBe(`The broker's client secret could not be read (${type}).`);
    },
  );

  it.each([
    [500, 'InternalServiceError'],
    [503, 'ServiceUnavailable'],
  ] as const)('calls a %i %s an outage (unavailable), not a misconfiguration', async (status, type) => {
    answer = { status, type };

    const error = await failure();
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain("The broker's client secret could not be read");
  });

  it('does not cache a failure: the next read after an outage succeeds', async () => {
    answer = { status: 500, type: 'InternalServiceError' };
    expect((await failure()).kind).toBe('unavailable');

    answer = { status: 200, secret: 'back' };
    expect(await read()).toBe('back');
  });

  it('prefers BROKER_CLIENT_SECRET when it is set (the local stack) and does not call Secrets Manager', async () => {
    load({ BROKER_CLIENT_SECRET: 'local-secret' });

    expect(await read()).toBe('local-secret');
    expect(requests).toEqual([]);
  });

  it("refuses neither variable set at the function's init, naming the variable (no request ever finds it out)", () => {
    expect(() => load({ BROKER_CLIENT_SECRET_ARN: undefined })).toThrow(
      new ConfigError(
        'Invalid configuration: BROKER_CLIENT_SECRET_ARN: is required (or BROKER_CLIENT_SECRET, the secret itself, where no secret store holds it)',
      ),
    );
    expect(requests).toEqual([]);
  });
});
