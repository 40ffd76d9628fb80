import type { Client, ClientOptions, ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditItemsOf } from '../../local/audit-items.js';
import { call, connectTo, recentDemoFleet, type ToolResult, textOf } from '../helpers/mcp-client.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';

/**
 * `observations` asking the person (MCP 2026-07-28, multi round-trip requests) end to end: the
 * SDK's 2026-07-28 client with its elicitation handler, and the same exchange by hand as raw
 * JSON-RPC POSTs, against the local stack (the MCP function's bundle, the token exchange, the
 * private listener and the observations function's bundle, the audit table). The demo tenant
 * `globex` requires a ticket on every read; `acme` does not.
 */

let stack: SharedStack;

beforeAll(async () => {
  stack = await sharedStack(recentDemoFleet(new Date()));
});
afterAll(async () => {
  await stack?.release();
});

const TICKET_RULE = 'up to 100 letters, digits and ._:/#- characters, starting with a letter or digit';
const TICKET_FIELDS = {
  ticket_number: {
    type: 'string',
    title: 'Ticket number',
    description: `Your servicenow ticket for this read, e.g. INC0012345: ${TICKET_RULE}.`,
    minLength: 1,
    maxLength: 100,
  },
  ticket_system: {
    type: 'string',
    title: 'Ticket system',
    description: 'The one ticketing product this service takes.',
    oneOf: [{ const: 'servicenow', title: 'servicenow' }],
    default: 'servicenow',
  },
};
const REASON_FIELD = {
  reason: {
    type: 'string',
    title: 'Reason',
    description: "Why the endpoint is read, in your words (3 to 500 characters). It is recorded in the tenant's audit trail.",
    minLength: 3,
    maxLength: 500,
  },
};

/** The audit items one user's requests left in a tenant's trail. */
async function auditOf(tenant: string, subject: string): Promise<Record<string, unknown>[]> {
  return (await auditItemsOf(stack.dynamo, stack.config.auditTable, tenant)).filter((item) => item.subject === subject);
}

interface AskingClient {
  client: Client;
  /** Every form the person was shown, in order. */
  forms: ElicitRequestFormParams[];
}

/**
 * The SDK's 2026-07-28 client as a host that can show forms: it declares form elicitation and
 * answers the n-th form (from 0) with `answer(form, n)`, as the person would.
 */
async function askingClient(
  tenant: string,
  subject: string,
  answer: (form: ElicitRequestFormParams, n: number) => ElicitResult,
): Promise<AskingClient> {
  const forms: ElicitRequestFormParams[] = [];
  const options: ClientOptions = { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } };
  const client = await connectTo(stack.publicUrl, await stack.mcpToken({ tenant, subject }), options, (c) => {
    c.setRequestHandler('elicitation/create', async (request) => {
      const form = request.params as ElicitRequestFormParams;
      forms.push(form);
      return answer(form, forms.length - 1);
    });
  });
  return { client, forms };
}

/** One call as the person answers its forms: the final result, the forms shown, and the user's audit items after it. */
async function askedCall(
  tenant: string,
  subject: string,
  args: Record<string, unknown>,
  answer: (form: ElicitRequestFormParams, n: number) => ElicitResult,
): Promise<{ result: ToolResult; forms: ElicitRequestFormParams[]; audit: Record<string, unknown>[] }> {
  const { client, forms } = await askingClient(tenant, subject, answer);
  try {
    const result = await call(client, 'observations', args);
    return { result, forms, audit: await auditOf(tenant, subject) };
  } finally {
    await client.close();
  }
}

const accept = (content: Record<string, string>) => (): ElicitResult => ({ action: 'accept', content });

