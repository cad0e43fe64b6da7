// View of `linear-regression`, on the training dashboard (the loss curve, with kept runs):
// the loss surface with the descent path, the fit, the gradients autograd computed, and the
// critical learning rate. Everything drawn comes from the server's frames and scalars; the
// page computes no model math. live-stream.js extends this view (mount's returned hooks).
import { heatmap, linspace } from '../components/heatmap.js';
import { rows2d } from '../core/frame.js';
import { dashboard } from '../components/dashboard.js';
import { bars } from '../components/bars.js';
import { readout } from '../components/readout.js';
import { panel } from '../components/panel.js';
import { CONFIG, baseLayout, Plotly, throttleFrame } from '../components/plot.js';
import { addStrings } from '../core/i18n.js';

addStrings({
  en: { 'lr.grad_axis': '|gradient| (linear axis from 0)' },
  zh: { 'lr.grad_axis': '|梯度|（线性坐标，从 0 起）' },
});

export default function mount(root, ctx) {
  const { t, store, setParams } = ctx;
  root.innerHTML = '';
  // One parameter vector, one stage: a gradient waterfall would be a single row; the
  // per-parameter gradients below say more.
  const dash = dashboard(root, ctx, {
    charts: [{ title: 'lr_reg_loss_chart', keys: [{ key: 'loss', name: 'loss' }], logY: true }],
    waterfall: false, readout: false,
  });
  const grid = dash.grid;
  const pSurf = panel(grid, 'lr_surface');
  const pFit = panel(grid, 'lr_fit', { hint: 'lr_click_hint' });
  const pGrad = panel(grid, 'lr_grads');
  const pRead = panel(grid, null, { chart: false });

  const surf = heatmap(pSurf.chart, {
    colorbarTitle: 'log10 L',
    overlays: [
      { type: 'scatter', mode: 'lines', x: [], y: [], line: { color: '#fff', width: 2 }, name: t('lr_path') },
      { type: 'scatter', mode: 'markers', x: [], y: [], marker: { symbol: 'star', size: 16, color: '#ffb000', line: { color: '#000', width: 1 } }, name: t('lr_optimum') },
      { type: 'scatter', mode: 'markers', x: [], y: [], marker: { size: 10, color: '#e8702a', line: { color: '#fff', width: 2 } }, name: t('lr_now') },
    ],
  });
  // A linear axis from 0: a bar's length is its value (on the log axis it had, b's 2.5 was
  // a sliver beside w's 4, the axis starting at a data value).
  const grads = bars(pGrad.chart, { color: '#9b59b6', yTitle: t('lr.grad_axis') });
  const info = readout(pRead.body);
  Plotly.newPlot(pFit.chart, [], baseLayout({}), CONFIG);

  let rows = []; // every scalar row of this run: the descent path
  let axes = null; // {x: 'w_x', y: 'b', ranges}
  let last = null; // latest frame

  const drawPath = throttleFrame(() => {
    if (!axes) return;
    const xs = [], ys = [];
    const stride = Math.max(1, Math.floor(rows.length / 4000)); // a path of ≤ 4000 points
    for (let i = 0; i < rows.length; i += stride) {
      const v = rows[i].values;
      if (Number.isFinite(v[axes.x]) && Number.isFinite(v[axes.y])) { xs.push(v[axes.x]); ys.push(v[axes.y]); }
    }
    surf.overlay(1, { x: [xs], y: [ys] });
  });

  let fitKind = null;
  function drawFit(f) {
    const m = f.meta;
    const pred = f.tensors.prediction;
    if (f.tensors.line) {
      const [x0, x1] = m.line_x;
      const lx = linspace(x0, x1, f.tensors.line.data.length);
      const px = m.x.map((r) => r[0]);
      if (fitKind === `line:${px.length}`) {
        Plotly.restyle(pFit.chart, { x: [px, lx], y: [m.y, Array.from(f.tensors.line.data)] }, [0, 1]);
        return;
      }
      fitKind = `line:${px.length}`;
      Plotly.react(pFit.chart, [
        { type: 'scatter', mode: 'markers', x: px, y: m.y, marker: { size: 11, color: '#2f6fdf' }, name: t('actual') },
        { type: 'scatter', mode: 'lines', x: lx, y: Array.from(f.tensors.line.data), line: { color: '#e8702a', width: 3 }, name: t('predicted') },
      ], baseLayout({ xaxis: { title: { text: 'x' } }, yaxis: { title: { text: 'y' } }, uirevision: 'fit' }), CONFIG);
    } else if (pred) {
      if (fitKind === 'pred') {
        Plotly.restyle(pFit.chart, { y: [Array.from(pred.data)] }, [1]);
        return;
      }
      fitKind = 'pred';
      const lo = Math.min(...m.y), hi = Math.max(...m.y);
      Plotly.react(pFit.chart, [
        { type: 'scatter', mode: 'lines', x: [lo, hi], y: [lo, hi], line: { color: '#999', dash: 'dot' }, hoverinfo: 'skip' },
        { type: 'scatter', mode: 'markers', x: m.y, y: Array.from(pred.data), marker: { size: 10, color: '#e8702a' }, name: t('predicted') },
      ], baseLayout({ title: t('lr_pred_vs_true'), xaxis: { title: { text: t('actual') } }, yaxis: { title: { text: t('predicted') } }, uirevision: 'fit' }), CONFIG);
    }
  }

  function drawInfo(f) {
    const m = f.meta;
    const lr = store.get('params').lr;
    const unstable = lr > m.critical_lr;
    const names = m.names || [];
    info.show([
      { label: t('loss'), value: f.scalars.loss, warn: !Number.isFinite(f.scalars.loss) },
      { label: t('lr_current_lr'), value: lr, warn: unstable },
      { label: t('lr_critical'), value: m.critical_lr, note: unstable ? `⚠ ${t('lr_will_diverge')}` : t('lr_stable'), warn: unstable },
      { label: t('lr_optimum_loss'), value: m.optimum_loss },
      ...names.map((n, i) => ({ label: n, value: f.scalars[n], note: `→ ${m.optimum[i].toPrecision(4)}` })),
    ]);
  }

  // Click the fit chart to add a point; shift-click removes the nearest one.
  pFit.chart.addEventListener('click', (ev) => {
    if (!last || !last.tensors.line || store.get('role') !== 'driver') return;
    const fl = pFit.chart._fullLayout;
    const box = pFit.chart.getBoundingClientRect();
    const x = fl.xaxis.p2l(ev.clientX - box.left - fl._size.l);
    const y = fl.yaxis.p2l(ev.clientY - box.top - fl._size.t);
    if (!Number.isFinite(x) || !Number.isFinite(y)) return;
    let pts = last.meta.x.map((r, i) => [r[0], last.meta.y[i]]);
    if (ev.shiftKey) {
      if (pts.length <= 1) return;
      let best = 0;
      pts.forEach((p, i) => { if (Math.hypot(p[0] - x, p[1] - y) < Math.hypot(pts[best][0] - x, pts[best][1] - y)) best = i; });
      pts.splice(best, 1);
    } else {
      pts = [...pts, [Number(x.toFixed(2)), Number(y.toFixed(2))]].slice(-50);
    }
    setParams({ dataset: 'custom', points: pts });
  });

  return {
    frame(f) {
      last = f;
      dash.onFrame(f);
      const m = f.meta;
      if (f.tensors.loss_surface) {
        const s = m.surface;
        const [[x0, x1], [y0, y1]] = s.ranges;
        const n = f.tensors.loss_surface.shape;
        const key = JSON.stringify([s.x, s.y, s.ranges]);
        const changed = !axes || axes.key !== key;
        axes = { x: s.x, y: s.y, key };
        const ix = m.names.indexOf(s.x), iy = m.names.indexOf(s.y);
        // One restyle for the map, the optimum and the current point: one redraw.
        surf.update({
          z: [rows2d(f.tensors.loss_surface), undefined, undefined],
          x: [linspace(x0, x1, n[1]), [m.optimum[ix]], [f.scalars[s.x]]],
          y: [linspace(y0, y1, n[0]), [m.optimum[iy]], [f.scalars[s.y]]],
        }, [0, 2, 3], changed ? {
          'xaxis.title.text': s.x, 'yaxis.title.text': s.y,
          // Fixed to the surface: a diverging path leaves the picture instead of shrinking it.
          'xaxis.range': [x0, x1], 'yaxis.range': [y0, y1],
        } : null);
        if (changed) drawPath();
      }
      if (f.tensors.grad) {
        const g = f.tensors.grad;
        grads.draw(g.labels, Array.from(g.data, (v) => Math.abs(v)));
      }
      drawFit(f);
      drawInfo(f);
    },
    scalars(newRows) {
      rows.push(...newRows);
      dash.onScalars(newRows);
      drawPath();
    },
    reset() {
      rows = [];
      fitKind = null;
      axes = null;
      dash.reset();
      drawPath();
    },
    relabel() {
      fitKind = null;
      for (const p of [pSurf, pFit, pGrad]) p.relabel();
      Plotly.relayout(pGrad.chart, { 'yaxis.title.text': t('lr.grad_axis') });
      dash.relabel();
      if (last) { drawFit(last); drawInfo(last); }
    },
  };
}
