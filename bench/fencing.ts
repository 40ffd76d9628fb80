import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchContext } from './context.js';
import { type Invoker, invokeWarm, stackFunction, warmSandbox } from './sandbox.js';
import { interleaved, median } from './stats.js';

/**
 * Tenant fencing by IAM: the inventory bundle in a sandbox of its own configured with
 * TENANT_FENCING=iam, against an STS stand-in on loopback that answers AssumeRole at once,
 * interleaved with the stack's unfenced inventory: on a tenant whose credentials are cached, and on
 * tenants read for the first time (one AssumeRole each).
 */
export async function fencingFigure(ctx: BenchContext, tenant: string, agents: number): Promise<void> {
  ctx.say('tenant fencing: fenced against unfenced inventory handler, cached credentials and first reads');
  const sts = await stsStandIn();
  const fencedEnv = {
    TENANT_FENCING: 'iam',
    TENANT_READ_ROLE_ARN: 'arn:aws:iam::123456789012:role/bench-tenant-read',
    TENANT_AUDIT_ROLE_ARN: 'arn:aws:iam::123456789012:role/bench-tenant-audit',
    AWS_ENDPOINT_URL_STS: sts.endpoint,
  };
  const fencedSandbox = warmSandbox(ctx.freshSandbox('inventory', { environment: fencedEnv }));
  const unfenced = stackFunction(ctx.stack.functions, 'inventory');
  const list = async (invoke: Invoker, t: string): Promise<void> => {
    const answer = await invokeWarm(invoke, ctx.inventoryEvent(t));
    if (answer.status !== 200 || answer.failedWith) throw new Error(`the inventory answered ${answer.status} ${answer.failedWith ?? ''}`);
  };
  const fenced = fencedSandbox.invoke;
  await list(fenced, tenant); // starts its instance, with fencing on
  const runs = ctx.quick ? 9 : 21;
  const warm = await interleaved({ off: () => list(unfenced, tenant), fenced: () => list(fenced, tenant) }, runs);
  let fresh = 0;
  const callsBefore = sts.calls();
  const first = await interleaved(
    { off: () => list(unfenced, `bench-first-${fresh++}`), fenced: () => list(fenced, `bench-first-${fresh++}`) },
    runs,
  );
  ctx.results.fencing = {
    agents,
    offMs: median(warm.off),
    fencedMs: median(warm.fenced),
    ratio: median(warm.fenced) / median(warm.off),
    firstReadOffMs: median(first.off),
    firstReadFencedMs: median(first.fenced),
    firstReadRatio: median(first.fenced) / median(first.off),
    stsCalls: sts.calls() - callsBefore,
  };
  const f = ctx.results.fencing;
  ctx.say(
    `  cached: ${f.offMs.toFixed(1)} ms off, ${f.fencedMs.toFixed(1)} ms fenced (${f.ratio.toFixed(2)}x); first read of a tenant: ${f.firstReadOffMs.toFixed(1)} ms off, ${f.firstReadFencedMs.toFixed(1)} ms fenced (${f.firstReadRatio.toFixed(2)}x, ${f.stsCalls} AssumeRole)`,
  );
  await fencedSandbox.stop();
  await sts.close();
}

/** A stand-in for STS on loopback: answers every AssumeRole at once with credentials valid an hour, and counts them. */
async function stsStandIn(): Promise<{ endpoint: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      res.writeHead(200, { 'Content-Type': 'text/xml' });
      res.end(
        `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>ASIABENCH${calls}</AccessKeyId>` +
          `<SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken><Expiration>${new Date(Date.now() + 3_600_000).toISOString()}</Expiration></Credentials>` +
          `<AssumedRoleUser><AssumedRoleId>AROABENCH:s</AssumedRoleId><Arn>arn:aws:sts::123456789012:assumed-role/bench-tenant-read/s</Arn></AssumedRoleUser></AssumeRoleResult>` +
          `<ResponseMetadata><RequestId>r${calls}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
