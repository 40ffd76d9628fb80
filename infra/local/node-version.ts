/**
 * Node versions (docs/decisions.md, "Node versions"): Lambda runs nodejs22.x, the machines that build and
 * test run Node 20. On Node older than 22 the AWS SDK v3 warns once per process, when the first
 * client is made, that its releases from 2027 on will need Node 22: an eight-line
 * `NodeVersionSupportWarning` on stderr of every start, CLI run and test file. Lambda is on 22
 * already, so the notice tells us nothing here and buries what does.
 *
 * Every local entry point (npm start, the CLIs, bench, the DynamoDB Local runner, vitest's config)
 * imports this module first. It turns the notice off with the SDK's own switch, the environment
 * variable the SDK reads when it would warn; no other warning is touched, and child processes
 * (the e2e tests' CLIs, osls) inherit the setting. The Lambda bundles do not include it.
 */

/** The SDK's documented opt-out of its Node-version notice ("true" turns it off). */
export const SDK_NODE_VERSION_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/** The Node major of the Lambda runtime (`provider.runtime: nodejs22.x` in serverless.yml). */
export const LAMBDA_NODE_MAJOR = 22;

/**
 * Sets the SDK's switch in `env` when this Node is older than Lambda's and the variable is unset.
 * An explicit value is left alone (`…=false` brings the notice back), and on Node 22 or later
 * nothing changes, so a future notice about the Lambda version itself still shows.
 */
export function quietSdkNodeVersionNotice(env: NodeJS.ProcessEnv = process.env, nodeVersion = process.versions.node): void {
  const major = Number.parseInt(nodeVersion, 10);
  if (major < LAMBDA_NODE_MAJOR && env[SDK_NODE_VERSION_WARNING_SWITCH] === undefined) {
    env[SDK_NODE_VERSION_WARNING_SWITCH] = 'true';
  }
}

quietSdkNodeVersionNotice();
