import { type ScaleTime, scaleLinear, scaleTime } from 'd3-scale';
import { line } from 'd3-shape';
import type { DashboardSample, MetricKey } from '../../contract/schemas.js';
import { METRICS, seriesFacts, seriesText } from './dashboard-text.js';
import { el, svg } from './dom.js';

/**
 * The history as one SVG time-series chart of cpu, memory and disk (percent, 0 to 100) over the
 * whole window. Each metric is one path drawn by d3-shape's `line` with `defined`: a null sample
 * ends a stretch and the next value starts a new one, so a gap stays a gap, never a dip to 0. A
 * value alone between two gaps is also drawn as a dot, since a one-point stretch has no length.
 * Series differ by dash pattern as well as by colour; the colours are CSS, so they follow the theme.
 * The legend is the chart's text alternative: each series' range, newest value and gaps in words.
 */

export interface ChartOptions {
  history: readonly DashboardSample[];
  /** The window the history covers: it ends at `end` (the evaluation time) and lasts `minutes`. */
  end: number;
  minutes: number;
  width: number;
  locale: string | undefined;
  timeZone: string | undefined;
}

const HEIGHT = 176;
const MARGIN = Object.freeze({ top: 10, right: 10, bottom: 24, left: 38 });
/** The id of the legend, which describes the chart (one chart per view). */
const LEGEND_ID = 'history-legend';
/** Space kept between two time labels, and the labels' font (the chart's CSS). */
const LABEL_GAP = 10;
const LABEL_FONT_PX = 11;

/**
 * The time labels of the x axis: the time of day, and the date alone at midnight when the window
 * reaches past a day (so a 7-day axis reads "Nov 21", "Nov 23", not "Nov 21, 12:00 AM").
 */
