// A live line chart: curves extended per batch of scalar rows (Plotly.extendTraces), never
// redrawn; batches are flushed at most once per animation frame and within a main-thread share.
// Built before plotly has loaded, it keeps the rows and draws them with the chart when it comes.
import { baseLayout, COLORS, CONFIG, finite, Plotly, throttleCost, whenPlotly } from './plot.js';

/**
 * traces: [{key: 'loss', name: 'loss', color?, dash?, markers?}] read from scalar rows'
 * values; `markers` for a sparse series (a held-out evaluation every N steps): its points show.
 * Non-finite values are skipped (a diverged loss is shown by the readout, not an infinite axis).
 * yaxis: extra y-axis layout (a range, a tick format); marginTop: room above the plot (a legend
 * there); rows: the rows so far, drawn with the chart.
 */
export function lineChart(el, { traces, title = '', logY = false, xTitle = '', yTitle = '', maxPoints = 50000, legend = null, yaxis = null, marginTop = null, rows = null }) {
  // A line through one point draws nothing: a curve shows its point as a marker until it
  // has two (a loss at step 0, a run just reset), then becomes a plain line.
  const points = traces.map(() => 0);
  const modeOf = (i) => (traces[i].markers || points[i] < 2 ? 'lines+markers' : 'lines');
  const data = traces.map((tr, i) => ({
    x: [], y: [], name: tr.name || tr.key, mode: modeOf(i), type: 'scatter', // SVG: scattergl needs eval, which the CSP forbids
    marker: { size: 6 },
    line: { color: tr.color || COLORS[i % COLORS.length], width: 2, dash: tr.dash },
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
    legend: legend || { orientation: 'h', y: 1.12, x: 1, xanchor: 'right' },
    xaxis: { title: { text: xTitle }, zeroline: false },
    yaxis: { title: { text: yTitle }, type: logY ? 'log' : 'linear', exponentformat: 'power', ...yaxis },
  });
  const owner = {};
  el.lineChartOwner = owner; // a chart rebuilt on this element drops this one's late batch
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
  };
  const flush = throttleCost(draw);
  const take = (newRows) => {
    for (const { step, values } of newRows) {
      traces.forEach((tr, i) => {
        const v = values[tr.key];
        if (finite(v) && (!logY || v > 0)) { buffer[i].x.push(step); buffer[i].y.push(v); count++; points[i]++; }
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
    plot(el, data, el.layout || layout, CONFIG);
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
      modes = traces.map((_, i) => modeOf(i));
      // Keep the layout as it is now (a view may have relaid it out since creation).
      if (drawn) Plotly.react(el, traces.map((_, i) => ({ ...data[i], x: [], y: [], mode: modes[i] })), el.layout || layout, CONFIG);
    },
    setTitle(text) {
      if (drawn) Plotly.relayout(el, { 'title.text': text });
      else layout.title = { ...layout.title, text };
    },
  };
}
