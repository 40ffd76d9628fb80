import { mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Frame, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/build.js';
import { demoFleet } from '../../local/demo.js';
import type { Fleet, FleetAgent } from '../../local/fleet.js';
import { previewUrl } from '../../local/mcp-app-preview.js';
import { launchChromium } from '../helpers/browser.js';
import { type SharedStack, sharedStack } from '../helpers/shared-stack.js';

/**
 * The observations tool's MCP App as a person sees it, in headless Chromium: the local preview
 * host (local/mcp-app-preview.ts) signs in with the local issuer, lists the tools and reads
 * the view through the real MCP door with the SDK client in the page, draws it in a sandboxed
 * frame with ext-apps' AppBridge and hands it real `observations` results from the demo fleet and
 * a few endpoints made for the rules below. One stack, one browser, one page for the file.
 *
 * It writes the screenshots docs/mcp.md shows: into docs/images/ with UPDATE_SCREENSHOTS=1
 * (`npm run screenshots`), else into the run's scratch folder.
 */

const HOSTILE_HOSTNAME = `<img src=x onerror="document.title='pwned';parent.postMessage('pwned','*')">`;
const HOSTILE_OS = '<script>parent.postMessage("pwned","*")</script>linux';
/** Oldest first, one sample every five minutes; null where the endpoint reported no value. */
const GAPPY = {
  cpu: [10, 20, null, 30, 40, null, null, 50, 60, 70, null, 80],
  memory: [null, null, null, null, null, 45, null, null, null, null, null, null],
  disk: [60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71],
};
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS ? join(ROOT, 'docs', 'images') : join(tmpdir(), 'mcp-app-screenshots');
const COLUMN_WIDTH = 720;

/** An endpoint of acme for these tests: connected, reporting `samples`. */
function agent(agentId: string, now: number, overrides: Partial<FleetAgent>): FleetAgent {
  return {
    agent_id: agentId,
    hostname: `${agentId}-host`,
    os: 'linux',
    arch: 'x86_64',
    version: '2.4.1',
    client_name: 'Contoso',
    last_heartbeat: new Date(now - 20_000).toISOString(),
    connection: { state: 'connected', connected_at: new Date(now - 3_600_000).toISOString() },
    ...overrides,
  };
}

/** The demo fleet, and in acme an endpoint with gaps, one whose text is hostile and one whose newest observation expired. */
function testFleet(now: number): Fleet {
  const minute = 60_000;
  const gappy = GAPPY.cpu.map((cpu, i) => ({
    observed_at: new Date(now - 30_000 - (GAPPY.cpu.length - 1 - i) * 5 * minute).toISOString(),
    cpu,
    memory: GAPPY.memory[i] ?? null,
    disk: GAPPY.disk[i] ?? null,
  }));
  const recent = [{ observed_at: new Date(now - minute).toISOString(), cpu: 12, memory: 40, disk: 50 }];
  const expired = [{ observed_at: new Date(now - 15 * minute).toISOString(), cpu: 12, memory: 40, disk: 50 }];
  // The demo's day of samples cut to its last two hours: the views read the default hour.
  const demo = demoFleet(new Date(now));
  const fleet: Fleet = {
    tenants: demo.tenants.map((t) => ({
      ...t,
      agents: t.agents?.map((a) =>
        a.samples ? { ...a, samples: a.samples.filter((x) => Date.parse(x.observed_at) >= now - 2 * 3_600_000) } : a,
      ),
    })),
  };
  const acme = fleet.tenants.find((t) => t.tenant_id === 'acme');
  acme?.agents?.push(
    agent('zz-gaps', now, { hostname: 'gap-host', samples: gappy }),
    agent('zz-hostile', now, { hostname: HOSTILE_HOSTNAME, os: HOSTILE_OS, client_name: '</dd><b>bold</b>', samples: recent }),
    agent('zz-expired', now, { hostname: 'expired-host', samples: expired }),
  );
  return fleet;
}

/** The browser's globals as the page functions below use them (this file is checked with Node's types, not the DOM's). */
interface PageWindow {
  document: {
    title: string;
    body: { dataset: Record<string, string | undefined> };
    documentElement: { dataset: Record<string, string | undefined>; scrollWidth: number; clientWidth: number };
    querySelector(selector: string): { getBoundingClientRect(): { width: number } } | null;
  };
  getComputedStyle(element: unknown): { color: string; backgroundColor: string };
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  previewHost: { show(args: object, tool?: string): Promise<void>; setTheme(theme: string): void; setWidth(width: number | null): void };
  pwned: boolean;
}

let fleet: Fleet;
let stack: SharedStack;
let browser: Browser;
let page: Page;
const requests: Request[] = [];
const refusals: string[] = [];
/** Each status's badge shape and colour, as the status tests saw them. */
const shapes = new Map<string, string>();
const colours = new Map<string, string>();

beforeAll(async () => {
  fleet = testFleet(Date.now());
  stack = await sharedStack(fleet);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: COLUMN_WIDTH + 40, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
  page = await context.newPage();
  page.on('request', (request) => requests.push(request));
  // A request the view's policy refused is one it tried: Chromium says so on the console.
  page.on('console', (message) => {
    if (/Refused to|Content Security Policy/i.test(message.text())) refusals.push(message.text());
  });
  await page.goto(`${previewUrl(stack.publicUrl, 'ac-001')}&width=${COLUMN_WIDTH}`);
  await page.evaluate(() => {
    const w = globalThis as unknown as PageWindow;
    w.pwned = false;
    w.addEventListener('message', (event) => {
      if (event.data === 'pwned') w.pwned = true;
    });
  });
  await viewShowing('main.dashboard');
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.release();
});

/** The frame the host drew the view in, once it shows `selector`. */
async function viewShowing(selector: string): Promise<Frame> {
  await page.waitForFunction(() => (globalThis as unknown as PageWindow).document.body.dataset.state !== 'loading');
  const frame = await (await page.waitForSelector('#column iframe')).contentFrame();
  if (!frame) throw new Error('the preview host drew no frame');
  await frame.waitForSelector(selector);
  return frame;
}

/** Has the host call list_endpoints with `args` and draw its result in a new frame. */
async function showList(args: object = {}): Promise<Frame> {
  await page.evaluate((a) => (globalThis as unknown as PageWindow).previewHost.show(a, 'list_endpoints'), args);
  return viewShowing('main.endpoint-list');
}

/** Has the host call the tool for `agentId` and draw its result in a new frame, as for a new tool call. */
async function show(agentId: string, selector = 'main.dashboard'): Promise<Frame> {
  await page.evaluate((id) => (globalThis as unknown as PageWindow).previewHost.show({ agent_id: id }), agentId);
  return viewShowing(selector);
}

async function setTheme(theme: 'light' | 'dark'): Promise<void> {
  await page.evaluate((t) => (globalThis as unknown as PageWindow).previewHost.setTheme(t), theme);
}

const text = (frame: Frame, selector: string): Promise<string> => frame.$eval(selector, (e) => e.textContent ?? '');

/** The page's theme as it says it and as it looks: its background's relative luminance (0 black, 1 white). Runs in the view's frame. */
function lookOfPage(): { theme: string | undefined; luminance: number } {
  const w = globalThis as unknown as PageWindow;
  const [r = 0, g = 0, b = 0] = (w.getComputedStyle(w.document.body).backgroundColor.match(/\d+/g) ?? []).map(Number);
  return { theme: w.document.documentElement.dataset.theme, luminance: (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255 };
}

/** How many points a path draws and in how many unbroken stretches (d3-shape: M starts one, L continues it). */
function vertices(d: string): { points: number; stretches: number } {
  return { points: (d.match(/[ML]/g) ?? []).length, stretches: (d.match(/M/g) ?? []).length };
}

function stretchesOf(values: readonly (number | null)[]): number {
  return values.filter((v, i) => v !== null && (i === 0 || values[i - 1] === null)).length;
}

describe('E2E: the observations view drawn by an MCP host (headless Chromium, the local preview host)', () => {
  describe('an endpoint whose samples have gaps', () => {
    let frame: Frame;
    beforeAll(async () => {
      frame = await show('zz-gaps');
    });

    it('draws the history as three series, one point per reported value and a gap at each null, never a 0', async () => {
      for (const key of ['cpu', 'memory', 'disk'] as const) {
        const d = await frame.$eval(`.series-${key} path.line`, (p) => p.getAttribute('d') ?? '');
        const values = GAPPY[key];

        expect(vertices(d), key).toEqual({ points: values.filter((v) => v !== null).length, stretches: stretchesOf(values) });
      }
      // A value alone between gaps (memory's one, cpu's newest) is drawn as a dot too, since a one-point stretch has no length.
      expect(await frame.$$eval('.series-memory .dot', (dots) => dots.length)).toBe(1);
      expect(await frame.$$eval('.series-cpu .dot', (dots) => dots.length)).toBe(1);
      expect(await text(frame, '.caption')).toBe('12 samples');
    });

    it('reads "unknown" where the newest sample has no value, never "0%"', async () => {
      expect(await text(frame, '.metric[data-metric=memory] .metric-value')).toBe('unknown');
      expect(await text(frame, '.metric[data-metric=memory] .badge-word')).toBe('Unknown');
      expect(await text(frame, '.metric[data-metric=cpu] .metric-value')).toBe('80%');
      expect(await frame.$$eval('.metric-value', (values) => values.map((v) => v.textContent))).not.toContain('0%');
    });
  });

  describe.each([
    ['ok', 'ac-001', 'OK'],
    ['warning', 'ac-002', 'Warning'],
    ['critical', 'ac-003', 'Critical'],
    ['unknown', 'ac-004', 'Unknown'],
    ['never-reported', 'ac-009', 'Unknown'],
  ])('the %s demo endpoint (%s)', (status, agentId, word) => {
    let frame: Frame;
    beforeAll(async () => {
      frame = await show(agentId);
    });

    it('tells the overall status by its word, its shape and its colour', async () => {
      const badge = await frame.$eval('.overall .badge', (b) => ({
        status: b.getAttribute('data-status'),
        word: b.querySelector('.badge-word')?.textContent,
        shape: b.querySelector('svg.shape .shape-outline')?.outerHTML ?? '',
        color: (globalThis as unknown as PageWindow).getComputedStyle(b).color,
      }));

      expect(badge).toMatchObject({ status: status === 'never-reported' ? 'unknown' : status, word });
      expect(badge.shape).not.toBe('');
      shapes.set(badge.status ?? '', badge.shape);
      colours.set(badge.status ?? '', badge.color);
    });

    it('follows the host to dark and back to light, and takes its screenshots in both', async () => {
      mkdirSync(SCREENSHOTS, { recursive: true });
      const seen: { theme: string | undefined; luminance: number }[] = [];
      for (const theme of ['light', 'dark', 'light'] as const) {
        await setTheme(theme);
        await frame.waitForFunction((t) => (globalThis as unknown as PageWindow).document.documentElement.dataset.theme === t, theme);
        seen.push(await frame.evaluate(lookOfPage));
        if (seen.length <= 2)
          await page.locator('#column iframe').screenshot({ path: join(SCREENSHOTS, `mcp-app-${status}-${theme}.png`) });
      }

      expect(seen.map((s) => s.theme)).toEqual(['light', 'dark', 'light']);
      expect(seen[0]?.luminance).toBeGreaterThan(0.9);
      expect(seen[1]?.luminance).toBeLessThan(0.15);
      expect(seen[2]?.luminance).toBe(seen[0]?.luminance);
      for (const theme of ['light', 'dark'])
        expect(statSync(join(SCREENSHOTS, `mcp-app-${status}-${theme}.png`)).size).toBeGreaterThan(10_000);
    });
  });

  it('gives each status a shape and a colour of its own', () => {
    expect(new Set(shapes.values()).size).toBe(4);
    expect(new Set(colours.values()).size).toBe(4);
  });

  it('says so when an endpoint never reported: no metrics, no chart', async () => {
    const frame = await show('ac-009');

    expect(await text(frame, '.notice-never')).toMatch(/^Never reported\. This endpoint has not sent a single observation/);
    expect(await frame.$$('.metric, svg.chart')).toEqual([]);
  });

  it('marks an observation past its expires_at as stale', async () => {
    const frame = await show('zz-expired');

    expect(await text(frame, '.notice-stale')).toMatch(
      /^Stale\. The newest observation expired \d+ min ago: these values may no longer be true\.$/,
    );
    expect(await frame.$eval('main.dashboard', (m) => m.getAttribute('data-stale'))).toBe('true');
  });

  it('shows what the endpoint reported as text: a hostile hostname reads literally and runs nothing', async () => {
    const frame = await show('zz-hostile');

    expect(await text(frame, '.hostname')).toBe(HOSTILE_HOSTNAME);
    expect(await text(frame, '.facts .os')).toBe(HOSTILE_OS);
    expect(await text(frame, '.facts .client')).toBe('</dd><b>bold</b>');
    expect(await frame.$$('img, script:not(:first-of-type), b')).toEqual([]);
    expect(await frame.title()).toBe('Endpoint health dashboard');
    expect(await page.evaluate(() => (globalThis as unknown as PageWindow).pwned)).toBe(false);
  });

  it('fits the narrowest chat column (320 px): nothing wider than the frame, dashboard or table', async () => {
    await page.evaluate(() => (globalThis as unknown as PageWindow).previewHost.setWidth(320));
    try {
      const frame = await show('ac-003');
      const { scrollWidth, clientWidth, chart } = await frame.evaluate(() => {
        const { document } = globalThis as unknown as PageWindow;
        return {
          scrollWidth: document.documentElement.scrollWidth,
          clientWidth: document.documentElement.clientWidth,
          chart: document.querySelector('svg.chart')?.getBoundingClientRect().width ?? 0,
        };
      });
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.locator('#column iframe').screenshot({ path: join(SCREENSHOTS, 'mcp-app-narrow-light.png') });

      const list = await showList({ limit: 5 });
      const table = await list.evaluate(() => {
        const { document } = globalThis as unknown as PageWindow;
        return { scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth };
      });

      expect(clientWidth).toBeLessThanOrEqual(320);
      expect(scrollWidth).toBe(clientWidth);
      expect(chart).toBeGreaterThan(200);
      expect(chart).toBeLessThanOrEqual(clientWidth);
      // The table scrolls sideways inside its box; the page does not.
      expect(table.scrollWidth).toBe(table.clientWidth);
    } finally {
      await page.evaluate((w) => (globalThis as unknown as PageWindow).previewHost.setWidth(w), COLUMN_WIDTH);
    }
  });

  describe('the endpoint list (list_endpoints)', () => {
    let frame: Frame;
    const acme = () => fleet.tenants.find((t) => t.tenant_id === 'acme')?.agents ?? [];
    const column = (key: string) => frame.$$eval(`tbody td[data-column=${key}]`, (cells) => cells.map((c) => c.textContent ?? ''));
    beforeAll(async () => {
      frame = await showList();
    });

    it('draws one row per endpoint, each connection state by its word and shape, a never-heard-from endpoint as "never"', async () => {
      const states = await frame.$$eval('tbody tr', (rows) => rows.map((r) => r.getAttribute('data-state')));
      const words = new Map<string, string>();
      for (const row of await frame.$$('tbody tr')) {
        words.set(
          (await row.getAttribute('data-state')) ?? '',
          await row.$eval('td[data-column=state] .badge', (b) => `${b.getAttribute('data-status')} ${b.textContent}`),
        );
      }

      expect(states).toHaveLength(acme().length);
      expect(Object.fromEntries(words)).toEqual({
        connected: 'ok Connected',
        stale: 'warning Stale',
        disconnected: 'warning Disconnected',
        never_connected: 'unknown Never connected',
      });
      expect(await frame.$eval('tr[data-agent=ac-009] td[data-column=heartbeat]', (c) => c.textContent)).toBe('never');
      expect(await text(frame, '.count')).toBe(`${acme().length} endpoints of ${acme().length} in the tenant that you may see.`);
    });

    it('sorts by a column, both ways, and filters by text, within the result it was handed', async () => {
      const hostnames = acme().map((a) => a.hostname);
      const byName = [...hostnames].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));

      await frame.click('button.sort[data-column=hostname]');
      const ascending = await column('hostname');
      await frame.click('button.sort[data-column=hostname]');
      const descending = await column('hostname');
      await frame.fill('input.filter', 'SRV-1');
      const filtered = await column('hostname');

      expect(ascending).toEqual(byName);
      expect(descending).toEqual([...byName].reverse());
      expect(await frame.$eval('th[data-column=hostname]', (th) => th.getAttribute('aria-sort'))).toBe('descending');
      expect(filtered).toEqual([...byName].reverse().filter((h) => h.toLowerCase().includes('srv-1')));
      expect(await text(frame, '.caption')).toBe(`${filtered.length} of ${acme().length} shown (filter: SRV-1)`);
    });

    it('shows a hostile hostname in its row as text', async () => {
      await frame.fill('input.filter', '');

      expect(await frame.$eval('tr[data-agent=zz-hostile] td[data-column=hostname]', (c) => c.textContent)).toBe(HOSTILE_HOSTNAME);
      expect(await frame.$$('img, b')).toEqual([]);
    });

    it('takes its screenshots, light and dark', async () => {
      frame = await showList({ limit: 12 });
      mkdirSync(SCREENSHOTS, { recursive: true });
      for (const theme of ['light', 'dark'] as const) {
        await setTheme(theme);
        await frame.waitForFunction((t) => (globalThis as unknown as PageWindow).document.documentElement.dataset.theme === t, theme);
        await page.locator('#column iframe').screenshot({ path: join(SCREENSHOTS, `mcp-app-endpoints-${theme}.png`) });
      }
      await setTheme('light');

      expect(await text(frame, '.count')).toBe(
        '12 endpoints: the first in inventory order; more match (how many is unknown: the read stopped there).',
      );
    });
  });

  it('sent no request from the view: every request of the page is the host page itself, and no request was refused', () => {
    const fromFrames = requests.filter((r) => r.frame() !== page.mainFrame()).map((r) => r.url());
    const destinations = new Set(requests.map((r) => new URL(r.url()).pathname));

    expect(fromFrames).toEqual([]);
    expect(refusals).toEqual([]);
    expect([...destinations].sort()).toEqual(['/api/mcp', '/preview/host.js', '/preview/observations']);
  });
});
