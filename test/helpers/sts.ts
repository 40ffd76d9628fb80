import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One `sts:AssumeRole` as the stand-in received it. */
export interface AssumeRoleCall {
  RoleArn: string;
  RoleSessionName: string;
  DurationSeconds: string;
  Policy: string;
  /** The session tags, `key=value`, in the order sent. */
  tags: string[];
}

export interface StsStandIn {
  endpoint: string;
  /** Every AssumeRole received since the last `reset`. */
  calls: AssumeRoleCall[];
  /** How the next requests are answered (default: credentials valid for `expiresInMs`). */
  respond: (res: ServerResponse) => void;
  expiresInMs: number;
  /** Forgets the calls and goes back to answering with hour-long credentials. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * A stand-in for STS (AWS's STS is not reachable from a test): a local HTTP server speaking its
 * query protocol, which records what it is asked and answers AssumeRole with made-up credentials.
 * DynamoDB Local and dynalite accept any credentials, so the fenced clients still reach the real
 * engine; what IAM would decide is tested by test/infra/tenant-fence-iam.test.ts.
 */
export async function startStsStandIn(role = 'arn:aws:iam::123456789012:role/endpoint-read-service-test-tenant-read'): Promise<StsStandIn> {
  const credentials = (res: ServerResponse): void => {
    res.writeHead(200, { 'Content-Type': 'text/xml' });
    res.end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>
<AccessKeyId>ASIATESTKEY${sts.calls.length}</AccessKeyId><SecretAccessKey>secret</SecretAccessKey><SessionToken>token</SessionToken>
<Expiration>${new Date(Date.now() + sts.expiresInMs).toISOString()}</Expiration></Credentials>
<AssumedRoleUser><AssumedRoleId>AROATEST:s</AssumedRoleId><Arn>${role}/s</Arn></AssumedRoleUser><PackedPolicySize>12</PackedPolicySize>
</AssumeRoleResult><ResponseMetadata><RequestId>r-${sts.calls.length}</RequestId></ResponseMetadata></AssumeRoleResponse>`);
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      if (form.get('Action') === 'AssumeRole') {
        const tags: string[] = [];
        for (let i = 1; form.has(`Tags.member.${i}.Key`); i += 1)
          tags.push(`${form.get(`Tags.member.${i}.Key`)}=${form.get(`Tags.member.${i}.Value`)}`);
        sts.calls.push({
          RoleArn: form.get('RoleArn') ?? '',
          RoleSessionName: form.get('RoleSessionName') ?? '',
          DurationSeconds: form.get('DurationSeconds') ?? '',
          Policy: form.get('Policy') ?? '',
          tags,
        });
      }
      sts.respond(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sts: StsStandIn = {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: [],
    respond: credentials,
    expiresInMs: 3_600_000,
    reset() {
      sts.calls = [];
      sts.respond = credentials;
      sts.expiresInMs = 3_600_000;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return sts;
}
