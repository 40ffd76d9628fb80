/**
 * What the public REST API answers itself, for one stage's values: its gateway responses
 * (infra/gateway-responses.ts, as `npm run build` writes them into the template) and its static
 * answers (the MOCK methods of infra/static-answers.ts, as `npm run package` writes them), with
 * the browser origins the MCP door admits. The local gateway answers from this (local/public-api-answers.ts
 * runs it in a process of its own, as osls runs infra/package-resources-cli.ts): the deploy code
 * makes the answers, and the emulator, which takes nothing of lib/, only runs them.
 *
 * Reads one JSON object on stdin, `{ "variables": { … } }`: the environments the stack gives the
 * functions behind the doors (the authorizer's and the MCP function's), from which lib/config.ts
 * reads the values (STATIC_ANSWERS_CONFIG, as for the template). Writes one JSON object on stdout (PublicApiAnswers in local/public-api-answers.ts);
 * a configuration lib/config.ts refuses is its sentence on stderr and exit status 1.
 */
import { readFileSync } from 'node:fs';
import { STATIC_ANSWERS_CONFIG } from '../lib/config.js';
import { admittedOrigins } from '../lib/mcp/cors.js';
import { GATEWAY_RESPONSES, gatewayResponseBodyTemplate, gatewayResponseHeaders } from './gateway-responses.js';
import { staticAnswers } from './static-answers.js';

function main(): void {
  const { variables } = JSON.parse(readFileSync(0, 'utf8')) as { variables: Record<string, string> };
  const cfg = STATIC_ANSWERS_CONFIG.parse(variables);
  const gatewayResponses = Object.fromEntries(
    GATEWAY_RESPONSES.map((definition) => [
      definition.type,
      {
        ...(definition.status !== undefined ? { status: definition.status } : {}),
        sentence: definition.sentence,
        headers: gatewayResponseHeaders(definition, cfg),
        body: gatewayResponseBodyTemplate(definition),
      },
    ]),
  );
  process.stdout.write(
    JSON.stringify({
      gatewayResponses,
      staticAnswers: staticAnswers(cfg),
      admittedOrigins: admittedOrigins(cfg),
      variables: STATIC_ANSWERS_CONFIG.variables,
    }),
  );
}

try {
  main();
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
