// A single plotly heatmap (up to ~64×64), redrawn at most once per animation frame.
import { rows2d } from '../core/frame.js';
import { baseLayout, CONFIG, Plotly, throttleFrame } from './plot.js';

export function heatmap(el, { title = '', colorscale = 'Viridis', xTitle = '', yTitle = '', x = null, y = null, overlays = [], reversescale = false, colorbarTitle = '' }) {
  const layout = baseLayout({
    title,
    xaxis: { title: { text: xTitle }, zeroline: false },
    yaxis: { title: { text: yTitle }, zeroline: false },
    margin: { l: 56, r: 10, t: title ? 30 : 10, b: 52 },
  });
  const base = { type: 'heatmap', z: [[0]], colorscale, reversescale, x, y, colorbar: { thickness: 10, title: { text: colorbarTitle, side: 'right' } }, hoverongaps: false };
  Plotly.newPlot(el, [base, ...overlays], layout, CONFIG);
  const draw = throttleFrame((tensor, opts) => {
    const update = { z: [rows2d(tensor)] };
    if (opts.x) update.x = [opts.x];
    if (opts.y) update.y = [opts.y];
    Plotly.restyle(el, update, [0]);
    if (opts.layout) Plotly.relayout(el, opts.layout);
  });
  return {
    el,
    /** tensor: a decoded 2-D tensor; opts: {x, y} axis coordinates, layout changes. */
    draw(tensor, opts = {}) { draw(tensor, opts); },
    overlay(index, update) { Plotly.restyle(el, update, [index]); },
    /** Several traces in one restyle (one redraw): update values are per-trace arrays. */
    update(update, indices, layout = null) {
      Plotly.update(el, update, layout || {}, indices);
    },
  };
}

/** Evenly spaced coordinates for a heatmap axis. */
export function linspace(a, b, n) {
  return Array.from({ length: n }, (_, i) => a + ((b - a) * i) / Math.max(1, n - 1));
}
