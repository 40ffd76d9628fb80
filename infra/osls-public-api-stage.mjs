import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The project, whose infra/ holds this file. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * An osls plugin (serverless.yml `plugins`) that puts the public REST API's stage into the
 * template. osls compiles a deployment that creates its stage itself, then sets the stage's tracing,
 * logs and metrics by SDK calls after the deploy, and cannot set per-method throttling at all; so
 * the stage is declared as a resource (PublicApiStage in infra/public-api.yml) and this plugin, once
 * every resource is merged:
 * - takes the stage away from osls's deployment (no StageName), and points PublicApiStage at it;
 * - makes that deployment wait for the API's gateway responses, which take effect only in a
 *   deployment made after them;
 * - replaces osls's Lambda permissions, which let the API invoke a function from any stage and
 *   method (`…/*` + `/*`), with one per method that invokes a function (its stage, method and path) and
 *   one per token authorizer (its own id);
 * - resolves the conditions that stage parameters have already made constant (an `Fn::Equals` of
 *   two literals): a resource under a false one is not emitted, a true one leaves no trace, so the
 *   template holds exactly what a deploy of this stage creates (the web ACL unless `waf` is
 *   'false', and then with rate limits AWS accepts).
 * - adds what the service's own code makes with the stage's values (infra/package-resources-cli.ts,
 *   run under tsx): the static answers (MOCK methods, infra/static-answers.ts) and the API key of
 *   tokens that name no tenant; the deployment waits for those methods too.
 * Plain JavaScript: osls loads plugins itself, without the TypeScript toolchain.
 */
