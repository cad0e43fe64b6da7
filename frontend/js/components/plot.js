// Shared plotly defaults and a rAF batcher: one redraw per animation frame at most.
import { Plotly, whenPlotly } from '../core/plotly.js';

export { Plotly, whenPlotly }; // live: null until the shell has loaded plotly

// Every line chart's curve names by scalar key, in the page's language (the screen-reader
// text reads values by the names their legends give them).
export const scalarNames = new Map();

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

// A paced caller (the shell's frame draw, a costly redraw below) waits after each draw as
// long as the draw took. A throttleFrame'd redraw it triggers would run at the next animation
// frame, outside the time it measured, so the page drew more than its pacing allowed; called
// inside `measured`, it runs before `measured` returns (once, with its latest arguments).
let collecting = null; // throttleFrame'd fn -> its latest arguments, inside `measured`

/** Run fn now, and with it every throttleFrame'd redraw it asks for. */
export function measured(fn) {
  if (collecting) return fn();
  const due = new Map();
  collecting = due;
  try {
    return fn();
  } finally {
    try {
      while (due.size) { // a redraw may ask for another
        const [[run, args]] = due;
        due.delete(run);
        try { run(...args); } catch (err) { reportError(err); } // as its own animation frame would
      }
    } finally {
      collecting = null;
    }
  }
}

/** Run fn at most once per animation frame, with the latest arguments (inside `measured`:
 * before it returns). */
export function throttleFrame(fn) {
  let pending = null; // the arguments waiting for the next animation frame
  const run = (...args) => fn(...args); // its own key, even if fn is shared
  return (...args) => {
    if (collecting) { pending = null; collecting.set(run, args); return; } // a queued frame does nothing
    const first = pending === null;
    pending = args;
    if (first) requestAnimationFrame(() => { if (pending === null) return; const a = pending; pending = null; fn(...a); });
  };
}

// The costly redraws (throttleCost) share one budget: COSTLY_SHARE of the main thread over
// any stretch of time, with a burst of COSTLY_BURST ms of work allowed after a quiet spell
// (a click's one redraw runs at once; a stream of them settles at the share).
const COSTLY_SHARE = 0.1;
const COSTLY_BURST = 100;
// A redraw that cost more than this is charged only this much: one slow extension (a loaded
// machine, a long curve) never makes the next chart in the queue wait more than
// COSTLY_DEBT / COSTLY_SHARE ms (0.5 s), so no chart starves behind the others.
const COSTLY_DEBT = 50;
const costly = { queue: new Map(), scheduled: false, credit: COSTLY_BURST, at: 0 }; // queue: fn -> latest args

function refill(now) {
  costly.credit = Math.min(COSTLY_BURST, costly.credit + (now - costly.at) * COSTLY_SHARE);
  costly.at = now;
}

function runCostly() {
  costly.scheduled = false;
  if (!costly.queue.size) return;
  refill(performance.now());
  if (costly.credit < 0) { scheduleCostly(-costly.credit / COSTLY_SHARE); return; }
  const [[fn, args]] = costly.queue; // the longest waiting
  costly.queue.delete(fn);
  const t0 = performance.now();
  try {
    measured(() => fn(...args));
  } finally {
    const end = performance.now();
    refill(end);
    costly.credit = Math.max(-COSTLY_DEBT, costly.credit - (end - t0));
    if (costly.queue.size) scheduleCostly(Math.max(0, -costly.credit / COSTLY_SHARE));
  }
}

function scheduleCostly(wait = 0) {
  if (costly.scheduled) return;
  costly.scheduled = true;
  if (wait > 1) setTimeout(() => requestAnimationFrame(runCostly), wait);
  else requestAnimationFrame(runCostly);
}

/**
 * Like throttleFrame, for a costly fn (a long curve's extendTraces costs tens of ms): every
 * such fn on the page waits its turn, one per animation frame, the longest waiting first,
 * within the shared budget above. They never stack into one long task, and frames
 * (attention maps, heatmaps) are drawn between.
 */
export function throttleCost(fn) {
  const run = (...args) => fn(...args); // its own key, even if fn is shared
  return (...args) => {
    costly.queue.set(run, args); // a waiting fn keeps its place, with the latest args
    scheduleCostly();
  };
}

/**
 * Plotly.react only when the chart's data or layout changed since its last draw: a chart of
 * something measured once (a model's cache sizes) or every evaluation (per-layer statistics)
 * is otherwise redrawn at every frame for nothing. True when it drew.
 */
const drawnKeys = new WeakMap(); // chart element -> what it last drew, as JSON
export function reactIfChanged(P, gd, data, layout, config = CONFIG) {
  const key = JSON.stringify([data, layout]);
  if (drawnKeys.get(gd) === key) return false;
  drawnKeys.set(gd, key);
  P.react(gd, data, layout, config);
  return true;
}

export const finite = (v) => typeof v === 'number' && Number.isFinite(v);

export function fmt(v, digits = 4) {
  if (typeof v !== 'number') return String(v ?? '–');
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? '∞' : '−∞';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(Math.max(1, digits - 2));
  return Number(v.toPrecision(digits)).toString();
}
