import { readFileSync } from 'node:fs';
import { parse, type Tags } from 'yaml';

/**
 * Reading the template's own sources (serverless.yml, infra/*.yml) as the local stack takes its
 * settings from them: the functions (local/lambda/function-specs.ts), the routes
 * (local/template-routes.ts) and the tables (local/tables.ts).
 */

/** A value of a template source after YAML parsing: CloudFormation's short forms become their long forms. */
export type YamlValue = string | number | boolean | null | YamlValue[] | { [key: string]: YamlValue };

/** CloudFormation's short-form tags, read as the long forms CloudFormation itself turns them into. */
const CLOUDFORMATION_TAGS: Tags = [
  { tag: '!Ref', resolve: (value: string) => ({ Ref: value }) },
  { tag: '!Sub', resolve: (value: string) => ({ 'Fn::Sub': value }) },
  { tag: '!GetAtt', resolve: (value: string) => ({ 'Fn::GetAtt': value.split('.') }) },
  { tag: '!Split', collection: 'seq', resolve: (value) => ({ 'Fn::Split': value.toJSON() as YamlValue }) },
  // The conditions of the included resources (infra/*.yml), read but never evaluated here.
  ...['If', 'Equals', 'Not', 'And', 'Or', 'Join', 'Select'].map((name) => ({
    tag: `!${name}`,
    collection: 'seq' as const,
    resolve: (value: { toJSON(): unknown }) => ({ [`Fn::${name}`]: value.toJSON() as YamlValue }),
  })),
  { tag: '!Condition', resolve: (value: string) => ({ Condition: value }) },
];

/** A template source file, parsed with CloudFormation's short forms read as their long forms. */
export function readTemplateSource<T>(file: string): T {
  return parse(readFileSync(file, 'utf8'), { customTags: CLOUDFORMATION_TAGS }) as T;
}