export default class PublicApiStage {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'after:aws:package:finalize:mergeCustomProviderResources': () => {
        this.addPackageResources();
        this.attachStage();
        this.narrowPermissions();
        this.resolveConstantConditions();
      },
    };
  }

  attachStage() {
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    const ofPublicApi = (type) =>
      Object.keys(resources).filter(
        (id) => resources[id].Type === type && resources[id].Properties?.RestApiId?.Ref === 'ApiGatewayRestApi',
      );
    const stage = resources.PublicApiStage;
    const deployments = ofPublicApi('AWS::ApiGateway::Deployment');
    if (!stage) throw new Error('infra/osls-public-api-stage.mjs: PublicApiStage is not in the template (infra/public-api.yml)');
    if (deployments.length !== 1)
      throw new Error(`infra/osls-public-api-stage.mjs: expected one deployment of the public API, found ${deployments.length}`);
    const [deploymentId] = deployments;
    const deployment = resources[deploymentId];
    delete deployment.Properties.StageName;
    const waitsFor = [deployment.DependsOn ?? []].flat();
    // Gateway responses and methods take effect only in a deployment made after them; osls's own methods are already listed.
    deployment.DependsOn = [
      ...new Set([...waitsFor, ...ofPublicApi('AWS::ApiGateway::GatewayResponse'), ...ofPublicApi('AWS::ApiGateway::Method')]),
    ];
    stage.Properties.DeploymentId = { Ref: deploymentId };
  }

  addPackageResources() {
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    // The values of the functions behind the doors: the issuer and audience the authorizer checks, the scope and origins the MCP function admits.
    const doors = ['AuthorizerLambdaFunction', 'McpLambdaFunction'].map((id) => resources[id]?.Properties?.Environment?.Variables);
    if (doors.some((environment) => !environment))
      throw new Error('infra/osls-public-api-stage.mjs: the authorizer or the MCP function has no environment in the template');
    const variables = Object.assign({}, ...doors);
    const input = {
      variables,
      resources: publicApiPaths(resources),
      service: this.serverless.service.service,
      stage: this.serverless.getProvider('aws').getStage(),
    };
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'infra/package-resources-cli.ts'], {
      cwd: ROOT,
      input: JSON.stringify(input),
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    if (run.error) throw run.error;
    if (run.status !== 0) throw new Error(`infra/package-resources-cli.ts: ${run.stderr.trim() || `exit ${run.status}`}`);
    for (const [id, resource] of Object.entries(JSON.parse(run.stdout))) {
      if (resources[id]) throw new Error(`infra/osls-public-api-stage.mjs: the template already has a resource ${id}`);
      resources[id] = resource;
    }
  }

  narrowPermissions() {
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    const onPublicApi = (resource) => resource.Properties?.RestApiId?.Ref === 'ApiGatewayRestApi';
    const stage = resources.PublicApiStage.Properties.StageName;
    const removed = new Set();
    /** What osls made a function's permission wait for (its alias, when it keeps instances provisioned). */
    const waits = new Map();
    for (const [id, resource] of Object.entries(resources)) {
      if (resource.Type === 'AWS::Lambda::Permission' && JSON.stringify(resource.Properties.SourceArn).includes('"ApiGatewayRestApi"')) {
        const fn = invokedFunction(resource.Properties.FunctionName, resources);
        if (fn && resource.DependsOn) waits.set(fn, resource.DependsOn);
        delete resources[id];
        removed.add(id);
      }
    }
    // osls makes a method without an authorizer wait for its function's permission: it waits for its own instead.
    const dependsOn = (resource, extra = []) => {
      const ids = [...[resource.DependsOn ?? []].flat().filter((d) => !removed.has(d)), ...extra];
      if (ids.length > 0) resource.DependsOn = [...new Set(ids)];
      else delete resource.DependsOn;
    };
    for (const resource of Object.values(resources)) if ([resource.DependsOn ?? []].flat().some((d) => removed.has(d))) dependsOn(resource);
    const permission = (functionName, sourceArn) => ({
      Type: 'AWS::Lambda::Permission',
      Properties: {
        FunctionName: functionName,
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
        SourceArn: {
          'Fn::Sub': `arn:\${AWS::Partition}:execute-api:\${AWS::Region}:\${AWS::AccountId}:\${ApiGatewayRestApi}/${sourceArn}`,
        },
      },
    });
    for (const [id, resource] of Object.entries(resources)) {
      if (!onPublicApi(resource)) continue;
      if (resource.Type === 'AWS::ApiGateway::Method') {
        const fn = invokedFunction(resource.Properties.Integration?.Uri, resources);
        if (!fn) continue;
        resources[`${id}LambdaPermission`] = {
          ...permission(
            invokedArn(resource.Properties.Integration.Uri) ?? { 'Fn::GetAtt': [fn, 'Arn'] },
            `${stage}/${resource.Properties.HttpMethod}${pathOf(resource.Properties.ResourceId, resources)}`,
          ),
          ...(waits.has(fn) ? { DependsOn: waits.get(fn) } : {}),
        };
        dependsOn(resource, [`${id}LambdaPermission`]);
      } else if (resource.Type === 'AWS::ApiGateway::Authorizer') {
        const fn = invokedFunction(resource.Properties.AuthorizerUri, resources);
        if (fn) resources[`${id}LambdaPermission`] = permission({ 'Fn::GetAtt': [fn, 'Arn'] }, `authorizers/\${${id}}`);
      }
    }
  }

  resolveConstantConditions() {
    const template = this.serverless.service.provider.compiledCloudFormationTemplate;
    const constants = new Map();
    for (const [name, condition] of Object.entries(template.Conditions ?? {})) {
      const value = constantCondition(condition);
      if (value !== undefined) constants.set(name, value);
    }
    if (constants.size === 0) return;
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (!constants.has(resource.Condition)) continue;
      if (constants.get(resource.Condition)) delete resource.Condition;
      else delete template.Resources[id];
    }
    for (const name of constants.keys()) delete template.Conditions[name];
    if (Object.keys(template.Conditions).length === 0) delete template.Conditions;
    template.Resources = withoutConstantIfs(template.Resources, constants);
    template.Outputs = withoutConstantIfs(template.Outputs, constants);
    const rules = template.Resources.PublicApiWebAcl?.Properties.Rules ?? [];
    for (const [rule, parameter] of [
      ['requests-per-ip', 'wafIpRateLimit'],
      ['requests-per-token', 'wafRateLimit'],
    ]) {
      const limit = rules.find((r) => r.Name === rule)?.Statement.RateBasedStatement.Limit;
      if (limit !== undefined && !(/^\d+$/.test(String(limit)) && Number(limit) >= 10 && Number(limit) <= 2_000_000_000)) {
        throw new Error(
          `${parameter} must be a whole number from 10 to 2000000000 (requests in 5 minutes; waf=false turns AWS WAF off), not ${JSON.stringify(limit)}`,
        );
      }
    }
  }
}

