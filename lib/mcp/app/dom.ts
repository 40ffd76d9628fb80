import type { Status } from '../../contract/schemas.js';
import { splitHidden, withMarks } from '../../reported-characters.js';
import { STATUS_WORDS } from './dashboard-text.js';

/**
 * The view builds its DOM with these and nothing else: every string becomes a text node (never
 * markup), so a hostname such as `<img src=x onerror=…>` is shown as the characters it is. What an
 * endpoint reported (and what the tool input quotes of it) goes through `reported`: its own bidi
 * isolate, each hidden character a visible mark, so no value can reorder or hide the text around it.
 */

type Child = Node | string | null | undefined | false;

/** An HTML element with classes and attributes set as values, and its children, strings as text. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  append(element, children);
  return element;
}

/**
 * A hostname label shorter than this breaks inside only when it is wider than the whole line (its
 * hidden characters' marks make it so); a longer one may break anywhere, rather than overflow.
 */
const UNBROKEN_LABEL = 24;

/** A value's visible runs as text and each hidden character as a mark `⟨U+202E⟩` (reported-characters.ts). */
export function marked(value: string): Node[] {
  return splitHidden(value).map((part) =>
    typeof part === 'string' ? document.createTextNode(part) : el('span', { class: 'char-mark' }, `⟨${part.label}⟩`),
  );
}

/**
 * A hostname that breaks between its labels (after a dot), never inside a short one such as
 * "web-000" while the label fits on a line of its own (styles.css `.label`).
 */
function hostnameRuns(value: string): Node[] {
  return value.split('.').flatMap((label, i) => {
    const runs: Node[] = i === 0 ? [] : [document.createTextNode('.'), el('wbr')];
    if (label === '') return runs;
    const text = marked(label);
    runs.push(Array.from(label).length < UNBROKEN_LABEL ? el('span', { class: 'label' }, ...text) : el('span', {}, ...text));
    return runs;
  });
}

export interface ReportedOptions {
  /** Classes of the isolate. */
  class?: string;
  /** The most characters (code points) shown; past it the value is cut with "…" and whole in the tooltip. */
  max?: number;
  /** Breaks only between the labels of a host name. */
  hostname?: boolean;
}

/**
 * A value an endpoint reported (or the tool input quoted), as the view draws it: in a `<bdi>` of
 * its own (so a right-to-left or overriding value cannot reorder the text around it), each hidden
 * character a visible mark, and cut past `max` characters with the whole value, marked, in `title`.
 */
export function reported(value: string, options: ReportedOptions = {}): HTMLElement {
  const points = options.max === undefined || value.length <= options.max ? undefined : Array.from(value);
  const cut = points !== undefined && points.length > (options.max as number);
  const shown = cut ? points.slice(0, options.max).join('') : value;
  const isolate = el(
    'bdi',
    { class: `reported${options.class ? ` ${options.class}` : ''}` },
    ...(options.hostname ? hostnameRuns(shown) : marked(shown)),
  );
  if (cut) {
    isolate.title = withMarks(value);
    isolate.dataset.cut = String(points.length);
    isolate.append(el('span', { class: 'cut-mark', 'aria-hidden': 'true' }, '…'));
  }
  return isolate;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with its attributes, and its children, strings as text. */
export function svg(tag: string, attributes: Record<string, string | number> = {}, ...children: Child[]): SVGElement {
  const element = document.createElementNS(SVG_NS, tag) as SVGElement;
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  append(element, children);
  return element;
}

function append(parent: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/**
 * Each status's shape (16×16), so that a status reads without its colour: a circle with a tick, a
 * triangle with a bar, an octagon with a cross, a dashed circle with a question mark.
 */
const SHAPES: Readonly<Record<Status, { outline: Record<string, string>; mark: string }>> = Object.freeze({
  ok: { outline: { tag: 'circle', cx: '8', cy: '8', r: '7' }, mark: 'M4.6 8.3l2.2 2.2 4.6-4.8' },
  warning: { outline: { tag: 'path', d: 'M8 1.2l7 13H1z' }, mark: 'M8 5.8v4M8 12v.2' },
  critical: { outline: { tag: 'path', d: 'M5.1 1h5.8L15 5.1v5.8L10.9 15H5.1L1 10.9V5.1z' }, mark: 'M5.5 5.5l5 5M10.5 5.5l-5 5' },
  unknown: {
    outline: { tag: 'circle', cx: '8', cy: '8', r: '6.5', 'stroke-dasharray': '2.6 1.8' },
    mark: 'M6 6.2a2 2 0 1 1 2.8 1.8c-.6.3-.8.7-.8 1.4M8 11.6v.2',
  },
});

/** The shape of a status, drawn in the current colour (aria-hidden: the word beside it says the same). */
export function statusShape(status: Status): SVGElement {
  const { outline, mark } = SHAPES[status];
  const { tag, ...shape } = outline;
  return svg(
    'svg',
    { class: 'shape', viewBox: '0 0 16 16', width: 16, height: 16, 'aria-hidden': 'true', focusable: 'false' },
    svg(tag ?? 'circle', { ...shape, class: 'shape-outline' }),
    svg('path', { d: mark, class: 'shape-mark' }),
  );
}

/**
 * A status as a badge: shape, word and colour together (the status's own word unless given). `name`
 * is said before the word to a screen reader only ("Overall status: Critical"), where the badge's
 * place on the page tells a sighted reader what it is the status of.
 */
export function statusBadge(
  status: Status,
  size: 'small' | 'large' = 'small',
  { word = STATUS_WORDS[status], name }: { word?: string; name?: string } = {},
): HTMLElement {
  return el(
    'span',
    { class: `badge badge-${size}`, 'data-status': status },
    statusShape(status),
    name ? el('span', { class: 'sr-only' }, name) : null,
    el('span', { class: 'badge-word' }, word),
  );
}
