// A live line chart: curves extended per batch of scalar rows (Plotly.extendTraces), never
// redrawn; batches are flushed at most once per animation frame and within a main-thread share.
// Built before plotly has loaded, it keeps the rows and draws them with the chart when it comes.
// A chart over steps names its axis in the page's language, draws a cursor at the past step
// the timeline shows (viewing.js), and keeps its first points readable (no negative or
// fractional steps, no crowded log ticks around a single value).
import { lang, t } from '../core/i18n.js';
import { baseLayout, COLORS, CONFIG, finite, Plotly, scalarNames, throttleCost, whenPlotly } from './plot.js';
import { viewing } from './viewing.js';

const CURSOR = '#b45309';

/**
 * traces: [{key: 'loss', name: 'loss', color?, dash?, markers?}] read from scalar rows'
 * values; `markers` for a sparse series (a held-out evaluation every N steps): its points show.
 * Non-finite values are skipped (a diverged loss is shown by the readout, not an infinite axis).
 * yaxis: extra y-axis layout (a range, a tick format); marginTop: room above the plot (a legend
 * there); rows: the rows so far, drawn with the chart. xTitle 'step': x is the training step
 * (its title translated, the viewed step's cursor drawn); stepAxis overrides that guess.
 */
// One legend entry per arm: an arm drawn as several curves (train solid, held out dotted; its
// colour is the arm's) is listed once, by the arm's name, and a click toggles all its curves;
// the title says what each line style is. Eight entries for four arms wrapped into rows that
// took most of a phone's chart. The hover still names the curve in full.
function legendEntry(traces, i) {
  const arm = (tr) => /^arm\.(\d+)\./.exec(tr.key || '')?.[1];
  const a = arm(traces[i]);
  if (a === undefined) return {};
  const same = traces.map((tr, j) => j).filter((j) => arm(traces[j]) === a);
  if (same.length < 2) return {};
  const full = traces[i].name || traces[i].key;
  const cut = full.indexOf(' · ');
  return {
    legendgroup: `arm${a}`,
    showlegend: same[0] === i,
    ...(cut > 0 ? { name: full.slice(0, cut), hovertemplate: `(%{x}, %{y})<extra>${full}</extra>` } : {}),
  };
}

