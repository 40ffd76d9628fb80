import type { CallToolResult, McpServer, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type * as z from 'zod';
import { config } from '../config.js';
import {
  EndpointList,
  HOSTNAME_FILTER,
  LIST_LIMIT,
  ListEndpointsToolInput,
  observationsToolInput,
  ObservationsToolOutput,
  READ_ONLY_TOOL,
  TOOL_NAMES,
} from '../contract/mcp-tools.js';
import { OBSERVATION_BOUNDS, type AgentSummary } from '../contract/schemas.js';
import { HttpError } from '../errors.js';
import { forEachInventoryAgent } from '../inventory/list.js';
import { logger } from '../observability/logger.js';
import { recordItemsReturned, recordToolCall } from '../observability/metrics.js';
import { readDashboardForUser } from './observations-client.js';
import { summarizeDashboard, summarizeEndpointList } from './summary.js';
import { retryAfterSeconds, TOOL_SENTENCES, ToolFailure } from './tool-failure.js';

/** Who calls, as the door established it from the verified token; the tenant never comes from arguments. */
export interface ToolCaller {
  tenantId: string;
  subject: string;
  /** The user's bearer token for the MCP resource: exchanged, never passed on. */
  token: string;
  /** The deadline of this HTTP request; every upstream call stops with it. */
  signal: AbortSignal;
}

/**
 * A schema the SDK advertises in `tools/list` but does not validate with: the SDK's own validation
 * answers with raw zod issue dumps, so each tool validates its arguments itself (with the very
 * same zod schema) and answers one fixed sentence per problem.
 */
function advertised(schema: z.ZodType): StandardSchemaWithJSON {
  return {
    '~standard': {
      version: 1,
      vendor: 'endpoint-read-service',
      validate: (value: unknown) => ({ value }),
      jsonSchema: schema['~standard'].jsonSchema,
    },
  } as StandardSchemaWithJSON;
}

/** The sentence for the first problem zod found, by argument; never the issue text itself. */
function argumentSentence(error: z.ZodError, sentences: Record<string, string>, known: readonly string[]): string {
  const issue = error.issues[0];
  if (!issue) return 'The arguments are invalid.';
  if (issue.code === 'unrecognized_keys') {
    return `Unknown argument ${JSON.stringify(String(issue.keys[0]).slice(0, 40))}; this tool takes ${known.join(', ')}.`;
  }
  const field = issue.path[0];
  if (field === undefined) return 'The arguments must be an object.';
  return sentences[String(field)] ?? 'The arguments are invalid.';
}

function text(...parts: string[]): CallToolResult['content'] {
  return parts.map((t) => ({ type: 'text' as const, text: t }));
}

function failed(sentence: string): CallToolResult {
  return { content: text(sentence), isError: true };
}

/** Runs a tool body so that nothing but a ToolFailure's sentence (or a fixed one) leaves it. */
async function guardedTool(tool: string, body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  let result: CallToolResult;
  try {
    result = await body();
  } catch (error) {
    if (error instanceof ToolFailure) result = failed(error.message);
    else {
      logger.error('tool failed', { tool, error: (error as Error)?.name, message: (error as Error)?.message });
      result = failed(TOOL_SENTENCES.internal);
    }
  }
  recordToolCall(tool, result.isError === true);
  return result;
}

function registerObservations(server: McpServer, caller: ToolCaller): void {
  const { ticketSystem } = config();
  const schema = observationsToolInput(ticketSystem);
  const { agentId, minutes, limit, reason, ticketNumber } = OBSERVATION_BOUNDS;
  const sentences: Record<string, string> = {
    agent_id: `agent_id is required and must be ${agentId.min} to ${agentId.max} characters.`,
    minutes: `minutes must be a whole number from ${minutes.min} to ${minutes.max}.`,
    limit: `limit must be a whole number from ${limit.min} to ${limit.max}.`,
    reason: `reason is required: say why the endpoint is read, in ${reason.min} to ${reason.max} characters of text.`,
    ticket: `ticket needs both number (up to ${ticketNumber.max} letters, digits and ._:/#- characters, starting with a letter or digit) and system "${ticketSystem}".`,
  };
  server.registerTool(
    TOOL_NAMES.observations,
    {
      title: 'Endpoint health dashboard',
      description: [
        "Reads the curated health dashboard of one endpoint of your tenant: overall status, CPU, memory and disk usage (percent) from the newest observation, findings, and history over a window (default the last 60 minutes).",
        'A missing observation is reported as unknown, never as healthy; a metric that was not reported has value null, not 0.',
        'Every read is audited: give the reason in the user\'s words, and a ticket when there is one (some tenants require it).',
        'Find agent_id values with list_endpoints.',
      ].join(' '),
      inputSchema: advertised(schema),
      outputSchema: ObservationsToolOutput,
      annotations: { title: 'Endpoint health dashboard', ...READ_ONLY_TOOL },
    },
    async (raw) =>
      guardedTool(TOOL_NAMES.observations, async () => {
        const parsed = schema.safeParse(raw ?? {});
        if (!parsed.success) return failed(argumentSentence(parsed.error, sentences, Object.keys(schema.shape)));
        const { dashboard, auditId } = await readDashboardForUser({ subjectToken: caller.token, args: parsed.data, signal: caller.signal });
        recordItemsReturned('mcp', dashboard.history?.length ?? 0);
        // Who asked is named in the line itself: locally the observations handler shares this process's logger.
        logger.info('dashboard read through the broker', { tenant: caller.tenantId, subject: caller.subject, status: dashboard.status, auditId });
        return {
          content: text(summarizeDashboard(dashboard), JSON.stringify(dashboard)),
          structuredContent: dashboard as unknown as Record<string, unknown>,
        };
      }),
  );
}

function registerListEndpoints(server: McpServer, caller: ToolCaller): void {
  const schema = ListEndpointsToolInput;
  const sentences: Record<string, string> = {
    connection_state: 'connection_state must be one of connected, stale, disconnected, never_connected.',
    hostname: `hostname must be ${HOSTNAME_FILTER.min} to ${HOSTNAME_FILTER.max} characters.`,
    limit: `limit must be a whole number from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}.`,
  };
  server.registerTool(
    TOOL_NAMES.listEndpoints,
    {
      title: 'List endpoints',
      description: [
        "Lists the endpoints (managed machines) of your tenant, online and offline, ordered by agent_id, with their connection state, so you can find the agent_id to pass to observations.",
        'Filter by connection_state and by a part of the hostname (case-insensitive). A disconnected endpoint is not a deleted one.',
      ].join(' '),
      inputSchema: advertised(schema),
      outputSchema: EndpointList,
      annotations: { title: 'List endpoints', ...READ_ONLY_TOOL },
    },
    async (raw) =>
      guardedTool(TOOL_NAMES.listEndpoints, async () => {
        const parsed = schema.safeParse(raw ?? {});
        if (!parsed.success) return failed(argumentSentence(parsed.error, sentences, Object.keys(schema.shape)));
        const filters = parsed.data;
        const needle = filters.hostname?.toLowerCase();
        const matching: AgentSummary[] = [];
        // Only the matching endpoints are kept; the tenant itself is read page by page.
        const { agents: total } = await readInventory(caller.tenantId, caller.signal, (a) => {
          if ((!filters.connection_state || a.connection_state === filters.connection_state) && (needle === undefined || a.hostname.toLowerCase().includes(needle))) {
            matching.push(a);
          }
        });
        // Code-unit order, as the inventory lists them (pages may bring escaped ids in another order).
        matching.sort((a, b) => (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0));
        const limit = filters.limit ?? LIST_LIMIT.default;
        const list: EndpointList = {
          endpoints: matching.slice(0, limit),
          matching: matching.length,
          total,
          truncated: matching.length > limit,
        };
        recordItemsReturned('mcp', list.endpoints.length);
        return {
          content: text(summarizeEndpointList(list, filters), JSON.stringify(list)),
          structuredContent: list as unknown as Record<string, unknown>,
        };
      }),
  );
}

/** The tenant's inventory as listEndpointInventory reads it; its store failures become tool sentences. */
async function readInventory(tenantId: string, signal: AbortSignal, visit: (agent: AgentSummary) => void): Promise<{ agents: number }> {
  try {
    return await forEachInventoryAgent(tenantId, new Date(), visit, signal);
  } catch (error) {
    if (error instanceof HttpError && (error.statusCode === 503 || error.statusCode === 502)) {
      throw new ToolFailure(TOOL_SENTENCES.unavailable('inventory', retryAfterSeconds(error.headers['Retry-After'])));
    }
    if (error instanceof HttpError && error.statusCode === 504) throw new ToolFailure(TOOL_SENTENCES.timedOut('inventory', 5));
    logger.error('inventory read failed', { error: (error as Error)?.name });
    throw new ToolFailure(TOOL_SENTENCES.failed('inventory'));
  }
}

/** Registers both read-only tools for one caller on a fresh server (one per HTTP request). */
export function registerTools(server: McpServer, caller: ToolCaller): void {
  registerObservations(server, caller);
  registerListEndpoints(server, caller);
}
