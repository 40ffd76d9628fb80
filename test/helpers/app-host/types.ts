import type { AppBridge } from '@modelcontextprotocol/ext-apps/app-bridge';

/** What the test host (page.ts) is told to draw, and what it offers a test: shared by the page and the test side. */

export type ToolResult = Parameters<AppBridge['sendToolResult']>[0];

export interface Mount {
  /** The view's HTML; the one the host was given (TestHost.view) when absent. */
  html?: string;
  width: number;
  /** The most height the host gives the frame (containerDimensions.maxHeight); none when absent. */
  maxHeight?: number;
  theme: 'light' | 'dark';
  input?: Record<string, unknown>;
  /** The tool result; none leaves the view on the tool input until `sendResult`. */
  result?: ToolResult;
}

export interface TestHost {
  /** The view's HTML, handed to the page once: each frame drawn from it without sending it again. */
  view: string;
  mount(mount: Mount): Promise<void>;
  sendResult(result: ToolResult): Promise<void>;
  setTheme(theme: 'light' | 'dark'): Promise<void>;
  /** The heights the view reported (ui/notifications/size-changed), oldest first. */
  sizes: number[];
}

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** The measures of probes.ts, as the test side calls them. */
export interface Probes {
  layoutProblems(): string[];
  drawnText(selector: string): string;
  lineCounts(selector: string): Array<{ text: string; lines: number }>;
  timeLabels(): { chart: Box | null; labels: Array<Box & { text: string }> };
  inView(selector: string): { found: boolean; inViewport: boolean; onTop: boolean };
  columnInDrawnOrder(column: string): string[];
  texts(selector: string): string[];
  styles(selector: string, property: string): string[];
  attributes(selector: string, name: string): Array<string | null>;
  box(selector: string): (Box & { width: number; height: number }) | null;
  scrollTo(selector: string, where: 'start' | 'end'): boolean;
  chartAlternative(): { role: string | null; label: string | null; description: string | undefined };
  focusedColumn(): string | null;
  scrollers(): string[];
  cutWithoutTitle(): string[];
  pastTheEdge(selector: string): string[];
}
