import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerBytes, RESULT_BUDGET_BYTES } from '../../lib/mcp/limits.js';
import { auditItemsOf } from '../../local/audit-items.js';
import { smallFleet } from '../fixtures/small-fleet.js';
import { connectTo } from '../helpers/mcp-client.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';

/**
 * The MCP App at the protocol level, through the local stack's door with the SDK client, in both
 * protocol eras: `tools/list` names the tools' view where hosts look for it (and where older hosts
 * did), `resources/list` and `resources/read` serve it as an MCP App document that
 * reaches no domain, and a client that never asked for the extension sees the same tools as before;
 * and what a host's form, built from the tool's input schema, sends reads the dashboard. What the
 * view shows is tested in a browser (mcp-app.test.ts, mcp-app-host.test.ts).
 */

const VIEW_URI = 'ui://endpoint-read-service/view.html';
const MCP_APP_MIME = 'text/html;profile=mcp-app';
/**
 * The arguments MCP Inspector 2.12's form sent for observations, as it sent them: the form fills in
 * the constant ticket.system from the input schema by itself, so a user who left the ticket alone
 * sends a ticket with a system and no number.
 */
const INSPECTOR_FORM_INPUT = Object.freeze({ agent_id: 'ac-002', reason: 'Checking disk usage', ticket: { system: 'servicenow' } });
const ERAS = [
  ['2025-11-25', undefined],
  ['2026-07-28', { versionNegotiation: { mode: 'auto' as const } }],
] as const;

let stack: SharedStack;

beforeAll(async () => {
  stack = await sharedStack(smallFleet());
});
afterAll(async () => {
  await stack?.release();
});

describe.each(ERAS)('E2E: the tools as MCP App tools (protocol %s)', (_protocol, options) => {
  let client: Client;

  beforeAll(async () => {
    client = await connectTo(stack.publicUrl, await stack.mcpToken({ tenant: 'acme' }), options);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('names the view on both tools in tools/list, in _meta.ui.resourceUri and the older ui/resourceUri', async () => {
    const { tools } = await client.listTools();
    const meta = Object.fromEntries(tools.map((t) => [t.name, t._meta]));

    expect(meta).toEqual({
      observations: { ui: { resourceUri: VIEW_URI }, 'ui/resourceUri': VIEW_URI },
      list_endpoints: { ui: { resourceUri: VIEW_URI }, 'ui/resourceUri': VIEW_URI },
    });
  });

  it('lists the view as a resource of the MCP App type that asks for no domain', async () => {
    const { resources } = await client.listResources();

    expect(resources).toEqual([
      {
        uri: VIEW_URI,
        name: 'Endpoint views',
        description: 'Draws the tool results: the health dashboard, the endpoint list.',
        mimeType: MCP_APP_MIME,
        _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } },
      },
    ]);
  });

  it('serves the view as one self-contained HTML document: script and style inline, nothing loaded from anywhere', async () => {
    const { contents } = await client.readResource({ uri: VIEW_URI });
    const [view] = contents as Array<{ uri: string; mimeType: string; text: string; _meta: unknown }>;
    const html = view!.text;

    expect(contents).toHaveLength(1);
    expect(view).toMatchObject({
      uri: VIEW_URI,
      mimeType: MCP_APP_MIME,
      _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] } } },
    });
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">`,
    );
    const [, style = ''] = /<style>([\s\S]*)<\/style>/.exec(html) ?? [];
    const shell = html.replace(/<script>[\s\S]*<\/script>/, '<script></script>').replace(/<style>[\s\S]*<\/style>/, '<style></style>');
    expect(html.match(/<script\b/g)).toHaveLength(1);
    expect(shell).not.toMatch(/\b(src|href|action)=/i);
    expect(style).not.toMatch(/url\(|@import/i);
    expect(style.length).toBeGreaterThan(1_000);
    // A view read counts as a tool call in a batch (lib/mcp/request-rules.ts): it must fit a tool result's share of Lambda's answer.
    expect(answerBytes({ contents })).toBeLessThan(RESULT_BUDGET_BYTES);
  });
});

describe("E2E: the observations tool as a host's form built from its input schema fills it", () => {
  const client = async (tenant: string): Promise<Client> =>
    connectTo(stack.publicUrl, await stack.mcpToken({ tenant, subject: `form-user@${tenant}` }));

  it('advertises a ticket whose number a form may leave out, the system its one constant', async () => {
    const c = await client('acme');
    try {
      const { tools } = await c.listTools();
      const properties = tools.find((t) => t.name === 'observations')?.inputSchema.properties as Record<string, unknown> | undefined;
      const ticket = properties?.ticket;

      expect(ticket).toMatchObject({ type: 'object', required: ['system'], properties: { system: { const: 'servicenow' } } });
    } finally {
      await c.close();
    }
  });

  it('reads the dashboard with exactly the input Inspector sent (a ticket of the system alone is no ticket), auditing no ticket', async () => {
    const c = await client('acme');
    try {
      const result = await c.callTool({ name: 'observations', arguments: INSPECTOR_FORM_INPUT });
      const audited = (await auditItemsOf(stack.dynamo, stack.config.auditTable, 'acme')).filter((i) => i.subject === 'form-user@acme');

      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ schema: 'endpoint-dashboard/v1', endpoint: { id: 'ac-002' } });
      expect(audited).toHaveLength(1);
      expect(audited[0]).toMatchObject({ outcome: 'allowed', status_code: 200, ticket_number: null, ticket_system: null });
    } finally {
      await c.close();
    }
  });

  it("answers that input for a tenant that requires a ticket with the tenant's rule, not a broken pair", async () => {
    const c = await client('globex');
    try {
      const result = await c.callTool({ name: 'observations', arguments: { ...INSPECTOR_FORM_INPUT, agent_id: 'gx-002' } });

      expect(result.isError).toBe(true);
      expect((result.content as Array<{ text: string }>)[0]?.text).toMatch(
        /^This tenant requires a ticket for every read: call observations again with the ticket argument/,
      );
    } finally {
      await c.close();
    }
  });

  it('still refuses a number without its system: the pair rule of the private hop holds', async () => {
    const c = await client('acme');
    try {
      const result = await c.callTool({ name: 'observations', arguments: { ...INSPECTOR_FORM_INPUT, ticket: { number: 'INC0042' } } });

      expect(result).toMatchObject({
        isError: true,
        content: [
          {
            type: 'text',
            text: 'ticket needs both number (up to 100 letters, digits and ._:/#- characters, starting with a letter or digit) and system "servicenow".',
          },
        ],
      });
    } finally {
      await c.close();
    }
  });
});
