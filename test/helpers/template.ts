import { inject } from 'vitest';
import type { Route, RouteFunction } from '../../local/template-routes.js';
import { type Json, packagedTemplate } from './package.js';

/**
 * The template `npm run package` writes, read once per worker for the template test files, with
 * the lookups they share. The `example` stage's placeholder parameters (serverless.yml) are the
 * values the files check.
 */

export const EXAMPLE = {
  issuer: 'https://issuer.example.com/',
  audience: 'endpoint-read-service',
  publicUrl: 'https://api.example.com',
  vpce: 'vpce-0123456789abcdef0',
  subnets: 'subnet-0123456789abcdef0,subnet-0123456789abcdef1',
  securityGroups: 'sg-0123456789abcdef0',
  mcpAudience: 'https://api.example.com/api/mcp',
  tokenEndpoint: 'https://issuer.example.com/oauth2/token',
  brokerClientId: 'mcp-broker',
  brokerSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp-broker-client-secret-AbCdEf',
};

// Packaged once per run, started by the template project's global setup (test/helpers/template-setup.ts).
export const { template, state } = await packagedTemplate(inject('packagingDir'));

export const resources = (): Array<[string, Json]> => Object.entries(template.Resources as Json);
export const ofType = (type: string): Array<[string, Json]> => resources().filter(([, r]) => r.Type === type);
export const resource = (id: string): Json => {
  const r = (template.Resources as Json)[id];
  if (!r) throw new Error(`no resource ${id} in the template`);
  return r as Json;
};
export const asList = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
export const getAtt = (id: string, attribute = 'Arn'): Json => ({ 'Fn::GetAtt': [id, attribute] });

export interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}
export function statementsOf(roleId: string): Statement[] {
  return (resource(roleId).Properties.Policies as Json[]).flatMap((p) => p.PolicyDocument.Statement as Statement[]);
}

export type TemplateRoute = Route & { id: string };

/**
 * The routes of both REST APIs as the template has them: each method's path (walked up its
 * resources), the function its integration invokes (or API Gateway's own MOCK answer), its
 * authorizer (name, identity source, cache), whether it takes an API key, and its transfer mode.
 */
export function routesOfTemplate(): TemplateRoute[] {
  const pathOf = (ref: Json | undefined, api: string): string => {
    if (!ref?.Ref) return '';
    const r = resource(ref.Ref as string).Properties;
    return `${pathOf(r.ParentId, api)}/${r.PathPart as string}`;
  };
  const authorizerOf = (authorizerId: Json | undefined): Route['authorizer'] => {
    if (!authorizerId) return null;
    const p = resource(authorizerId.Ref as string).Properties;
    const identitySource = (p.IdentitySource as string | undefined)?.replace(/^method\.request\.header\./, '') ?? null;
    return { name: p.Name as string, identitySource, ttlSeconds: p.AuthorizerResultTtlInSeconds as number };
  };
  return ofType('AWS::ApiGateway::Method').map(([id, m]) => {
    const p = m.Properties;
    const api = p.RestApiId.Ref === 'PrivateApi' ? 'private' : 'public';
    const common = {
      id,
      api,
      method: p.HttpMethod,
      resource: pathOf(p.ResourceId, api),
      authorizer: authorizerOf(p.AuthorizerId),
      apiKeyRequired: p.ApiKeyRequired === true,
    } as const;
    if (p.Integration.Type === 'MOCK') return { ...common, mock: true };
    const fn = /(Inventory|Mcp|Observations)LambdaFunction/.exec(JSON.stringify(p.Integration.Uri))![1]!.toLowerCase() as RouteFunction;
    return { ...common, function: fn, transferMode: p.Integration.ResponseTransferMode ?? 'BUFFERED' };
  });
}
