import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Browser, BrowserContextOptions, Frame, Page } from 'playwright-core';
import type { Mount, Probes, TestHost, ToolResult } from './app-host/types.js';

/**
 * The bare AppBridge host of app-host/page.ts in a page of its own: the test hands it the built
 * view, a width, an optional height cap, the tool input and a result, and gets the view's frame
 * back once it shows `selector`. No network at all: the page is set as content, its script inline,
 * so any request a test sees was made by the view.
 */
export interface AppHost {
  page: Page;
  /** Draws a new frame for one tool call; returns it once it shows `selector`. */
  mount(mount: Omit<Mount, 'html' | 'theme'> & { theme?: 'light' | 'dark' }, selector: string): Promise<Frame>;
  /** The heights the view reported for the current frame. */
  sizes(): Promise<number[]>;
  setTheme(theme: 'light' | 'dark'): Promise<void>;
  sendResult(result: ToolResult): Promise<void>;
}

const scripts = new Map<string, Promise<string>>();
/** One of app-host/'s browser modules bundled into a script, once per process. */
function browserScript(name: 'page' | 'probes'): Promise<string> {
  let script = scripts.get(name);
  if (!script) {
    script = build({
      entryPoints: [join(import.meta.dirname, 'app-host', `${name}.ts`)],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: ['chrome111'],
      write: false,
      logLevel: 'warning',
    }).then(({ outputFiles }) => outputFiles[0]?.text ?? '');
    scripts.set(name, script);
  }
  return script;
}

/**
 * Calls one of the probes (app-host/probes.ts) inside the view's frame, injecting them first. Run
 * through the browser's debugging protocol, as the test's own code: the view's policy, which admits
 * no other script, does not apply to it, and the view makes no request for it.
 */
export async function probe<K extends keyof Probes>(frame: Frame, name: K, ...args: Parameters<Probes[K]>): Promise<ReturnType<Probes[K]>> {
  if (!(await frame.evaluate(() => 'probes' in globalThis))) await frame.evaluate(await browserScript('probes'));
  return frame.evaluate(
    ([n, a]) => {
      const probes = (globalThis as unknown as { probes: Record<string, (...x: unknown[]) => unknown> }).probes;
      return probes[n as string]?.(...(a as unknown[]));
    },
    [name, args] as const,
  ) as Promise<ReturnType<Probes[K]>>;
}

/** One rule axe-core found broken, with the elements that break it. */
export interface AxeViolation {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

let axe: string | undefined;
/** axe-core's minified build (the same rules as its 1.4 MB axe.js, 0.65 MB to parse in each audited frame). */
function axeSource(): string {
  axe ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  return axe;
}

/** WCAG 2.0, 2.1 and 2.2, levels A and AA: the rules the view must pass (axe-core's tags). */
const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];

/** axe-core's audit of the view's frame against WCAG 2.0–2.2 A and AA; [] when it finds nothing. */
export async function axeAudit(frame: Frame): Promise<AxeViolation[]> {
  if (!(await frame.evaluate(() => 'axe' in globalThis))) await frame.evaluate(axeSource());
  return frame.evaluate(async (tags) => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeResult[] }> } }).axe;
    interface AxeResult {
      id: string;
      impact?: string | null;
      help: string;
      nodes: Array<{ target: unknown[] }>;
    }
    const { violations } = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: 'tag', values: tags },
      resultTypes: ['violations'],
    });
    return violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  }, WCAG_AA);
}

/** The view as `npm run build` writes it beside the MCP bundle (the run's build of the functions, test/helpers/local-build-setup.ts). */
export function builtView(functionBundlesDir: string): string {
  return readFileSync(join(functionBundlesDir, 'mcp', 'endpoint-view.html'), 'utf8');
}

export async function openAppHost(browser: Browser, html: string, options: BrowserContextOptions = {}): Promise<AppHost> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 1000 }, locale: 'en-US', timezoneId: 'UTC', ...options });
  const page = await context.newPage();
  const code = (await browserScript('page')).replace(/<\/script/gi, '<\\/script');
  await page.setContent(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test host</title>
<style>body { margin: 0; padding: 20px; background: #eef1f5; } :root[data-theme=dark] body { background: #010409; } #column { max-width: 100%; }</style>
</head><body><div id="column"></div><script>${code}</script></body></html>`,
  );
  let theme: 'light' | 'dark' = 'light';
  // Once per page: sent with every frame, the 490 KB view cost the browser 0.15 to 0.2 s of CPU each (measured).
  await page.evaluate((view) => {
    (globalThis as unknown as { testHost: TestHost }).testHost.view = view;
  }, html);
  return {
    page,
    async mount(mount, selector) {
      theme = mount.theme ?? theme;
      await page.evaluate((m) => (globalThis as unknown as { testHost: TestHost }).testHost.mount(m), { ...mount, theme });
      const frame = await (await page.waitForSelector('#column iframe')).contentFrame();
      if (!frame) throw new Error('the host drew no frame');
      await frame.waitForSelector(selector, { timeout: 5_000 });
      return frame;
    },
    sizes: () => page.evaluate(() => (globalThis as unknown as { testHost: TestHost }).testHost.sizes),
    async setTheme(next) {
      theme = next;
      await page.evaluate((t) => (globalThis as unknown as { testHost: TestHost }).testHost.setTheme(t), next);
    },
    sendResult: (result) => page.evaluate((r) => (globalThis as unknown as { testHost: TestHost }).testHost.sendResult(r), result),
  };
}