/** The logical id of the function a method's integration or an authorizer invokes (its URI names the function's Arn), else undefined. */
function invokedFunction(uri, resources) {
  let found;
  JSON.stringify(uri ?? null, (key, value) => {
    if (key === 'Fn::GetAtt' && Array.isArray(value) && resources[value[0]]?.Type === 'AWS::Lambda::Function') found ??= value[0];
    return value;
  });
  return found;
}

/**
 * The ARN a method's integration invokes, alias included (`…:provisioned` when the function keeps
 * instances provisioned): Lambda grants an alias only by a permission on that alias, never by one on
 * the function. osls writes the URI as a join whose parts between `functions/` and `/invocations` are it.
 */
function invokedArn(uri) {
  const parts = uri?.['Fn::Join']?.[0] === '' ? uri['Fn::Join'][1] : undefined;
  if (!Array.isArray(parts)) return undefined;
  const from = parts.findIndex((p) => typeof p === 'string' && p.endsWith('functions/'));
  const to = parts.findIndex((p) => typeof p === 'string' && p.startsWith('/invocations'));
  if (from < 0 || to <= from + 1) return undefined;
  const arn = parts.slice(from + 1, to);
  return arn.length === 1 ? arn[0] : { 'Fn::Join': ['', arn] };
}

/** A method's resource path (`/api/agents`), walked up its resources to the API's root. */
function pathOf(resourceId, resources) {
  if (!resourceId?.Ref) return '';
  const resource = resources[resourceId.Ref].Properties;
  return `${pathOf(resource.ParentId, resources)}/${resource.PathPart}`;
}

/** The public REST API's resources osls made, by path (`/api/mcp` → `ApiGatewayResourceApiMcp`). */
function publicApiPaths(resources) {
  const paths = {};
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::ApiGateway::Resource' && resource.Properties?.RestApiId?.Ref === 'ApiGatewayRestApi')
      paths[pathOf({ Ref: id }, resources)] = id;
  }
  return paths;
}

/** The value of a condition that is a constant (`Fn::Equals` of two literals, `Fn::Not` of one), else undefined. */
function constantCondition(condition) {
  if (Array.isArray(condition?.['Fn::Equals'])) {
    const [a, b] = condition['Fn::Equals'];
    return typeof a === 'string' && typeof b === 'string' ? a === b : undefined;
  }
  if (Array.isArray(condition?.['Fn::Not'])) {
    const inner = constantCondition(condition['Fn::Not'][0]);
    return inner === undefined ? undefined : !inner;
  }
  return undefined;
}

/** `value` with every `Fn::If` on a constant condition replaced by its chosen branch (`AWS::NoValue` drops the key). */
function withoutConstantIfs(value, constants) {
  if (Array.isArray(value)) return value.map((item) => withoutConstantIfs(item, constants)).filter((item) => item !== NO_VALUE);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === 'Fn::If' && constants.has(value['Fn::If'][0])) {
    const [name, whenTrue, whenFalse] = value['Fn::If'];
    const chosen = withoutConstantIfs(constants.get(name) ? whenTrue : whenFalse, constants);
    return chosen?.Ref === 'AWS::NoValue' ? NO_VALUE : chosen;
  }
  const out = {};
  for (const [key, item] of Object.entries(value)) {
    const resolved = withoutConstantIfs(item, constants);
    if (resolved !== NO_VALUE) out[key] = resolved;
  }
  return out;
}

const NO_VALUE = Symbol('AWS::NoValue');
