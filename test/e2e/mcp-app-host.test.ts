import { mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Browser, Frame, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import type { AgentSummary, EndpointDashboard } from '../../lib/contract/schemas.js';
import { summarizeDashboard } from '../../lib/mcp/summary.js';
import { TOOL_SENTENCES } from '../../lib/mcp/tool-failure.js';
import { withMarks } from '../../lib/reported-characters.js';
import { agentSummary, dashboardAt, endpointList, series, statusDashboards, toolResult } from '../fixtures/view-results.js';
import { type AppHost, axeAudit, builtView, openAppHost, probe } from '../helpers/app-host.js';
import { launchChromium } from '../helpers/browser.js';

/**
 * The MCP App view as a person sees it in any host: drawn by a bare host written from ext-apps'
 * AppBridge alone (test/helpers/app-host/page.ts, not the project's preview host), in headless
 * Chromium, from the view `npm run build` ships, with tool results made by the service's own
 * evaluation (test/fixtures/view-results.ts). Each test asserts what is drawn (line boxes,
 * bounding boxes, characters in the order they stand on screen), measured by
 * test/helpers/app-host/probes.ts, and axe-core audits every state against WCAG 2.0–2.2 A and AA.
 *
 * It writes the screenshots docs/mcp.md shows of these cases: into docs/images/ with
 * UPDATE_SCREENSHOTS=1 (`npm run screenshots`), else into the run's scratch folder.
 */

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS ? join(ROOT, 'docs', 'images') : join(tmpdir(), 'mcp-app-screenshots');
const WIDTHS = [320, 552, 1000] as const;
/** Widths and themes every state is audited in. */
const AUDITED = [320, 1000] as const;
const isAudited = (width: number): boolean => (AUDITED as readonly number[]).includes(width);

/** Names that pose as other names when drawn raw: an override, an embedding, isolates, zero-width characters, a BOM. */
const HOSTILE = Object.freeze({
  hostname: '\u202Eevil\u202C.corp.example',
  agentId: 'agent-\u202Egpj.exe',
  os: 'lin\u200Bux \u2067admin\u2069',
  clientName: '\u202BContoso\u200D\uFEFF',
  version: '2.4.1\u202E-1',
});
/** The same, as they must be drawn: every hidden character a mark, nothing reordered. */
const DRAWN = Object.freeze({
  hostname: '⟨U+202E⟩evil⟨U+202C⟩.corp.example',
  agentId: 'agent-⟨U+202E⟩gpj.exe',
  os: 'lin⟨U+200B⟩ux ⟨U+2067⟩admin⟨U+2069⟩',
  clientName: '⟨U+202B⟩Contoso⟨U+200D⟩⟨U+FEFF⟩',
  version: '2.4.1⟨U+202E⟩-1',
});
const LONG_OS = 'Microsoft Windows Server 2022 Datacenter: Azure Edition';
/** The widths MCP Inspector 2.12's Apps tab draws the view at (its panel). */
const INSPECTOR = [512, 552] as const;
/** A hidden character is drawn as a mark 55 to 70 px wide: these make labels far wider than their characters say. */
const HIDDEN_CHARACTERS = ['\u200B', '\u202E', '\u2066', '\uFEFF', '\u0000', '\u00AD'];
/** Hostnames of visible and hidden characters in any mix: labels of runs of each, alone or together (a seeded sample, the same each run). */
const mixedHostname = fc
  .array(fc.array(fc.oneof(fc.constantFrom(...HIDDEN_CHARACTERS), fc.constantFrom(...'abcwxyz019-')), { minLength: 1, maxLength: 30 }), {
    minLength: 1,
    maxLength: 4,
  })
  .map((labels) => labels.map((l) => l.join('')).join('.'));
const MARKED_HOSTNAMES = [
  // 22 marks and a letter: a label under 24 characters, 1,643 px wide drawn unbroken.
  `${'\u200B'.repeat(22)}a`,
  // A run of overrides inside a word: it pushed the overall and CPU badges past the edge.
  `invoice${'\u202E'.repeat(6)}fdp.exe`,
  // Long runs of both, longer than the list shows (cut there, whole in the title).
  `${'\u200Bab'.repeat(30)}.${'\u202E'.repeat(40)}.corp.example`,
  ...fc.sample(mixedHostname, { numRuns: 3, seed: 44 }),
];
const LONG_HOSTNAME = `${'a'.repeat(60)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(47)}`;

let browser: Browser;
let host: AppHost;
let html: string;
let now: number;
const requests: Request[] = [];

beforeAll(async () => {
  html = builtView(inject('functionBundlesDir'));
  browser = await launchChromium();
  host = await openAppHost(browser, html);
  host.page.on('request', (request) => requests.push(request));
  now = Date.now();
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

const dashboard = (d: EndpointDashboard, width: number, extra: { maxHeight?: number; text?: string } = {}) =>
  host.mount({ width, maxHeight: extra.maxHeight, result: toolResult(d, extra.text) }, 'main.dashboard');
const list = (endpoints: AgentSummary[], width: number, maxHeight?: number) =>
  host.mount({ width, maxHeight, result: toolResult(endpointList(endpoints)) }, 'main.endpoint-list');
const screenshot = (name: string) => host.page.locator('#column iframe').screenshot({ path: join(SCREENSHOTS, `${name}.png`) });

/** Twelve ordinary endpoints with a hostile one, a long OS and version, and a 300-character hostname among them. */
function mixedFleet(): AgentSummary[] {
  return Array.from({ length: 12 }, (_, i) =>
    agentSummary(
      now,
      i,
      i === 3
        ? { os: LONG_OS, version: '4.2.1-rc.3+build.20261127' }
        : i === 5
          ? { hostname: LONG_HOSTNAME }
          : i === 6
            ? { hostname: HOSTILE.hostname, agent_id: HOSTILE.agentId, os: HOSTILE.os, version: HOSTILE.version }
            : {},
    ),
  );
}

/** axe-core in the frame in light, then in dark; each audit's violations, by theme. */
async function auditBothThemes(frame: Frame): Promise<Record<string, unknown>> {
  const found: Record<string, unknown> = {};
  for (const theme of ['light', 'dark'] as const) {
    await host.setTheme(theme);
    await expect.poll(() => probe(frame, 'attributes', 'html', 'data-theme')).toEqual([theme]);
    found[theme] = await axeAudit(frame);
  }
  await host.setTheme('light');
  return found;
}

/** Hands the frame another result and waits until its heading shows `hostname`, marked. */
async function redraw(frame: Frame, d: EndpointDashboard): Promise<void> {
  await host.sendResult(toolResult(d));
  await frame.waitForFunction(
    (text) => (globalThis as unknown as DocumentWindow).document.querySelector('h1.hostname')?.textContent === text,
    withMarks(d.endpoint.hostname),
  );
}
interface DocumentWindow {
  document: { querySelector(selector: string): { textContent: string | null } | null };
}

describe('E2E: the MCP App view in a host built on AppBridge alone (headless Chromium)', () => {
  describe('reported text cannot pose as other text', () => {
    it('draws every reported value of the dashboard in its own isolate, each hidden character a mark, nothing reordered', async () => {
      const frame = await dashboard(
        dashboardAt(now, {
          endpoint: { hostname: HOSTILE.hostname, id: HOSTILE.agentId, os: HOSTILE.os, client_name: HOSTILE.clientName },
          samples: series(60, 5, (i) => [30 + ((i * 7) % 20), 55 + (i % 3), 61]),
        }),
        552,
      );

      expect(await probe(frame, 'drawnText', 'h1.hostname')).toBe(DRAWN.hostname);
      expect(await probe(frame, 'drawnText', '.facts .agent-id')).toBe(DRAWN.agentId);
      expect(await probe(frame, 'drawnText', '.facts .os')).toBe(DRAWN.os);
      expect(await probe(frame, 'drawnText', '.facts .client')).toBe(DRAWN.clientName);
      expect(await probe(frame, 'styles', '.reported', 'unicode-bidi')).toEqual(Array(4).fill('isolate'));
      // No hidden character is left in what the page draws.
      expect((await probe(frame, 'texts', 'body'))[0]).not.toMatch(/[\p{Cf}\p{Co}]|(?![\n\t])\p{Cc}/u);
      await screenshot('mcp-app-bidi-light');
      expect(statSync(join(SCREENSHOTS, 'mcp-app-bidi-light.png')).size).toBeGreaterThan(10_000);
    });

    it('quotes the tool input (agent_id, hostname) in its own sentences without letting an unclosed override reorder them', async () => {
      const frame = await host.mount({ width: 552, input: { agent_id: HOSTILE.agentId, reason: 'disk check' } }, 'main.message-waiting');

      expect(await probe(frame, 'drawnText', '.message-text')).toBe(`Reading the dashboard of ${DRAWN.agentId}…`);
      const listing = await host.mount({ width: 552, input: { hostname: '\u202Eevil' } }, 'main.message-waiting');
      expect(await probe(listing, 'drawnText', '.message-text')).toBe('Reading the endpoints whose hostname contains ⟨U+202E⟩evil…');
    });

    it('draws the hostile row of the table the same way, in the table and in the cards', async () => {
      for (const width of [1000, 320]) {
        const frame = await list(mixedFleet(), width);
        const cell = (column: string) => `tr[data-agent="${HOSTILE.agentId}"] td[data-column="${column}"] .reported`;

        // A narrow cell may wrap a value: each line is still in order.
        const drawn = async (column: string) => (await probe(frame, 'drawnText', cell(column))).replace(/\n/g, '');
        expect(await drawn('hostname')).toBe(DRAWN.hostname);
        expect(await drawn('agent')).toBe(DRAWN.agentId);
        expect(await drawn('version')).toBe(DRAWN.version);
        expect((await probe(frame, 'texts', 'body'))[0]).not.toMatch(/[\p{Cf}]/u);
      }
    });

    it("echoes the filter's text isolated and marked: typing abc⟨U+202E⟩def does not turn the closing bracket around", async () => {
      const frame = await list(mixedFleet(), 1000);

      await frame.fill('input.filter', 'abc\u202Edef');

      expect(await probe(frame, 'drawnText', '.caption')).toBe('0 of 12 shown (filter: abc⟨U+202E⟩def)');
    });
  });

  describe('readable at every width from 320 to 1000 px', () => {
    const statuses = Object.keys(statusDashboards(0)) as Array<keyof ReturnType<typeof statusDashboards>>;
    const cases = WIDTHS.flatMap((width) => statuses.map((status) => [status, width] as const));

    it.each(cases)(
      'draws the %s dashboard at %i px with no element or line of text past its box (and, at 320 and 1000 px, passes axe-core in light and dark)',
      async (status, width) => {
        const frame = await dashboard(statusDashboards(now)[status], width);

        expect(await probe(frame, 'layoutProblems')).toEqual([]);
        if (isAudited(width)) expect(await auditBothThemes(frame)).toEqual({ light: [], dark: [] });
      },
    );

    it.each(WIDTHS)(
      'draws the table at %i px inside its box, a long OS, a long version and a 300-character hostname included (and, at 320 and 1000 px, passes axe-core in light and dark)',
      async (width) => {
        const frame = await list(mixedFleet(), width);
        const long = `tr[data-agent="ac-005"] td[data-column="hostname"] .reported`;

        expect(await probe(frame, 'layoutProblems')).toEqual([]);
        // The 300-character hostname: its first 100 characters and an ellipsis drawn, the whole of it in the tooltip.
        expect((await probe(frame, 'drawnText', long)).replace(/\n/g, '')).toBe(`${LONG_HOSTNAME.slice(0, 100)}…`);
        expect(await probe(frame, 'attributes', long, 'title')).toEqual([LONG_HOSTNAME]);
        if (isAudited(width)) expect(await auditBothThemes(frame)).toEqual({ light: [], dark: [] });
      },
    );

    it('keeps Hostname and Agent in view at 1000 px beside a long OS, each ordinary hostname on one line', async () => {
      const frame = await list(mixedFleet(), 1000);
      const tableBox = await probe(frame, 'box', '.table-box');
      const table = await probe(frame, 'box', 'table.endpoints');
      const hostname = await probe(frame, 'box', 'th[data-column="hostname"]');
      const agent = await probe(frame, 'box', 'th[data-column="agent"]');
      const hostnames = await probe(frame, 'lineCounts', 'tr:not([data-agent="ac-005"]) td[data-column="hostname"] .reported');

      expect(table!.right).toBeLessThanOrEqual(tableBox!.right);
      expect(agent!.right).toBeLessThanOrEqual(tableBox!.right);
      expect(hostname!.width).toBeGreaterThanOrEqual(240);
      expect(hostnames.length).toBe(11);
      expect(hostnames.filter((h) => h.lines !== 1)).toEqual([]);
      expect(await probe(frame, 'texts', 'tr[data-agent="ac-003"] td[data-column="os"]')).toEqual([`${LONG_OS}/x86_64`]);
      await screenshot('mcp-app-endpoints-wide-light');
    });

    it('draws a list of 200 at 320 px as cards that fit, no hostname broken inside a label', async () => {
      const endpoints = Array.from({ length: 200 }, (_, i) => agentSummary(now, i));
      const frame = await list(endpoints, 320);
      const labels = await probe(frame, 'lineCounts', 'td[data-column="hostname"] .label');

      expect(await probe(frame, 'layoutProblems')).toEqual([]);
      expect(await frame.$$eval('tbody tr', (rows) => rows.length)).toBe(200);
      expect(labels.length).toBe(600);
      expect(labels.filter((l) => l.lines !== 1)).toEqual([]);
      // A card per endpoint: the hostname on a line of its own, the whole width of the card.
      expect((await probe(frame, 'styles', 'tbody tr', 'display'))[0]).toBe('flex');
    });

    it('breaks a hostname between its labels, a label of 24 characters or more inside itself rather than overflow', async () => {
      const hostname = `${'x'.repeat(23)}.${'y'.repeat(23)}.${'z'.repeat(40)}`;
      const frame = await dashboard(dashboardAt(now, { endpoint: { hostname } }), 320);
      const labels = await probe(frame, 'lineCounts', 'h1.hostname .label');

      expect(labels).toEqual([
        { text: 'x'.repeat(23), lines: 1 },
        { text: 'y'.repeat(23), lines: 1 },
      ]);
      const lines = (await probe(frame, 'drawnText', 'h1.hostname')).split('\n');
      expect(lines.slice(0, 2)).toEqual([`${'x'.repeat(23)}.`, `${'y'.repeat(23)}.`]);
      expect(lines.slice(2).join('')).toBe('z'.repeat(40));
      expect(await probe(frame, 'layoutProblems')).toEqual([]);
    });

    it.each([320, 1000])(
      'draws a 300-character hostname whole in the dashboard heading at %i px, wrapped inside the page',
      async (width) => {
        const frame = await dashboard(dashboardAt(now, { endpoint: { hostname: LONG_HOSTNAME } }), width);

        expect(await probe(frame, 'layoutProblems')).toEqual([]);
        expect((await probe(frame, 'drawnText', 'h1.hostname')).replace(/\n/g, '')).toBe(LONG_HOSTNAME);
      },
    );

    it.each([552, 1000])(
      'stays within a height cap of 600 px at %i px: reports at most 600 and scrolls the table under its filter and headers',
      async (width) => {
        const endpoints = Array.from({ length: 200 }, (_, i) => agentSummary(now, i));
        const frame = await list(endpoints, width, 600);
        expect(await probe(frame, 'scrollTo', '.table-box', 'end')).toBe(true);
        const sizes = await host.sizes();
        const frameHeight = (await host.page.locator('#column iframe').boundingBox())?.height;

        expect(sizes.length).toBeGreaterThan(0);
        expect(Math.max(...sizes)).toBeLessThanOrEqual(600);
        expect(frameHeight).toBeLessThanOrEqual(600);
        expect(await probe(frame, 'inView', 'input.filter')).toEqual({ found: true, inViewport: true, onTop: true });
        expect(await probe(frame, 'inView', 'th[data-column="hostname"] button')).toEqual({ found: true, inViewport: true, onTop: true });
        expect(await probe(frame, 'inView', 'tbody tr:last-child')).toEqual({ found: true, inViewport: true, onTop: true });
        if (width === 552) {
          await probe(frame, 'scrollTo', '.table-box', 'start');
          await screenshot('mcp-app-endpoints-narrow-light');
        }
      },
    );

    it('stays within a height cap of 600 px with a dashboard taller than that, scrolling inside', async () => {
      const frame = await dashboard(statusDashboards(now).critical, 320, { maxHeight: 600 });
      expect(Math.max(...(await host.sizes()))).toBeLessThanOrEqual(600);
      expect((await probe(frame, 'box', '#root'))?.height).toBe(600);
      expect(await probe(frame, 'scrollTo', '#root', 'end')).toBe(true);
      expect(await probe(frame, 'layoutProblems')).toEqual([]);
    });
  });

  describe("in a real host's panel (MCP Inspector's 512 and 552 px) and from 320 to 1000 px", () => {
    // Each test draws one frame and hands it its other results, as a host does with a tool called again.
    it.each([320, ...INSPECTOR, 1000])(
      'keeps the status badges inside the view at %i px whatever mix of visible and hidden characters a hostname holds (its marks wrap, nothing passes the edge), and lists them each whole or cut with its whole in the title',
      async (width) => {
        const critical = (hostname: string) => dashboardAt(now, { endpoint: { hostname }, samples: series(60, 5, () => [97, 91, 70]) });
        const frame = await dashboard(critical('web-000.corp.example'), width);

        for (const hostname of MARKED_HOSTNAMES) {
          await redraw(frame, critical(hostname));

          expect(await probe(frame, 'layoutProblems'), hostname).toEqual([]);
          expect(await probe(frame, 'pastTheEdge', '.badge'), hostname).toEqual([]);
          expect(await probe(frame, 'attributes', '.overall .badge, .metric[data-metric="cpu"] .badge', 'data-status')).toEqual([
            'critical',
            'critical',
          ]);
          // Whole, every mark drawn, and nothing cut off sideways.
          expect((await probe(frame, 'drawnText', 'h1.hostname')).replace(/\n/g, ''), hostname).toBe(withMarks(hostname));
          expect(await probe(frame, 'cutWithoutTitle'), hostname).toEqual([]);
          if (width === 512 && hostname === MARKED_HOSTNAMES[1]) await screenshot('mcp-app-marks-inspector-light');
        }

        await host.sendResult(toolResult(endpointList(MARKED_HOSTNAMES.map((hostname, i) => agentSummary(now, i, { hostname })))));
        await frame.waitForSelector('main.endpoint-list');

        expect(await probe(frame, 'layoutProblems')).toEqual([]);
        expect(await probe(frame, 'pastTheEdge', '.badge')).toEqual([]);
        expect(await probe(frame, 'cutWithoutTitle')).toEqual([]);
        for (const [i, hostname] of MARKED_HOSTNAMES.entries()) {
          const cell = `tr[data-agent="${agentSummary(now, i).agent_id}"] td[data-column="hostname"] > .reported`;
          const [title] = await probe(frame, 'attributes', cell, 'title');
          const drawn = (await probe(frame, 'drawnText', cell)).replace(/\n/g, '');
          if (title === null) expect(drawn, hostname).toBe(withMarks(hostname));
          else expect([title, drawn.endsWith('…')], hostname).toEqual([withMarks(hostname), true]);
        }
      },
    );

    it.each(INSPECTOR)(
      'scrolls one box under a height cap of 600 px at %i px, the dashboard with its findings or the table, and leaves no blank band after the wheel',
      async (width) => {
        const frame = await dashboard(statusDashboards(now).critical, width, { maxHeight: 600 });
        const iframe = await host.page.locator('#column iframe').boundingBox();

        expect(await probe(frame, 'scrollers')).toEqual(['div#root']);
        await host.page.mouse.move(iframe!.x + iframe!.width / 2, iframe!.y + 300);
        for (let i = 0; i < 8; i += 1) await host.page.mouse.wheel(0, 400);
        await expect.poll(() => probe(frame, 'inView', '.foot summary')).toEqual({ found: true, inViewport: true, onTop: true });
        // The page itself never moved: the dashboard still fills the frame from its top to its bottom.
        expect(await probe(frame, 'box', '#root')).toMatchObject({ top: 0, bottom: 600 });

        await host.sendResult(toolResult(endpointList(Array.from({ length: 60 }, (_, i) => agentSummary(now, i)))));
        await frame.waitForSelector('main.endpoint-list');
        expect(await probe(frame, 'scrollers')).toEqual(['div.table-box']);
      },
    );

    it('writes the times in metric and finding details as the footer writes its time, never as ISO timestamps', async () => {
      const iso = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
      const { stale, unknown } = statusDashboards(now);
      const frame = await dashboard(stale, 552);
      const staleDetails = await probe(frame, 'texts', '.finding-detail, .metric-detail');
      const evaluated = (await probe(frame, 'texts', `.foot time[datetime="${stale.evaluated_at}"]`))[0]!;
      await redraw(frame, unknown);
      const memory = (await probe(frame, 'texts', '.metric[data-metric="memory"] .metric-detail'))[0]!;

      expect(staleDetails.filter((t) => iso.test(t))).toEqual([]);
      expect(staleDetails.join('\n')).toContain(`before this evaluation at ${evaluated};`);
      expect(evaluated).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M$/);
      expect(memory).toMatch(
        /^Memory usage was not reported in the newest sample \(observed at [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M\)/,
      );
    });

    it('says a failed read as a person can act on it, without markdown: a ticket the tenant requires (what the person does, not how a model calls again), an agent that is not visible (its id drawn as a reported value)', async () => {
      const failure = (text: string) => ({ content: [{ type: 'text' as const, text }], isError: true });
      const frame = await host.mount(
        {
          width: 512,
          input: { agent_id: HOSTILE.agentId, reason: 'check' },
          result: failure(`${TOOL_SENTENCES.ticketRequired('ServiceNow')} (request id: 3f2a)`),
        },
        'main.message-error',
      );
      const ticket = await probe(frame, 'drawnText', '.message-text');
      await host.sendResult(failure(TOOL_SENTENCES.notFound(HOSTILE.agentId)));
      await frame.waitForSelector('main.message-error .message-text bdi');
      const notFound = await probe(frame, 'drawnText', '.message-text');

      expect(ticket.replace(/\n/g, ' ')).toBe(
        'Nothing was read: this tenant requires a ticket for every read. Give the number of your ServiceNow ticket (such as INC0012345) and read again. (request id: 3f2a)',
      );
      expect(notFound.replace(/\n/g, ' ')).toBe(
        `No endpoint with agent_id ${DRAWN.agentId} is visible to you; list_endpoints shows the endpoints you can read.`,
      );
    });

    it('shows the text of a result it cannot read without markdown or ISO timestamps: values drawn as values, times as times', async () => {
      const d = dashboardAt(now, { endpoint: { hostname: HOSTILE.hostname, id: 'ac-101' } });
      const frame = await host.mount(
        { width: 512, result: toolResult({ ...d, evaluated_at: 'yesterday' }, summarizeDashboard(d)) },
        'main.message-error',
      );
      const text = (await probe(frame, 'texts', '.tool-text'))[0]!;

      expect(text).not.toMatch(/`|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
      expect(text).toMatch(
        new RegExp(
          `^Endpoint ac-101 \\(hostname ${DRAWN.hostname.replace(/[.+]/g, '\\$&')}, OS linux, client Contoso\\): overall status ok, evaluated at [A-Z]`,
        ),
      );
    });

    it('never breaks an OS value inside a word in the table at 860 and 900 px (860 px is its narrowest)', async () => {
      const oses = [
        LONG_OS,
        'Ubuntu 24.04.1 LTS (Noble Numbat)',
        'Red Hat Enterprise Linux 9.4 (Plow)',
        'macOS Sequoia 15.1.1',
        'Windows 11 Enterprise 23H2',
      ];
      const endpoints = oses.map((os, i) => agentSummary(now, i, { os }));

      for (const width of [860, 900]) {
        const frame = await list(endpoints, width);
        for (const a of endpoints) {
          const lines = (await probe(frame, 'drawnText', `tr[data-agent="${a.agent_id}"] td[data-column="os"]`)).split('\n');
          // Each word of the OS and the architecture stands whole on one line.
          const broken = `${a.os}/ ${a.arch}`.split(' ').filter((word) => !lines.some((line) => line.includes(word)));
          expect(broken, `${a.os} at ${width} px, drawn as ${JSON.stringify(lines)}`).toEqual([]);
        }
      }
    });
  });

  describe('the smaller wrongs', () => {
    it('sorts versions by their numeric parts, a pre-release before its release, both ways', async () => {
      const versions = ['4.0.10', '4.2.1', '4.0.2', '4.0.16', '4.2.1-rc.3+build', '4.0.4', '4.0.3', '4.0.9', '4.0.15', '4.2.1-rc.10'];
      const frame = await list(
        versions.map((version, i) => agentSummary(now, i, { version })),
        1000,
      );

      await frame.click('button.sort[data-column="version"]');
      const ascending = await probe(frame, 'columnInDrawnOrder', 'version');
      await frame.click('button.sort[data-column="version"]');
      const descending = await probe(frame, 'columnInDrawnOrder', 'version');

      const expected = ['4.0.2', '4.0.3', '4.0.4', '4.0.9', '4.0.10', '4.0.15', '4.0.16', '4.2.1-rc.3+build', '4.2.1-rc.10', '4.2.1'];
      expect(ascending).toEqual(expected);
      expect(descending).toEqual([...expected].reverse());
    });

    it.each([5, 60, 360, 1440, 10080])(
      'labels the time axis of a %i-minute window at 320 px with labels that neither overlap nor run past the chart',
      async (minutes) => {
        const frame = await dashboard(dashboardAt(now, { minutes, samples: series(minutes, minutes / 24, (i) => [20 + i, 50, 60]) }), 320);
        const { chart, labels } = await probe(frame, 'timeLabels');

        expect(chart).not.toBeNull();
        expect(labels.length).toBeGreaterThanOrEqual(2);
        for (const label of labels) {
          expect(label.text).toMatch(/^(\d{1,2}:\d{2}\s[AP]M|[A-Z][a-z]{2} \d{1,2})$/);
          expect(label.left).toBeGreaterThanOrEqual(chart!.left);
          expect(label.right).toBeLessThanOrEqual(chart!.right);
        }
        for (let i = 1; i < labels.length; i += 1) expect(labels[i]!.left - labels[i - 1]!.right).toBeGreaterThanOrEqual(4);
      },
    );

    it('says "never" only for an endpoint that never reported, not for one with nothing in the window', async () => {
      const quiet = await dashboard(dashboardAt(now, { samples: [], earlier: [180, 40, 50, 60] }), 552);
      const quietFooter = await probe(quiet, 'drawnText', '.foot p');
      const never = await dashboard(statusDashboards(now)['never-reported'], 552);
      const neverFooter = await probe(never, 'drawnText', '.foot p');

      expect(quietFooter).toMatch(/^Nothing observed in the last 60 minutes · evaluated /);
      expect(quietFooter).not.toMatch(/never/);
      expect(neverFooter).toMatch(/^Observed never · evaluated /);
    });

    it.each([
      ['a time that is no time', (d: EndpointDashboard) => ({ ...d, evaluated_at: 'yesterday' })],
      ['a dashboard with its fields missing', (d: EndpointDashboard) => ({ schema: d.schema, endpoint: d.endpoint })],
      ['a percent past 100', (d: EndpointDashboard) => ({ ...d, history: d.history?.map((s) => ({ ...s, cpu: 1e9 })) })],
    ])('shows one sentence and the text the tool gave within a second for a result it cannot read: %s', async (_what, spoil) => {
      const result = toolResult(spoil(statusDashboards(now).ok), 'Endpoint web-000.corp.example: OK.');
      const frame = await host.mount({ width: 552, input: { agent_id: 'ac-101', reason: 'check' } }, 'main.message-waiting');

      await host.sendResult(result);
      await frame.waitForSelector('main.message-error', { timeout: 1_000 });

      expect((await probe(frame, 'drawnText', 'main.message-error')).replace(/\n/g, ' ')).toBe(
        'Cannot show this result This result holds no dashboard and no endpoint list the view can read; the text the tool gave follows. Endpoint web-000.corp.example: OK.',
      );
    });

    it('names a series without a single value in the window "no data" in the legend, and draws no line for it', async () => {
      const frame = await dashboard(statusDashboards(now).unknown, 552);

      expect(await probe(frame, 'texts', '.legend li[data-metric="memory"]')).toEqual(['Memory: no data']);
      expect(await probe(frame, 'attributes', '.series-memory path.line', 'd')).toEqual(['']);
    });
  });

  describe('accessible', () => {
    it('gives the chart a text alternative: each series with its range, its newest value and its gaps', async () => {
      const gappy = [10, 20, null, 30, 40, null, null, 50, 60, 70, null, 80];
      const frame = await dashboard(
        dashboardAt(now, { samples: gappy.map((cpu, i) => [57.5 - i * 5, cpu, null, 60 + i] as [number, number | null, null, number]) }),
        552,
      );
      expect(await probe(frame, 'chartAlternative')).toEqual({
        role: 'img',
        label: 'CPU, memory and disk usage in percent over the window; a break in a line is a sample without a value.',
        description: 'CPU: 10% to 80%, newest 80%, 3 gaps\nMemory: no data\nDisk: 60% to 71%, newest 71%, no gaps',
      });
    });

    it("names each status for a screen reader: the overall one, each metric's and each finding's", async () => {
      const frame = await dashboard(statusDashboards(now).warning, 1000);

      expect(await frame.locator('.overall').ariaSnapshot()).toContain('Overall status: Warning');
      expect(await frame.locator('.metric[data-metric="disk"]').ariaSnapshot()).toContain('Disk usage status: Warning');
      expect(await frame.locator('.finding').first().ariaSnapshot()).toContain('Finding status: Warning');
    });

    it('sorts the table by keyboard, telling the sorted column with aria-sort', async () => {
      const frame = await list(mixedFleet(), 1000);

      await frame.focus('input.filter');
      await host.page.keyboard.press('Tab');
      const focused = await probe(frame, 'focusedColumn');
      await host.page.keyboard.press('Enter');
      const byHostname = await probe(frame, 'attributes', 'th', 'aria-sort');
      await host.page.keyboard.press('Tab');
      await host.page.keyboard.press('Space');
      await host.page.keyboard.press('Space');
      const byState = await probe(frame, 'attributes', 'th', 'aria-sort');
      const states = await probe(frame, 'columnInDrawnOrder', 'state');

      expect(focused).toBe('hostname');
      expect(byHostname).toEqual(['ascending', null, null, null, null, null]);
      expect(byState).toEqual([null, 'descending', null, null, null, null]);
      expect(states.slice(0, 2)).toEqual(['Never connected', 'Never connected']);
    });

    it('audits the other states too: waiting, a failed read, an empty list', async () => {
      const waiting = await host.mount({ width: 320, input: { agent_id: HOSTILE.agentId } }, 'main.message-waiting');
      expect(await axeAudit(waiting)).toEqual([]);
      const failed = await host.mount(
        {
          width: 320,
          result: { content: [{ type: 'text', text: 'The observations service is unavailable; try again in 5 s.' }], isError: true },
        },
        'main.message-error',
      );
      expect(await axeAudit(failed)).toEqual([]);
      const empty = await list([], 320);
      expect(await axeAudit(empty)).toEqual([]);
    });

    it('moves nothing for a reader who asked for reduced motion', async () => {
      const reduced = await openAppHost(browser, html, { reducedMotion: 'reduce' });
      reduced.page.on('request', (request) => requests.push(request));
      const durations = async (h: AppHost) => {
        const frame = await h.mount({ width: 1000, theme: 'light', result: toolResult(endpointList(mixedFleet())) }, 'main.endpoint-list');
        return probe(frame, 'styles', 'tbody tr:first-child, button.sort', 'transition-duration');
      };
      try {
        expect(new Set(await durations(host))).toEqual(new Set(['0.2s']));
        expect(new Set(await durations(reduced))).toEqual(new Set(['0s']));
      } finally {
        await reduced.page.context().close();
      }
    });
  });

  it('sent no request from the view: not one request in the whole page, nor in the reduced-motion host (after every test above)', () => {
    expect(requests.map((r) => r.url())).toEqual([]);
  });
});
