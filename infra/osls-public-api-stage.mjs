/**
 * An osls plugin (serverless.yml `plugins`) that puts the public REST API's stage into the
 * template. osls compiles a deployment that creates its stage itself, then sets the stage's tracing,
 * logs and metrics by SDK calls after the deploy, and cannot set per-method throttling at all; so
 * the stage is declared as a resource (PublicApiStage in infra/public-api.yml) and this plugin, once
 * every resource is merged:
 * - takes the stage away from osls's deployment (no StageName), and points PublicApiStage at it;
 * - makes that deployment wait for the API's gateway responses, which take effect only in a
 *   deployment made after them.
 * Plain JavaScript: osls loads plugins itself, without the TypeScript toolchain.
 */
export default class PublicApiStage {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'after:aws:package:finalize:mergeCustomProviderResources': () => this.attachStage() };
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
    deployment.DependsOn = [...new Set([...waitsFor, ...ofPublicApi('AWS::ApiGateway::GatewayResponse')])];
    stage.Properties.DeploymentId = { Ref: deploymentId };
  }
}
