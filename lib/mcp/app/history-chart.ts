import { scaleLinear, scaleTime } from 'd3-scale';
import { line } from 'd3-shape';
import type { DashboardSample, MetricKey } from '../../contract/schemas.js';
import { METRICS } from './dashboard-text.js';
import { el, svg } from './dom.js';

/**
 * The history as one SVG time-series chart of cpu, memory and disk (percent, 0 to 100) over the
 * whole window. Each metric is one path drawn by d3-shape's `line` with `defined`: a null sample
 * ends a stretch and the next value starts a new one, so a gap stays a gap, never a dip to 0. A
 * value alone between two gaps is also drawn as a dot, since a one-point stretch has no length.
 * Series differ by dash pattern as well as by colour; the colours are CSS, so they follow the theme.
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

/** The time labels of the x axis: times of day, with the date when the window spans days. */
function timeLabel(options: ChartOptions): (t: Date) => string {
  const withDate = options.minutes > 1440;
  const format = new Intl.DateTimeFormat(options.locale, {
    ...(withDate ? { month: 'short', day: 'numeric' } : {}),
    hour: 'numeric',
    minute: '2-digit',
    ...(options.timeZone ? { timeZone: options.timeZone } : {}),
  });
  return (t) => format.format(t);
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
  const xTicks = x
    .ticks(Math.max(2, Math.floor((width - MARGIN.left) / (options.minutes > 1440 ? 150 : 110))))
    .map((t) =>
      svg(
        'g',
        { class: 'tick tick-x' },
        svg('line', { x1: x(t), x2: x(t), y1: HEIGHT - MARGIN.bottom, y2: HEIGHT - MARGIN.bottom + 4 }),
        svg('text', { x: x(t), y: HEIGHT - 6, 'text-anchor': 'middle' }, label(t)),
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
      'aria-label': 'CPU, memory and disk usage in percent over the window; gaps where a sample carried no value.',
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

/** The legend: each series' name beside a sample of its line (colour and dash). */
export function chartLegend(): HTMLElement {
  return el(
    'ul',
    { class: 'legend' },
    ...METRICS.map(({ key, short }) =>
      el(
        'li',
        { 'data-metric': key },
        svg(
          'svg',
          { class: `swatch series-${key}`, width: 26, height: 10, viewBox: '0 0 26 10', 'aria-hidden': 'true' },
          svg('line', { class: 'line', x1: 1, x2: 25, y1: 5, y2: 5 }),
        ),
        short,
      ),
    ),
  );
}
