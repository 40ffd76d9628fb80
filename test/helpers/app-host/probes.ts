/**
 * What the browser tests measure inside the view's frame: what is drawn, not only what the DOM
 * holds. Injected into the frame as a script (test/helpers/app-host.ts) and called through
 * `window.probes`. Read-only: nothing here changes the page.
 */

const TOLERANCE = 0.5;

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

function describe(node: Node): string {
  const element = node instanceof Element ? node : node.parentElement;
  if (!element) return '#text';
  const classes = element.getAttribute('class');
  const path = `${element.tagName.toLowerCase()}${classes ? `.${classes.trim().split(/\s+/).join('.')}` : ''}`;
  return node instanceof Element ? path : `text "${(node.textContent ?? '').slice(0, 40)}" in ${path}`;
}

function isInline(element: Element): boolean {
  const display = getComputedStyle(element).display;
  return display === 'inline' || display === 'contents';
}

/** The nearest ancestor that lays out a box of its own (not inline): the box its content must stay inside. */
function containingBox(node: Node): Element | null {
  let parent = node.parentElement;
  while (parent && isInline(parent)) parent = parent.parentElement;
  return parent;
}

/**
 * What overflow of `element` is intended: everything where it cuts its text with an ellipsis (the
 * whole value is in a tooltip), up and down where it scrolls (a capped height). Sideways overflow
 * is never intended, clipped or scrolled.
 */
function intended(element: Element): { all: boolean; vertical: boolean } {
  const style = getComputedStyle(element);
  return { all: style.textOverflow === 'ellipsis' && style.overflowX !== 'visible', vertical: style.overflowY !== 'visible' };
}

/** Not drawn as a box of its own: said to screen readers only, inside the chart (measured apart), folded in a closed <details>, or not displayed. */
function hidden(element: Element): boolean {
  if (element.closest('.sr-only, svg') !== null || getComputedStyle(element).display === 'none') return true;
  const details = element.closest('details');
  return details !== null && !details.open && element.closest('summary') === null && element !== details;
}

function outside(inner: Box, outer: Box, vertical: boolean): string | undefined {
  const past: string[] = [];
  if (inner.left < outer.left - TOLERANCE) past.push(`left by ${(outer.left - inner.left).toFixed(1)} px`);
  if (inner.right > outer.right + TOLERANCE) past.push(`right by ${(inner.right - outer.right).toFixed(1)} px`);
  if (vertical && inner.top < outer.top - TOLERANCE) past.push(`top by ${(outer.top - inner.top).toFixed(1)} px`);
  if (vertical && inner.bottom > outer.bottom + TOLERANCE) past.push(`bottom by ${(inner.bottom - outer.bottom).toFixed(1)} px`);
  return past.length === 0 ? undefined : past.join(', ');
}

/**
 * Every element and every line of text of the view drawn past the box it belongs in (its nearest
 * block ancestor), and the page wider than the frame, in words; [] when everything fits. Text a
 * box clips on purpose (a cut shown with an ellipsis) and what a scroller scrolls are not counted.
 */
export function layoutProblems(): string[] {
  const problems: string[] = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth) problems.push(`the page is ${root.scrollWidth} px wide in a frame of ${root.clientWidth} px`);
  const check = (node: Node, boxes: Box[]) => {
    const container = containingBox(node);
    if (!container) return;
    const allowed = intended(container);
    if (allowed.all) return;
    const outer = container.getBoundingClientRect();
    for (const box of boxes) {
      if (box.right - box.left === 0 && box.bottom - box.top === 0) continue;
      const past = outside(box, outer, !allowed.vertical);
      if (past) problems.push(`${describe(node)} runs past ${describe(container)} (${past})`);
    }
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node instanceof Element) {
      if (hidden(node) || node.tagName === 'SCRIPT' || node.tagName === 'STYLE') continue;
      check(node, [node.getBoundingClientRect()]);
    } else if (node.parentElement && !hidden(node.parentElement) && (node.textContent ?? '').trim() !== '') {
      const range = document.createRange();
      range.selectNodeContents(node);
      check(node, Array.from(range.getClientRects()));
    }
  }
  return problems;
}