export function lineChart(el, { traces, title = '', logY = false, xTitle = '', yTitle = '', maxPoints = 50000, legend = null, yaxis = null, marginTop = null, rows = null, stepAxis = xTitle === 'step' }) {
  // A line through one point draws nothing: a curve shows its point as a marker until it
  // has two (a loss at step 0, a run just reset), then becomes a plain line.
  const points = traces.map(() => 0);
  for (const tr of traces) if (tr.name && !/^kept\./.test(tr.key)) scalarNames.set(tr.key, tr.name);
  const modeOf = (i) => (traces[i].markers || points[i] < 2 ? 'lines+markers' : 'lines');
  const data = traces.map((tr, i) => ({
    x: [], y: [], name: tr.name || tr.key, mode: modeOf(i), type: 'scatter', // SVG: scattergl needs eval, which the CSP forbids
    marker: { size: 6 },
    line: { color: tr.color || COLORS[i % COLORS.length], width: 2, dash: tr.dash },
    ...legendEntry(traces, i),
  }));
  let modes = data.map((d) => d.mode); // what the chart shows now
  const restyleModes = () => {
    const changed = traces.map((_, i) => i).filter((i) => modeOf(i) !== modes[i]);
    if (!changed.length) return;
    Plotly.restyle(el, { mode: changed.map(modeOf) }, changed);
    changed.forEach((i) => { modes[i] = modeOf(i); });
  };
  const layout = baseLayout({
    title,
    ...(marginTop === null ? {} : { margin: { l: 64, r: 12, t: marginTop, b: 38 } }),
    showlegend: traces.length > 1,
    // Above the plot, never over the curves (plotly widens the top margin to fit it).
    legend: legend || { orientation: 'h', x: 1, xanchor: 'right', y: 1.02, yanchor: 'bottom' },
    xaxis: { title: { text: xTitle }, zeroline: false },
    yaxis: { title: { text: yTitle }, type: logY ? 'log' : 'linear', exponentformat: 'power', ...yaxis },
  });
  const owner = {};
  el.lineChartOwner = owner; // a chart rebuilt on this element drops this one's late batch
  // The data's extent so far, for the axes' first ranges.
  const ext = { x0: Infinity, x1: -Infinity, y0: Infinity, y1: -Infinity };
  const ownY = !!(yaxis && (yaxis.range || yaxis.dtick)); // the caller's ticks stay
  let yDefaulted = false; // the y range was ours (an empty chart's): handed back to autorange
  // What the axes and the cursor should be now, as a relayout.
  const axes = () => {
    const out = { 'xaxis.title.text': stepAxis ? t('axis_step') : xTitle };
    if (stepAxis) {
      // Fewer than 10 steps drawn: 0..10 whole steps, not -1..1 in halves.
      if (!(ext.x1 - ext.x0 >= 10)) {
        const a = Number.isFinite(ext.x0) ? ext.x0 : 0;
        Object.assign(out, { 'xaxis.autorange': false, 'xaxis.range': [a - 0.5, a + 10.5] });
      } else out['xaxis.autorange'] = true;
      const step = viewing.get();
      const others = ((el.layout && el.layout.shapes) || layout.shapes || []).filter((sh) => sh.name !== 'viewing');
      out.shapes = step === null ? others : [...others, {
        type: 'line', name: 'viewing', xref: 'x', yref: 'paper', x0: step, x1: step, y0: 0, y1: 1,
        line: { color: CURSOR, width: 2, dash: 'dot' },
        label: { text: t('step_n', { step }), textangle: 0, textposition: 'end', xanchor: 'left', yanchor: 'top', padding: 4, font: { size: 11, color: CURSOR } },
      }];
    }
    if (!logY && !ownY) {
      // Empty, or one value so far: plotly's own ranges read as data (−1…4 with no line;
      // 0…1.5 around an accuracy of 0.5). A value in 0..1 (an accuracy, a share) gets 0..1.
      if (!(ext.y1 > ext.y0)) {
        yDefaulted = true;
        const v = Number.isFinite(ext.y0) ? ext.y0 : 0.5;
        const [a, b] = v >= 0 && v <= 1 ? [0, 1] : v > 0 ? [0, 2 * v] : [2 * v, 0];
        const pad = 0.04 * (b - a);
        Object.assign(out, { 'yaxis.autorange': false, 'yaxis.range': [a - pad, b + pad] });
      } else if (yDefaulted) out['yaxis.autorange'] = true; // the data's own range from now on
    }
    if (logY && !ownY && ext.y0 > 0) {
      // Plotly labels a log axis's minor ticks with bare digits ("2 1 9 8 7…", read as 0.5
      // or 0.05): our ticks instead, each labelled with its whole number (0.5, 0.05, 1, 10).
      const { vals, text, range } = logTicks(ext.y0, ext.y1);
      Object.assign(out, { 'yaxis.tickmode': 'array', 'yaxis.tickvals': vals, 'yaxis.ticktext': text });
      Object.assign(out, range ? { 'yaxis.autorange': false, 'yaxis.range': range } : { 'yaxis.autorange': true });
    }
    return out;
  };
  let axesSig = null;
  const relayoutAxes = () => {
    if (!drawn || el.lineChartOwner !== owner) return;
    const patch = axes();
    const sig = JSON.stringify(patch);
    if (sig === axesSig) return;
    axesSig = sig;
    Plotly.relayout(el, patch);
  };
  // Into a layout before it is drawn (plotly's nested form of the relayout above).
  const withAxes = (lay) => {
    const patch = axes();
    axesSig = JSON.stringify(patch);
    const out = { ...lay, xaxis: { ...lay.xaxis }, yaxis: { ...lay.yaxis } };
    for (const [k, v] of Object.entries(patch)) {
      if (k === 'shapes') { out.shapes = v; continue; }
      const [axis, ...path] = k.split('.');
      if (path[0] === 'title') out[axis].title = { ...out[axis].title, text: v };
      else if (v === null) delete out[axis][path[0]];
      else out[axis][path[0]] = v;
    }
    return out;
  };
  const offViewing = viewing.on(() => { if (el.lineChartOwner !== owner) offViewing(); else relayoutAxes(); });
  const offLang = lang.on('lang', () => { if (el.lineChartOwner !== owner) offLang(); else relayoutAxes(); });
  let buffer = traces.map(() => ({ x: [], y: [] }));
  let count = 0;
  let drawn = false; // plotly may arrive after the view is built: rows wait in the buffer
  // Batched: a curve with thousands of points costs tens of ms to extend, and frames
  // (attention maps, heatmaps) must still be drawn between two extensions.
  const draw = () => {
    if (!drawn || el.lineChartOwner !== owner) return;
    const idx = [], xs = [], ys = [];
    buffer.forEach((b, i) => { if (b.x.length) { idx.push(i); xs.push(b.x); ys.push(b.y); } });
    buffer = traces.map(() => ({ x: [], y: [] }));
    if (idx.length) Plotly.extendTraces(el, { x: xs, y: ys }, idx, maxPoints);
    restyleModes();
    relayoutAxes();
  };
  const flush = throttleCost(draw);
  const take = (newRows) => {
    for (const { step, values } of newRows) {
      traces.forEach((tr, i) => {
        const v = values[tr.key];
        if (finite(v) && (!logY || v > 0)) {
          buffer[i].x.push(step); buffer[i].y.push(v); count++; points[i]++;
          ext.x0 = Math.min(ext.x0, step); ext.x1 = Math.max(ext.x1, step);
          ext.y0 = Math.min(ext.y0, v); ext.y1 = Math.max(ext.y1, v);
        }
      });
    }
  };
  if (rows) take(rows); // drawn with the chart itself, outside the shared redraw budget
  // The buffered rows drawn as the chart's data, not extended into it: extending an empty
  // curve by 1,500 points costs plotly seconds, drawing them whole a tenth of that.
  const whole = (plot) => {
    buffer.forEach((b, i) => { data[i].x = b.x.slice(-maxPoints); data[i].y = b.y.slice(-maxPoints); });
    buffer = traces.map(() => ({ x: [], y: [] }));
    data.forEach((d, i) => { d.mode = modeOf(i); });
    modes = data.map((d) => d.mode);
    // Redrawn whole: this chart's own layout (its relayouts kept). Drawn first: its own
    // layout, never the one a chart rebuilt on this element left (its legend, its axis type).
    plot(el, data, withAxes(drawn ? el.layout || layout : layout), CONFIG);
  };
  whenPlotly(() => {
    if (el.lineChartOwner !== owner) return;
    whole(Plotly.newPlot);
    drawn = true;
  });
  return {
    el,
    get count() { return count; },
    add(newRows) {
      const empty = count === 0;
      take(newRows);
      // An empty chart's first points (a fork's history, a new run) are drawn at once: cheap
      // with no long curve to redraw, and a chart must never wait empty behind the others.
      if (drawn) (empty ? whole(Plotly.react) : flush());
    },
    clear() {
      buffer = traces.map(() => ({ x: [], y: [] }));
      count = 0;
      points.fill(0);
      Object.assign(ext, { x0: Infinity, x1: -Infinity, y0: Infinity, y1: -Infinity });
      modes = traces.map((_, i) => modeOf(i));
      // Keep the layout as it is now (a view may have relaid it out since creation).
      if (drawn) Plotly.react(el, traces.map((_, i) => ({ ...data[i], x: [], y: [], mode: modes[i] })), withAxes(el.layout || layout), CONFIG);
    },
    setTitle(text) {
      if (drawn) Plotly.relayout(el, { 'title.text': text });
      else layout.title = { ...layout.title, text };
    },
  };
}

