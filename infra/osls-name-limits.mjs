/**
 * An osls plugin (serverless.yml `plugins`) that refuses, while the template is packaged (by
 * `npm run package` and by `osls deploy` alike), a stage whose name would push a Lambda function
 * name or an IAM role name past AWS's limit of 64 characters. osls does not check, and
 * CloudFormation would refuse the names only halfway through a deploy. The longest name is read
 * from the compiled template itself (function names are `<service>-<stage>-<function>`, role names
 * `<service>-<stage>-<role>`), so the stage's room follows whatever the template names.
 * Plain JavaScript: osls loads plugins itself, without the TypeScript toolchain.
 */

/** AWS's limit on a Lambda function's name and on an IAM role's name. */
export const NAME_LIMIT = 64;

/** The properties that hold a name bound by NAME_LIMIT, per resource type. */
const LIMITED_NAMES = Object.freeze({
  'AWS::Lambda::Function': { property: 'FunctionName', what: 'Lambda function' },
  'AWS::IAM::Role': { property: 'RoleName', what: 'IAM role' },
});

/**
 * The sentence that refuses `stage` for `template`, or undefined when every function and role name
 * fits. Names that are not plain strings (left to CloudFormation to make) are not judged.
 */
export function nameLimitProblem(template, stage) {
  let longest;
  for (const resource of Object.values(template.Resources ?? {})) {
    const limited = LIMITED_NAMES[resource.Type];
    const name = limited && resource.Properties?.[limited.property];
    if (typeof name !== 'string') continue;
    if (!longest || name.length > longest.name.length) longest = { name, what: limited.what };
  }
  if (!longest || longest.name.length <= NAME_LIMIT) return undefined;
  const room = stage.length - (longest.name.length - NAME_LIMIT);
  return (
    `The stage name "${stage}" makes the ${longest.what} name "${longest.name}" ${longest.name.length} characters long, ` +
    `past AWS's limit of ${NAME_LIMIT} for function and role names: use a stage name of at most ${Math.max(room, 0)} characters.`
  );
}

export default class NameLimits {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'after:aws:package:finalize:mergeCustomProviderResources': () => {
        const stage = this.serverless.getProvider('aws').getStage();
        const problem = nameLimitProblem(this.serverless.service.provider.compiledCloudFormationTemplate, stage);
        if (problem) throw new Error(problem);
      },
    };
  }
}
