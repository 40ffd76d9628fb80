/**
 * Node versions (docs/decisions.md, "Node versions"): Lambda runs the functions on nodejs24.x, and
 * so do the local sandboxes and the bench, from the registry's Node 24 package where it installs
 * (local/lambda/runtimes.ts lambdaNode); the machines that build and test run their own Node
 * (20 here) for the tooling. On Node older than 22 the AWS SDK v3 warns once per process, when the
 * first client is made, that its releases from 2027 on will need Node 22: an eight-line
 * `NodeVersionSupportWarning` on stderr of every start, CLI run and test file. The functions run
 * on a Node that has no such notice, so on the tooling's Node it tells us nothing and buries what
 * does.
 *
 * Every local entry point (npm start, the CLIs, bench, the DynamoDB Local runner, vitest's config)
 * imports this module first. It turns the notice off with the SDK's own switch, the environment
 * variable the SDK reads when it would warn; no other warning is touched, and child processes
 * (the e2e tests' CLIs, osls) inherit the setting. The Lambda bundles do not include it.
 */

/** The SDK's documented opt-out of its Node-version notice ("true" turns it off). */
export const SDK_NODE_VERSION_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/** The oldest Node the SDK's notice does not warn about (its releases from 2027 on need it). */
export const SDK_NODE_MAJOR = 22;

/** The Node major of the Lambda runtime: `provider.runtime` in serverless.yml is LAMBDA_RUNTIME_ID (the template test checks). */
export const LAMBDA_NODE_MAJOR = 24;

/** Lambda's name for that runtime. */
export const LAMBDA_RUNTIME_ID = `nodejs${LAMBDA_NODE_MAJOR}.x`;

/**
 * Sets the SDK's switch in `env` when this Node is older than the SDK's threshold and the variable
 * is unset. An explicit value is left alone (`…=false` brings the notice back), and on Node 22 or
 * later nothing changes, so a future notice about a later version still shows.
 */
export function quietSdkNodeVersionNotice(env: NodeJS.ProcessEnv = process.env, nodeVersion = process.versions.node): void {
  const major = Number.parseInt(nodeVersion, 10);
  if (major < SDK_NODE_MAJOR && env[SDK_NODE_VERSION_WARNING_SWITCH] === undefined) {
    env[SDK_NODE_VERSION_WARNING_SWITCH] = 'true';
  }
}

quietSdkNodeVersionNotice();