/**
 * The text of `selector` as it is drawn: its characters ordered by where they stand on screen,
 * line by line (top to bottom, each left to right), lines joined by "\n". A bidi override that
 * reorders characters shows here; the DOM's own text (innerText) would not.
 */
export function drawnText(selector: string): string {
  const element = document.querySelector(selector);
  return element ? drawnLines(element).join('\n') : `(no ${selector})`;
}

/** The lines `element`'s text is drawn in, each its characters left to right. */
function drawnLines(element: Element): string[] {
  const glyphs: Array<{ text: string; x: number; y: number; height: number }> = [];
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement && hidden(node.parentElement)) continue;
    const text = node.textContent ?? '';
    let offset = 0;
    for (const ch of text) {
      const range = document.createRange();
      range.setStart(node, offset);
      range.setEnd(node, offset + ch.length);
      offset += ch.length;
      const rect = Array.from(range.getClientRects()).find((r) => r.width > 0);
      if (rect) glyphs.push({ text: ch, x: rect.left + rect.width / 2, y: rect.top + rect.height / 2, height: rect.height });
    }
  }
  glyphs.sort((a, b) => a.y - b.y);
  const lines: Array<typeof glyphs> = [];
  for (const glyph of glyphs) {
    const line = lines.at(-1);
    const first = line?.[0];
    if (line && first && Math.abs(glyph.y - first.y) < Math.min(glyph.height, first.height) / 2) line.push(glyph);
    else lines.push([glyph]);
  }
  return lines.map((line) =>
    line
      .sort((a, b) => a.x - b.x)
      .map((g) => g.text)
      .join('')
      .trim(),
  );
}

/** How many lines each element matching `selector` takes (its text's line boxes). */
export function lineCounts(selector: string): Array<{ text: string; lines: number }> {
  return Array.from(document.querySelectorAll(selector)).map((element) => ({
    text: element.textContent ?? '',
    lines: drawnLines(element).length,
  }));
}

/** The chart's x-axis labels as drawn (text and box), and the chart's own box. */
export function timeLabels(): { chart: Box | null; labels: Array<Box & { text: string }> } {
  const chart = document.querySelector('svg.chart');
  const box = (r: DOMRect): Box => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
  return {
    chart: chart ? box(chart.getBoundingClientRect()) : null,
    labels: Array.from(document.querySelectorAll('svg.chart .tick-x text')).map((t) => ({
      text: t.textContent ?? '',
      ...box(t.getBoundingClientRect()),
    })),
  };
}

/**
 * Whether the element matching `selector` is in view and on top where it is drawn: its box within
 * the frame's viewport and the element at its centre is it (or inside it), not something scrolled over it.
 */
export function inView(selector: string): { found: boolean; inViewport: boolean; onTop: boolean } {
  const element = document.querySelector(selector);
  if (!element) return { found: false, inViewport: false, onTop: false };
  const r = element.getBoundingClientRect();
  const inViewport =
    r.top >= -TOLERANCE && r.left >= -TOLERANCE && r.bottom <= innerHeight + TOLERANCE && r.right <= innerWidth + TOLERANCE;
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return { found: true, inViewport, onTop: hit !== null && (hit === element || element.contains(hit)) };
}

/** The text of the cells of a column, in the order they are drawn (top to bottom, then left to right). */
export function columnInDrawnOrder(column: string): string[] {
  return Array.from(document.querySelectorAll<HTMLElement>(`tbody td[data-column="${column}"]`))
    .map((cell) => ({ cell, r: cell.getBoundingClientRect() }))
    .sort((a, b) => a.r.top - b.r.top || a.r.left - b.r.left)
    .map(({ cell }) => cell.querySelector('.reported')?.textContent ?? cell.textContent ?? '');
}

/** The text of each element matching `selector` as rendered (innerText: what is drawn, in logical order). */
export function texts(selector: string): string[] {
  // biome-ignore lint/performance/useDomNodeTextContent: what is drawn is the point (textContent holds what is not drawn too).
  return Array.from(document.querySelectorAll<HTMLElement>(selector)).map((e) => e.innerText);
}

