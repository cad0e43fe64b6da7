// A decision-boundary plot: the model's output on a grid (a heatmap the server computed),
// contour lines at chosen levels of that same grid, the data points by class, an optional
// highlight ring (support vectors, mistakes), and click-to-add-a-point of a chosen class.
// It draws what arrives; the lab decides what the grid, the points and the highlight are.
import { ensureCss } from '../core/css.js';
import { addStrings, t } from '../core/i18n.js';
import { rows2d } from '../core/frame.js';
import { linspace } from './heatmap.js';
import { baseLayout, CONFIG, Plotly, throttleFrame } from './plot.js';

addStrings({
  en: {
    'boundary.add': 'Click adds:',
    'boundary.remove_hint': 'Shift-click removes your nearest point.',
    'boundary.mine': 'yours',
    'boundary.clear': 'Clear my points',
  },
  zh: {
    'boundary.add': '点击添加：',
    'boundary.remove_hint': '按住 Shift 点击删除离你最近的自己加的点。',
    'boundary.mine': '你加的',
    'boundary.clear': '清除我加的点',
  },
});

const CSS = '/css/labs/boundary-plot.css';

/**
 * el: the chart div. Options:
 *   zmin, zmax, colorscale, colorbarTitle: the heatmap's fixed colour range.
 *   levels: [{value, dash?, color?, width?}] contour lines of the grid.
 *   classes: [{key, color}] per class (0, 1, ...); key is an i18n key for the name.
 *   highlightKey: i18n key naming the highlighted points (legend).
 *   xTitle, yTitle: i18n keys.
 *   onAdd(x, y, cls) / onRemove(x, y) / onClear(): clicking is on when onAdd is given.
 */