const SUP = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
/** A log tick's label: the number itself (0.05, 20), or 2×10⁻⁵ when very small or large. */
export function logTickText(v) {
  if (v >= 1e-3 && v < 1e5) return String(Number(v.toPrecision(2)));
  const k = Math.floor(Math.log10(v) + 1e-9);
  const m = Math.round(v / 10 ** k);
  return `${m === 1 ? '' : `${m}×`}10${[...String(k)].map((c) => SUP[c]).join('')}`;
}

/**
 * Ticks for a log axis over values lo..hi (> 0): decades, with 2 and 5 (a short span: 2, 3,
 * 5, 7) between them, never more than a readable few. Fewer than two inside the data: the
 * axis is set (range, log10) to the ticks just around it, so it always has two labels.
 */
export function logTicks(lo, hi) {
  const span = Math.log10(hi / lo);
  const mults = span > 3 ? [1] : span > 0.8 ? [1, 2, 5] : [1, 2, 3, 5, 7];
  const all = [];
  for (let k = Math.floor(Math.log10(lo)) - 1; k <= Math.ceil(Math.log10(hi)) + 1; k++) {
    for (const m of mults) all.push(Number((m * 10 ** k).toPrecision(2)));
  }
  let vals = all.filter((v) => v >= lo * 0.999 && v <= hi * 1.001);
  let range = null;
  if (vals.length < 2) {
    const below = all.filter((v) => v <= lo).pop() ?? lo;
    const above = all.find((v) => v >= hi && v > below) ?? hi * 10;
    vals = all.filter((v) => v >= below && v <= above);
    const pad = 0.03 * Math.log10(above / below);
    range = [Math.log10(below) - pad, Math.log10(above) + pad];
  }
  if (mults.length === 1 && vals.length > 8) vals = vals.filter((_, i) => i % Math.ceil(vals.length / 6) === 0);
  return { vals, text: vals.map(logTickText), range };
}
