/**
 * Stands in for `semver` in the Lambda bundles (infra/build.ts maps the one onto the other). The
 * X-Ray SDK that Powertools Tracer brings requires it in one place only: its patcher for the AWS
 * SDK v2 (`captureAWS`), to check that SDK's version. The functions use the AWS SDK v3 and capture
 * its clients with `captureAWSv3Client`, so that patcher never runs; bundled, semver is 30 KiB.
 *
 * Invariant: the one function that patcher calls exists; calling it fails at once, saying why.
 */
export function gte(): never {
  throw new Error('semver is not bundled: the AWS SDK v2 patcher of the X-Ray SDK is not used here (infra/bundle/no-semver.ts)');
}
