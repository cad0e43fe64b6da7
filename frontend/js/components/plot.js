// Shared plotly defaults and a rAF batcher: one redraw per animation frame at most.
import { Plotly, whenPlotly } from '../core/plotly.js';

export { Plotly, whenPlotly }; // live: null until the shell has loaded plotly

export const COLORS = ['#2f6fdf', '#e8702a', '#1a9e77', '#9b59b6', '#c0392b', '#7f8c8d', '#f1c40f', '#16a085'];

export function baseLayout(extra = {}) {
  return {
    margin: { l: 64, r: 12, t: extra.title ? 30 : 10, b: 38 },
    paper_bgcolor: 'rgba(0,0,0,0)',
    plot_bgcolor: 'rgba(0,0,0,0)',
    font: { family: 'system-ui, "Noto Sans CJK SC", sans-serif', size: 12, color: getComputedStyle(document.body).color },
    showlegend: false,
    ...extra,
    title: extra.title ? { text: extra.title, font: { size: 13 }, x: 0.02 } : undefined,
  };
}

// Every chart exports PNG (plotly's camera button) and SVG (ours).
const SVG_BUTTON = {
  name: 'svg',
  title: 'SVG',
  icon: { width: 1000, height: 1000, path: 'M200 100h450l150 150v650H200z M300 550h400v80H300z M300 700h400v80H300z' },
  click: (gd) => Plotly.downloadImage(gd, { format: 'svg', filename: gd.getAttribute('aria-label') || 'chart' }),
};

export const CONFIG = {
  responsive: true,
  displaylogo: false,
  modeBarButtonsToRemove: ['lasso2d', 'select2d', 'autoScale2d'],
  modeBarButtonsToAdd: [SVG_BUTTON],
  toImageButtonOptions: { format: 'png', scale: 2 },
};

/** Run fn at most once per animation frame, with the latest arguments. */
export function throttleFrame(fn) {
  let pending = null;
  return (...args) => {
    const first = pending === null;
    pending = args;
    if (first) requestAnimationFrame(() => { const a = pending; pending = null; fn(...a); });
  };
}

/**
 * Like throttleFrame, but a costly fn also waits: after a run that took c ms the next one
 * waits c·(1/share − 1) ms more, so fn takes at most `share` of the page's main thread.
 * (A long curve's extendTraces costs tens of ms; frames must still be drawn between.)
 */
export function throttleCost(fn, share = 0.25) {
  let pending = null;
  let end = 0;
  let cost = 0;
  const run = () => {
    const wait = end + cost * (1 / share - 1) - performance.now();
    if (wait > 1) { setTimeout(() => requestAnimationFrame(run), wait); return; }
    const a = pending;
    pending = null;
    const t0 = performance.now();
    fn(...a);
    end = performance.now();
    cost = end - t0;
  };
  return (...args) => {
    const first = pending === null;
    pending = args;
    if (first) requestAnimationFrame(run);
  };
}

export const finite = (v) => typeof v === 'number' && Number.isFinite(v);

export function fmt(v, digits = 4) {
  if (typeof v !== 'number') return String(v ?? '–');
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? '∞' : '−∞';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(Math.max(1, digits - 2));
  return Number(v.toPrecision(digits)).toString();
}