/** A computed style property of each element matching `selector`. */
export function styles(selector: string, property: string): string[] {
  return Array.from(document.querySelectorAll(selector)).map((e) => getComputedStyle(e).getPropertyValue(property));
}

/** An attribute of each element matching `selector` (null where absent). */
export function attributes(selector: string, name: string): Array<string | null> {
  return Array.from(document.querySelectorAll(selector)).map((e) => e.getAttribute(name));
}

/** The bounding box of the first element matching `selector`. */
export function box(selector: string): (Box & { width: number; height: number }) | null {
  const r = document.querySelector(selector)?.getBoundingClientRect();
  return r ? { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height } : null;
}

/** Scrolls the first element matching `selector` to its end or its start, and says whether it scrolls at all. */
export function scrollTo(selector: string, where: 'start' | 'end'): boolean {
  const element = document.querySelector(selector);
  if (!element) return false;
  element.scrollTop = where === 'end' ? element.scrollHeight : 0;
  return element.scrollHeight > element.clientHeight;
}

/** An element as `tag#id.class`, to name it in a finding. */
function named(element: Element): string {
  return `${describe(element)}${element.id ? `#${element.id}` : ''}`;
}

/**
 * Every box that scrolls (its content taller or wider than it, and its overflow lets it scroll),
 * the page itself named "the page": under a height cap the view means one of them to, no more.
 */
export function scrollers(): string[] {
  const found: string[] = [];
  const page = document.scrollingElement ?? document.documentElement;
  if (page.scrollHeight > page.clientHeight + TOLERANCE || page.scrollWidth > page.clientWidth + TOLERANCE) found.push('the page');
  for (const element of Array.from(document.body.querySelectorAll('*'))) {
    const style = getComputedStyle(element);
    const down = /auto|scroll/.test(style.overflowY) && element.scrollHeight > element.clientHeight + TOLERANCE;
    const across = /auto|scroll/.test(style.overflowX) && element.scrollWidth > element.clientWidth + TOLERANCE;
    if (down || across) found.push(named(element));
  }
  return found;
}

/**
 * Every element whose content is cut at its side (its overflow hides what is wider than it) with
 * no `title` on it or around it to give the whole: a value a reader sees only part of, unknowingly.
 */
export function cutWithoutTitle(): string[] {
  return Array.from(document.body.querySelectorAll('*'))
    .filter((element) => {
      if (hidden(element)) return false;
      const clips = getComputedStyle(element).overflowX !== 'visible' && element.scrollWidth > element.clientWidth + TOLERANCE;
      return clips && element.closest('[title]') === null;
    })
    .map(named);
}

/** Every element matching `selector` drawn past the page's left or right edge (the frame's width), with how far. */
export function pastTheEdge(selector: string): string[] {
  const width = document.documentElement.clientWidth;
  return Array.from(document.querySelectorAll(selector)).flatMap((element) => {
    const r = element.getBoundingClientRect();
    const past = outside(r, { left: 0, right: width, top: r.top, bottom: r.bottom }, false);
    return past ? [`${named(element)} "${(element.textContent ?? '').trim()}" (${past})`] : [];
  });
}

/** The chart's role, its name, and the text of what describes it (aria-describedby). */
export function chartAlternative(): { role: string | null; label: string | null; description: string | undefined } {
  const chart = document.querySelector('svg.chart');
  const describedBy = chart?.getAttribute('aria-describedby') ?? '';
  return {
    role: chart?.getAttribute('role') ?? null,
    label: chart?.getAttribute('aria-label') ?? null,
    // biome-ignore lint/performance/useDomNodeTextContent: the description as drawn, one line per series.
    description: (document.getElementById(describedBy) as HTMLElement | null)?.innerText,
  };
}

/** The `data-column` of the element that has the keyboard focus. */
export function focusedColumn(): string | null {
  return document.activeElement?.getAttribute('data-column') ?? null;
}

(window as unknown as { probes: unknown }).probes = {
  layoutProblems,
  drawnText,
  lineCounts,
  timeLabels,
  inView,
  columnInDrawnOrder,
  texts,
  styles,
  attributes,
  box,
  scrollTo,
  chartAlternative,
  focusedColumn,
  scrollers,
  cutWithoutTitle,
  pastTheEdge,
};