export function boundaryPlot(el, opts) {
  ensureCss(CSS);
  const { zmin = 0, zmax = 1, colorscale, colorbarTitle = '', levels = [], classes, highlightKey = null, xTitle = 'x1', yTitle = 'x2', onAdd = null, onRemove = null, onClear = null } = opts;
  el.classList.add('boundary-chart');
  let cls = classes.length - 1;
  let tools = null;
  if (onAdd) {
    tools = document.createElement('div');
    tools.className = 'boundary-tools';
    el.before(tools);
  }
  let last = null; // the latest {grid, extent, points, nUser, highlight}
  let lines = levels;

  function renderTools() {
    if (!tools) return;
    tools.replaceChildren();
    const lab = document.createElement('span');
    lab.textContent = t('boundary.add');
    tools.append(lab);
    classes.forEach((c, i) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'boundary-class';
      b.dataset.cls = String(i);
      b.setAttribute('aria-pressed', String(i === cls));
      const dot = document.createElement('i');
      dot.className = 'dot';
      dot.style.background = c.color; // CSSOM, allowed by the content security policy
      b.append(dot, document.createTextNode(t(c.key)));
      b.onclick = () => { cls = i; renderTools(); };
      tools.append(b);
    });
    if (onClear) {
      const clear = document.createElement('button');
      clear.type = 'button';
      clear.className = 'boundary-clear';
      clear.textContent = t('boundary.clear');
      clear.onclick = () => onClear();
      tools.append(clear);
    }
    const hint = document.createElement('small');
    hint.textContent = t('boundary.remove_hint');
    tools.append(hint);
  }

  function layout(extent) {
    const r = [-extent, extent];
    return baseLayout({
      margin: { l: 48, r: 8, t: 30, b: 40 },
      xaxis: { title: { text: t(xTitle) }, range: r, zeroline: false, constrain: 'domain' },
      yaxis: { title: { text: t(yTitle) }, range: r, zeroline: false, scaleanchor: 'x', constrain: 'domain' },
      dragmode: false,
      showlegend: true,
      legend: { orientation: 'h', x: 0, y: 1.01, yanchor: 'bottom' },
      uirevision: 'boundary',
    });
  }

  function traces(d) {
    const n = d.grid.shape[0];
    const axis = linspace(-d.extent, d.extent, n);
    const z = rows2d(d.grid);
    const out = [{
      type: 'heatmap', z, x: axis, y: axis, zmin, zmax, colorscale, showlegend: false,
      colorbar: { thickness: 10, len: 0.8, title: { text: t(colorbarTitle), side: 'right' } }, hoverinfo: 'skip',
    }];
    for (const lv of lines) {
      out.push({
        type: 'contour', z, x: axis, y: axis, showscale: false, showlegend: false, hoverinfo: 'skip',
        contours: { coloring: 'none', start: lv.value, end: lv.value, size: 1 },
        line: { color: lv.color || '#1d2330', width: lv.width || 2, dash: lv.dash || 'solid', smoothing: 0 },
      });
    }
    const pts = d.points;
    const nPts = pts ? pts.shape[0] : 0;
    const firstUser = nPts - (d.nUser || 0);
    classes.forEach((c, k) => {
      const xs = [], ys = [], sym = [];
      for (let i = 0; i < nPts; i++) {
        if (Math.round(pts.data[i * 3 + 2]) !== k) continue;
        xs.push(pts.data[i * 3]); ys.push(pts.data[i * 3 + 1]);
        sym.push(i >= firstUser ? 'diamond' : 'circle');
      }
      out.push({
        type: 'scatter', mode: 'markers', x: xs, y: ys, name: t(c.key),
        marker: { color: c.color, size: 8, symbol: sym, line: { color: '#fff', width: 1 } },
        hovertemplate: '(%{x:.2f}, %{y:.2f})<extra></extra>',
      });
    });
    if (highlightKey) {
      const xs = [], ys = [];
      if (d.highlight) {
        for (let i = 0; i < nPts; i++) if (d.highlight[i] > 0.5) { xs.push(pts.data[i * 3]); ys.push(pts.data[i * 3 + 1]); }
      }
      out.push({
        type: 'scatter', mode: 'markers', x: xs, y: ys, name: t(highlightKey), hoverinfo: 'skip',
        marker: { color: 'rgba(0,0,0,0)', size: 15, line: { color: '#1d2330', width: 2 } },
      });
    }
    return out;
  }

  const draw = throttleFrame(() => {
    if (!last) return;
    Plotly.react(el, traces(last), layout(last.extent), CONFIG);
  });

  // Data coordinates of a click, or null outside the plotting area.
  function toData(ev) {
    const fl = el._fullLayout;
    if (!fl || !last) return null;
    const box = el.getBoundingClientRect();
    const px = ev.clientX - box.left - fl.xaxis._offset;
    const py = ev.clientY - box.top - fl.yaxis._offset;
    if (px < 0 || py < 0 || px > fl.xaxis._length || py > fl.yaxis._length) return null;
    const x = fl.xaxis.p2l(px), y = fl.yaxis.p2l(py);
    const e = last.extent;
    if (!(Math.abs(x) <= e && Math.abs(y) <= e)) return null;
    return [Number(x.toFixed(2)), Number(y.toFixed(2))];
  }

  if (onAdd) {
    el.addEventListener('click', (ev) => {
      const p = toData(ev);
      if (!p) return;
      if (ev.shiftKey) { if (onRemove) onRemove(p[0], p[1]); } else onAdd(p[0], p[1], cls);
    });
  }
  renderTools();

  return {
    el,
    /** d: {grid: 2-D tensor, extent, points: [N,3] tensor (x1, x2, class), nUser, highlight?} */
    draw(d) { last = d; draw(); },
    /** Move the contour lines (e.g. the threshold). */
    setLevels(lv) { lines = lv; draw(); },
    setReadOnly(ro) { if (tools) for (const b of tools.querySelectorAll('button')) b.disabled = ro; },
    relabel() { renderTools(); draw(); },
    get cls() { return cls; },
  };
}

/** The learner's points after adding one, capped at `max` (oldest dropped). */
export function addPoint(points, x, y, cls, max) {
  return [...points, [x, y, cls]].slice(-max);
}

/** The learner's points without the one nearest to (x, y). */
export function removeNearest(points, x, y) {
  if (!points.length) return points;
  let best = 0;
  points.forEach((p, i) => {
    if (Math.hypot(p[0] - x, p[1] - y) < Math.hypot(points[best][0] - x, points[best][1] - y)) best = i;
  });
  return points.filter((_, i) => i !== best);
}