function timeLabel(options: ChartOptions): (t: Date) => string {
  const zone = options.timeZone ? { timeZone: options.timeZone } : {};
  const time = new Intl.DateTimeFormat(options.locale, { hour: 'numeric', minute: '2-digit', ...zone });
  const date = new Intl.DateTimeFormat(options.locale, { month: 'short', day: 'numeric', ...zone });
  const clock = new Intl.DateTimeFormat('en', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', ...zone });
  const midnight = (t: Date) => clock.format(t) === '00:00';
  return (t) => (options.minutes >= 1440 && midnight(t) ? date.format(t) : time.format(t));
}

/** A label's drawn width measured with the page's font on a canvas (no request, nothing drawn); else an estimate. */
function canvasMeasure(): (text: string) => number {
  const context = typeof document === 'undefined' ? null : document.createElement('canvas').getContext('2d');
  if (!context) return (text) => text.length * LABEL_FONT_PX * 0.62;
  context.font = `${LABEL_FONT_PX}px ${getComputedStyle(document.body).fontFamily}`;
  return (text) => context.measureText(text).width;
}

/** The labels of `ticks` that lie inside [0, width], or undefined when two of them come too close. */
function fittingLabels(
  x: ScaleTime<number, number>,
  ticks: Date[],
  width: number,
  label: (t: Date) => string,
  measure: (text: string) => number,
): TimeTick[] | undefined {
  const kept: TimeTick[] = [];
  let end = Number.NEGATIVE_INFINITY;
  for (const at of ticks) {
    const text = label(at);
    const half = measure(text) / 2;
    const centre = x(at);
    if (centre - half < 0 || centre + half > width) continue;
    if (centre - half < end + LABEL_GAP) return undefined;
    kept.push({ at, x: centre, text });
    end = centre + half;
  }
  return kept;
}

interface TimeTick {
  at: Date;
  x: number;
  text: string;
}

/**
 * The most time ticks whose labels fit: d3's ticks for ever fewer intervals until every label
 * lies inside [0, width] and none comes within LABEL_GAP of the next. A label that would run past
 * the chart's edge is left out rather than cut; at least one label stays (the middle one).
 */
function timeTicks(x: ScaleTime<number, number>, width: number, label: (t: Date) => string, measure: (text: string) => number): TimeTick[] {
  const [left = 0, right = width] = x.range();
  const densest = Math.max(1, Math.floor((right - left) / 40));
  let single: TimeTick[] | undefined;
  for (let count = densest; count >= 1; count -= 1) {
    const kept = fittingLabels(x, x.ticks(count), width, label, measure);
    if (kept && kept.length >= 2) return kept;
    if (kept && kept.length === 1) single ??= kept;
  }
  // d3 offers no interval between some of its own (1 and 5 minutes, 1 and 3 hours): every other, every third… of the densest.
  const ticks = x.ticks(densest);
  for (let step = 2; step < ticks.length; step += 1) {
    const kept = fittingLabels(
      x,
      ticks.filter((_, i) => i % step === 0),
      width,
      label,
      measure,
    );
    if (kept && kept.length >= 2) return kept;
  }
  if (single) return single;
  const middle = new Date((x.domain()[0]?.getTime() ?? 0) / 2 + (x.domain()[1]?.getTime() ?? 0) / 2);
  return [{ at: middle, x: x(middle), text: label(middle) }];
}

/** A value alone between two gaps (or the window's edges): drawn as a dot besides its zero-length stretch. */
function lonelyIndexes(history: readonly DashboardSample[], key: MetricKey): number[] {
  return history.flatMap((sample, i) =>
    sample[key] !== null && (history[i - 1]?.[key] ?? null) === null && (history[i + 1]?.[key] ?? null) === null ? [i] : [],
  );
}

/** The chart for `options`, sized to its width. */
export function historyChart(options: ChartOptions): SVGElement {
  const width = Math.max(240, Math.floor(options.width));
  const x = scaleTime()
    .domain([new Date(options.end - options.minutes * 60_000), new Date(options.end)])
    .range([MARGIN.left, width - MARGIN.right]);
  const y = scaleLinear()
    .domain([0, 100])
    .range([HEIGHT - MARGIN.bottom, MARGIN.top]);
  const label = timeLabel(options);
  const measure = canvasMeasure();

  const grid = y
    .ticks(4)
    .map((v) =>
      svg(
        'g',
        { class: 'tick tick-y' },
        svg('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y(v), y2: y(v) }),
        svg('text', { x: MARGIN.left - 6, y: y(v), dy: '0.32em', 'text-anchor': 'end' }, `${v}%`),
      ),
    );
  const xTicks = timeTicks(x, width, label, measure).map((tick) =>
    svg(
      'g',
      { class: 'tick tick-x' },
      svg('line', { x1: tick.x, x2: tick.x, y1: HEIGHT - MARGIN.bottom, y2: HEIGHT - MARGIN.bottom + 4 }),
      svg('text', { x: tick.x, y: HEIGHT - 6, 'text-anchor': 'middle' }, tick.text),
    ),
  );
  const series = METRICS.map(({ key }) => {
    const path = line<DashboardSample>()
      .defined((s) => s[key] !== null)
      .x((s) => x(new Date(s.observed_at)))
      .y((s) => y(s[key] ?? 0))(options.history as DashboardSample[]);
    const dots = lonelyIndexes(options.history, key).map((i) => {
      const sample = options.history[i] as DashboardSample;
      return svg('circle', { class: 'dot', cx: x(new Date(sample.observed_at)), cy: y(sample[key] ?? 0), r: 2.5 });
    });
    return svg('g', { class: `series series-${key}`, 'data-metric': key }, svg('path', { class: 'line', d: path ?? '' }), ...dots);
  });

  return svg(
    'svg',
    {
      class: 'chart',
      width,
      height: HEIGHT,
      viewBox: `0 0 ${width} ${HEIGHT}`,
      role: 'img',
      'aria-label': 'CPU, memory and disk usage in percent over the window; a break in a line is a sample without a value.',
      'aria-describedby': LEGEND_ID,
    },
    svg('g', { class: 'axis' }, ...grid, ...xTicks),
    svg('rect', {
      class: 'frame',
      x: MARGIN.left,
      y: MARGIN.top,
      width: width - MARGIN.left - MARGIN.right,
      height: HEIGHT - MARGIN.top - MARGIN.bottom,
    }),
    ...series,
  );
}

/**
 * The legend, which is also the chart's text alternative: each series beside a sample of its line
 * (colour and dash), in words: its range, its newest value and its gaps, or "no data" for a series
 * without a single value in the window (drawn as no line at all).
 */
export function chartLegend(history: readonly DashboardSample[]): HTMLElement {
  return el(
    'ul',
    { class: 'legend', id: LEGEND_ID },
    ...METRICS.map(({ key, short }) => {
      const facts = seriesFacts(history, key);
      return el(
        'li',
        { 'data-metric': key, 'data-empty': String(facts === null) },
        svg(
          'svg',
          { class: `swatch series-${key}`, width: 26, height: 10, viewBox: '0 0 26 10', 'aria-hidden': 'true' },
          svg('line', { class: 'line', x1: 1, x2: 25, y1: 5, y2: 5 }),
        ),
        seriesText(short, facts),
      );
    }),
  );
}
