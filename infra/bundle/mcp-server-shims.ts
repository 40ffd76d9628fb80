/**
 * Stands in for `@modelcontextprotocol/server/_shims` in the Lambda bundles (infra/build.ts maps
 * the one onto the other). On Node the SDK's shim brings its default JSON Schema validator, built
 * on ajv (158 KiB bundled), which the server uses only to check an elicitation form's answer
 * against a raw JSON Schema. This service elicits nothing, and its tools' arguments and results
 * are checked by their own zod schemas, so the validator never runs.
 *
 * Invariant: the names the SDK imports exist; a validator asked for a schema says why it cannot
 * work instead of failing somewhere deeper.
 */
import process from 'node:process';

export class DefaultJsonSchemaValidator {
  getValidator(): never {
    throw new Error('JSON Schema validation is not bundled: this server elicits nothing (infra/bundle/mcp-server-shims.ts)');
  }
}

export { process };