describe('E2E: observations asks the person for what the policy needs (SDK client, 2026-07-28, form elicitation)', () => {
  it("reads a ticket-required tenant's dashboard with the ticket the person gives in one form, and audits it as the person's", async () => {
    const { result, forms, audit } = await askedCall(
      'globex',
      'ask-ticket',
      { agent_id: 'gx-002', reason: 'disk alert' },
      accept({ ticket_number: 'CHG0042' }),
    );

    expect(forms).toEqual([
      {
        mode: 'form',
        message:
          "To read endpoint `gx-002` for the reason `disk alert`, this tenant's policy requires a ticket, and the assistant gave none. A ticket number is up to 100 letters, digits and ._:/#- characters, starting with a letter or digit.",
        requestedSchema: { type: 'object', properties: TICKET_FIELDS, required: ['ticket_number'] },
      },
    ]);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ schema: 'endpoint-dashboard/v1', endpoint: { id: 'gx-002' } });
    expect(audit).toEqual([
      expect.objectContaining({
        agent_id: 'gx-002',
        reason: 'disk alert',
        reason_source: 'argument',
        ticket_number: 'CHG0042',
        ticket_system: 'servicenow',
        ticket_source: 'person',
        outcome: 'allowed',
        status_code: 200,
      }),
    ]);
  });

  it('asks for a missing reason (no ticket needed at acme) and audits the reason as the person gave it', async () => {
    const { result, forms, audit } = await askedCall(
      'acme',
      'ask-reason',
      { agent_id: 'ac-002' },
      accept({ reason: '  Kunde meldet volle Platte  ' }),
    );

    expect(forms).toEqual([
      {
        mode: 'form',
        message:
          "To read endpoint `ac-002`, each read is recorded in the tenant's audit trail with its reason, and the assistant gave none.",
        requestedSchema: { type: 'object', properties: REASON_FIELD, required: ['reason'] },
      },
    ]);
    expect(result.isError).toBeFalsy();
    expect(audit).toEqual([
      expect.objectContaining({
        reason: 'Kunde meldet volle Platte',
        reason_source: 'person',
        ticket_number: null,
        ticket_source: null,
        outcome: 'allowed',
      }),
    ]);
  });

  it('asks for both in one form when both are missing, and audits both as the person gave them', async () => {
    const { result, forms, audit } = await askedCall(
      'globex',
      'ask-both',
      { agent_id: 'gx-002' },
      accept({ ticket_number: 'INC0012345', ticket_system: 'servicenow', reason: 'customer reports a full disk' }),
    );

    expect(forms).toEqual([
      {
        mode: 'form',
        message:
          "To read endpoint `gx-002`, this tenant's policy requires a ticket, and the assistant gave none; each read is recorded in the tenant's audit trail with its reason, and the assistant gave none. A ticket number is up to 100 letters, digits and ._:/#- characters, starting with a letter or digit.",
        requestedSchema: { type: 'object', properties: { ...TICKET_FIELDS, ...REASON_FIELD }, required: ['ticket_number', 'reason'] },
      },
    ]);
    expect(result.isError).toBeFalsy();
    expect(audit).toEqual([
      expect.objectContaining({
        reason: 'customer reports a full disk',
        reason_source: 'person',
        ticket_number: 'INC0012345',
        ticket_source: 'person',
        outcome: 'allowed',
      }),
    ]);
  });

  it('asks again, naming the rule, for a ticket number that breaks its pattern, and reads with the one that follows it', async () => {
    const { result, forms, audit } = await askedCall('globex', 'ask-again', { agent_id: 'gx-002', reason: 'disk alert' }, (_form, n) =>
      n === 0
        ? { action: 'accept', content: { ticket_number: 'CHG 42; DROP' } }
        : { action: 'accept', content: { ticket_number: 'CHG0042' } },
    );

    expect(forms.map((f) => f.message)).toEqual([
      expect.stringMatching(/^To read endpoint `gx-002` for the reason `disk alert`, this tenant's policy requires a ticket/),
      'To read endpoint `gx-002`, the ticket number `CHG 42; DROP` does not follow its rule: please answer again (form 2 of 3). A ticket number is up to 100 letters, digits and ._:/#- characters, starting with a letter or digit.',
    ]);
    expect(forms[1]?.requestedSchema).toEqual({ type: 'object', properties: TICKET_FIELDS, required: ['ticket_number'] });
    expect(result.isError).toBeFalsy();
    expect(audit).toEqual([expect.objectContaining({ ticket_number: 'CHG0042', ticket_source: 'person', outcome: 'allowed' })]);
  });

  it('ends with one sentence after 3 forms whose answers all break the rule, and reads nothing', async () => {
    const { result, forms, audit } = await askedCall('globex', 'ask-exhausted', { agent_id: 'gx-002', reason: 'disk alert' }, (_f, n) => ({
      action: 'accept',
      content: { ticket_number: `bad ticket ${n}` },
    }));

    expect(forms).toHaveLength(3);
    expect(forms[2]?.message).toMatch(/please answer again \(form 3 of 3\)/);
    expect(result).toMatchObject({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'After 3 forms, the ticket number `bad ticket 2` does not follow its rule (a ticket number is up to 100 letters, digits and ._:/#- characters, starting with a letter or digit): nothing was read; call observations again to be asked anew.',
        },
      ],
    });
    expect(audit).toEqual([]);
  });

  it.each([
    ['declines', 'decline', 'The person declined to give a ticket: nothing was read.', 'declined'],
    ['dismisses', 'cancel', 'The person cancelled the question for a ticket: nothing was read.', 'cancelled'],
  ] as const)(
    'reads nothing when the person %s the form, and records the refusal as a refused request',
    async (_what, action, sentence, source) => {
      const subject = `ask-${action}`;
      const { result, forms, audit } = await askedCall('globex', subject, { agent_id: 'gx-002', reason: 'disk alert' }, () => ({ action }));

      expect(forms).toHaveLength(1);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(new RegExp(`^${sentence.replace(/[.()]/g, '\\$&')} \\(request id: [0-9a-f-]{36}\\)$`));
      expect(result.structuredContent).toBeUndefined();
      expect(audit).toEqual([
        expect.objectContaining({
          agent_id: 'gx-002',
          reason: 'disk alert',
          reason_source: 'argument',
          ticket_number: null,
          ticket_source: source,
          outcome: 'denied',
          status_code: 403,
        }),
      ]);
    },
  );

  it('records a declined reason with no reason, and the ticket the assistant gave with its source', async () => {
    const { result, audit } = await askedCall(
      'globex',
      'ask-decline-reason',
      { agent_id: 'gx-002', ticket: { number: 'CHG7', system: 'servicenow' } },
      () => ({
        action: 'decline',
      }),
    );

    expect(textOf(result)).toMatch(/^The person declined to give a reason: nothing was read\. \(request id: /);
    expect(audit).toEqual([
      expect.objectContaining({
        reason: null,
        reason_source: 'declined',
        ticket_number: 'CHG7',
        ticket_source: 'argument',
        outcome: 'denied',
        status_code: 403,
      }),
    ]);
  });

  it('takes only the fields the form asked for: extra fields in the answer are ignored', async () => {
    const { result, audit } = await askedCall(
      'globex',
      'ask-extra',
      { agent_id: 'gx-002', reason: 'disk alert' },
      accept({ ticket_number: 'CHG0042', reason: 'a reason nobody asked for', agent_id: 'gx-001', tenant: 'acme' }),
    );

    expect(result.structuredContent).toMatchObject({ endpoint: { id: 'gx-002' } });
    expect(audit).toEqual([
      expect.objectContaining({ agent_id: 'gx-002', reason: 'disk alert', reason_source: 'argument', ticket_number: 'CHG0042' }),
    ]);
  });

  it('asks for a ticket argument that breaks its rule, where the tenant needs none, and reads without one when the person leaves it empty', async () => {
    const { result, forms, audit } = await askedCall(
      'acme',
      'ask-bad-ticket',
      { agent_id: 'ac-001', reason: 'routine check', ticket: { number: 'not a ticket!', system: 'servicenow' } },
      accept({}),
    );

    expect(forms).toEqual([
      {
        mode: 'form',
        message:
          'To read endpoint `ac-001` for the reason `routine check`, the assistant gave a ticket that will not do (the ticket number `not a ticket!` does not follow its rule), and this tenant does not require one: leave it empty to read without. A ticket number is up to 100 letters, digits and ._:/#- characters, starting with a letter or digit.',
        requestedSchema: {
          type: 'object',
          properties: {
            ...TICKET_FIELDS,
            ticket_number: {
              ...TICKET_FIELDS.ticket_number,
              description: `${TICKET_FIELDS.ticket_number.description} Leave it empty to read without a ticket.`,
            },
          },
          required: [],
        },
      },
    ]);
    expect(result.isError).toBeFalsy();
    expect(audit).toEqual([
      expect.objectContaining({ reason_source: 'argument', ticket_number: null, ticket_source: null, outcome: 'allowed' }),
    ]);
  });

  it('asks nothing when the arguments carry all the policy needs, and audits both as arguments', async () => {
    const { result, forms, audit } = await askedCall(
      'globex',
      'ask-nothing',
      { agent_id: 'gx-002', reason: 'disk alert', ticket: { number: 'CHG1', system: 'servicenow' } },
      accept({}),
    );

    expect(forms).toEqual([]);
    expect(result.isError).toBeFalsy();
    expect(audit).toEqual([expect.objectContaining({ reason_source: 'argument', ticket_source: 'argument', outcome: 'allowed' })]);
  });

  it('never asks for what the person cannot fix: an argument out of bounds is its sentence, as before', async () => {
    const { result, forms } = await askedCall('globex', 'ask-bounds', { agent_id: 'gx-002', minutes: 4 }, accept({}));

    expect(forms).toEqual([]);
    expect(textOf(result)).toBe('minutes must be a whole number from 5 to 10080.');
  });

  it('lists endpoints as before for a client that can be asked', async () => {
    const { client, forms } = await askingClient('acme', 'ask-list', accept({}));
    try {
      const listed = await call(client, 'list_endpoints', { hostname: 'acme-db', limit: 1 });
      expect(listed.isError).toBeFalsy();
      expect(listed.structuredContent).toMatchObject({ endpoints: [{ hostname: 'acme-db-1' }] });
      expect(forms).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('E2E: clients that cannot be asked get the sentence they got before', () => {
  const TICKET_SENTENCE =
    /^This tenant requires a ticket for every read: call observations again with the ticket argument, an object with its two fields number \(your ticket number, e\.g\. INC0012345\) and system "servicenow"\. \(request id: [0-9a-f-]{36}\)$/;
  const REASON_SENTENCE = 'reason is required: say why the endpoint is read, in 3 to 500 characters.';

  it.each<[string, string, ClientOptions]>([
    ['a 2026-07-28 client without the elicitation capability', 'no-ask-modern', { versionNegotiation: { mode: 'auto' } }],
    [
      'a 2025-era client, even one that declares elicitation (it cannot be asked without a session)',
      'no-ask-legacy',
      { capabilities: { elicitation: { form: {} } } },
    ],
  ])('%s', async (_who, subject, options) => {
    const forms: unknown[] = [];
    const client = await connectTo(stack.publicUrl, await stack.mcpToken({ tenant: 'globex', subject }), options, (c) => {
      if (options.capabilities) {
        c.setRequestHandler('elicitation/create', async (request) => {
          forms.push(request.params);
          return { action: 'decline' };
        });
      }
    });
    try {
      const noTicket = await call(client, 'observations', { agent_id: 'gx-002', reason: 'disk alert' });
      const noReason = await call(client, 'observations', { agent_id: 'gx-002', ticket: { number: 'CHG1', system: 'servicenow' } });

      expect(forms).toEqual([]);
      expect(noTicket.isError).toBe(true);
      expect(textOf(noTicket)).toMatch(TICKET_SENTENCE);
      expect(noReason).toMatchObject({ isError: true, content: [{ type: 'text', text: REASON_SENTENCE }] });
      // The refused ticket reached the private operation, as before: one denied item, its reason the assistant's.
      expect(await auditOf('globex', subject)).toEqual([
        expect.objectContaining({ reason_source: 'argument', ticket_source: null, outcome: 'denied', status_code: 403 }),
      ]);
    } finally {
      await client.close();
    }
  });
});

/** The `_meta` envelope a 2026-07-28 client sends with each request, declaring form elicitation. */
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'curl', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

interface JsonRpcAnswer {
  status: number;
  body: {
    id?: unknown;
    result?: {
      resultType?: string;
      isError?: boolean;
      content?: Array<{ text: string }>;
      structuredContent?: Record<string, unknown>;
      inputRequests?: Record<string, { method: string; params: { message: string; requestedSchema: { required: string[] } } }>;
      requestState?: string;
    };
    error?: { code: number; message: string; data?: unknown };
  };
}

describe('E2E: the two rounds by hand on the wire (raw JSON-RPC POSTs)', () => {
  let nextId = 1;
  /** One `tools/call` of `observations` as a 2026-07-28 client sends it, with `extra` params (inputResponses, requestState). */
  async function observations(token: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<JsonRpcAnswer> {
    const res = await fetch(`${stack.publicUrl}/api/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'observations',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'tools/call',
        params: { name: 'observations', arguments: args, ...extra, _meta: ENVELOPE },
      }),
    });
    return { status: res.status, body: (await res.json()) as JsonRpcAnswer['body'] };
  }
  const ARGS = { agent_id: 'gx-002', reason: 'disk alert' };
  const answer = (content: Record<string, unknown>) => ({ attribution: { action: 'accept', content } });

  it('answers input_required with one form and a signed requestState, then the dashboard on the retry with the answer', async () => {
    const token = await stack.mcpToken({ tenant: 'globex', subject: 'wire-two-rounds' });

    const first = await observations(token, ARGS);
    const second = await observations(token, ARGS, {
      inputResponses: answer({ ticket_number: 'CHG0042' }),
      requestState: first.body.result?.requestState,
    });

    expect(first.status).toBe(200);
    expect(first.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        attribution: { method: 'elicitation/create', params: { mode: 'form', requestedSchema: { required: ['ticket_number'] } } },
      },
      requestState: expect.stringMatching(/^v1\.[\w-]+\.[\w-]+$/),
    });
    expect(second.body.result).toMatchObject({ resultType: 'complete', structuredContent: { endpoint: { id: 'gx-002' } } });
    expect(await auditOf('globex', 'wire-two-rounds')).toEqual([
      expect.objectContaining({ ticket_number: 'CHG0042', ticket_source: 'person', outcome: 'allowed' }),
    ]);
  });

  it('asks again, reading nothing, for answers that come without a requestState (questions it never asked)', async () => {
    const token = await stack.mcpToken({ tenant: 'globex', subject: 'wire-unasked' });

    const unasked = await observations(token, ARGS, { inputResponses: answer({ ticket_number: 'CHG0042' }) });

    expect(unasked.body.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    expect(unasked.body.result?.inputRequests?.attribution?.params.message).toMatch(
      /^To read endpoint `gx-002` for the reason `disk alert`, this tenant's policy/,
    );
    expect(await auditOf('globex', 'wire-unasked')).toEqual([]);
  });

  it('asks again when the retry answers under another key than the form it was sent, and reads nothing', async () => {
    const token = await stack.mcpToken({ tenant: 'globex', subject: 'wire-other-key' });
    const first = await observations(token, ARGS);

    const retry = await observations(token, ARGS, {
      inputResponses: { ticket: { action: 'accept', content: { ticket_number: 'CHG0042' } } },
      requestState: first.body.result?.requestState,
    });

    expect(retry.body.result).toMatchObject({ resultType: 'input_required' });
    expect(retry.body.result?.inputRequests?.attribution?.params.message).toBe(
      'To read endpoint `gx-002`, no answer to the form came back: please answer again (form 2 of 3). A ticket number is up to 100 letters, digits and ._:/#- characters, starting with a letter or digit.',
    );
    expect(await auditOf('globex', 'wire-other-key')).toEqual([]);
  });

  it("refuses a forged, an altered and another user's requestState (-32602), reading nothing", async () => {
    const token = await stack.mcpToken({ tenant: 'globex', subject: 'wire-forged' });
    const first = await observations(token, ARGS);
    const state = first.body.result!.requestState!;
    const [version, payload, mac] = state.split('.') as [string, string, string];
    // The state says the ticket is not required and the person already gave one: the MAC no longer fits.
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { p: { ticketRequired: boolean; given: object } };
    decoded.p.ticketRequired = false;
    decoded.p.given = { ticket: 'CHG-FORGED' };
    const altered = `${version}.${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${mac}`;
    const otherUser = await stack.mcpToken({ tenant: 'globex', subject: 'wire-forged-other' });

    const answers = [
      await observations(token, ARGS, { inputResponses: answer({ ticket_number: 'CHG1' }), requestState: 'v1.eyJwIjp7fX0.AAAA' }),
      await observations(token, ARGS, { inputResponses: answer({}), requestState: altered }),
      await observations(otherUser, ARGS, { inputResponses: answer({ ticket_number: 'CHG1' }), requestState: state }),
    ];

    for (const refused of answers) {
      expect(refused.status).toBe(200);
      expect(refused.body.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState.' });
      expect(refused.body.result).toBeUndefined();
    }
    expect(await auditOf('globex', 'wire-forged')).toEqual([]);
    expect(await auditOf('globex', 'wire-forged-other')).toEqual([]);
  });

  it('takes a retry with other arguments as a new call: the answers are not carried over, and it asks what the new arguments need', async () => {
    const token = await stack.mcpToken({ tenant: 'globex', subject: 'wire-other-args' });
    const first = await observations(token, ARGS);

    const otherEndpoint = await observations(
      token,
      { agent_id: 'gx-003', reason: 'disk alert' },
      { inputResponses: answer({ ticket_number: 'CHG0042' }), requestState: first.body.result?.requestState },
    );
    const withTicket = await observations(
      token,
      { ...ARGS, ticket: { number: 'CHG9', system: 'servicenow' } },
      { inputResponses: answer({ ticket_number: 'CHG0042' }), requestState: first.body.result?.requestState },
    );

    expect(otherEndpoint.body.result).toMatchObject({ resultType: 'input_required' });
    expect(otherEndpoint.body.result?.inputRequests?.attribution?.params.message).toMatch(
      /^To read endpoint `gx-003` for the reason `disk alert`, this tenant's policy requires a ticket/,
    );
    expect(withTicket.body.result).toMatchObject({ resultType: 'complete', structuredContent: { endpoint: { id: 'gx-002' } } });
    expect(await auditOf('globex', 'wire-other-args')).toEqual([
      expect.objectContaining({ agent_id: 'gx-002', ticket_number: 'CHG9', ticket_source: 'argument', outcome: 'allowed' }),
    ]);
  });
});
