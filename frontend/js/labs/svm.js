// View of `svm`: the decision function f(x) = w·x + b over the plane with the boundary f = 0
// and the margin lines f = ±1 (contours of the server's grid), support vectors ringed (the
// server picks them), the objective and the margin width as it trains, and the three
// losses as functions of the margin y·f(x) with every point placed on the trained one.
import { addStrings } from '../core/i18n.js';
import { addPoint, boundaryPlot, removeNearest } from '../components/boundaryPlot.js';
import { linspace } from '../components/heatmap.js';
import { lineChart } from '../components/lineChart.js';
import { panel } from '../components/panel.js';
import { readout } from '../components/readout.js';
import { baseLayout, CONFIG, fmt, Plotly } from '../components/plot.js';

export const stylesheet = '/css/labs/svm.css'; // the shell loads it
const MAX_POINTS = 100;
const BLUE = '#2f6fdf';
const ORANGE = '#e8702a';
const CURVE_COLORS = { hinge: '#c0392b', logistic: '#1a9e77', squared: '#9b59b6', zero_one: '#7f8c8d' };

addStrings({
  en: {
    'svm.boundary': 'f(x) = w·x + b: the boundary f = 0 and the margin lines f = ±1',
    'svm.boundary_hint': 'The colours are the model’s f on a 64×64 grid (clipped to ±3). Ringed: points on or inside the margin (y·f ≤ 1).',
    'svm.neg': 'y = −1',
    'svm.pos': 'y = +1',
    'svm.sv': 'on or inside the margin',
    'svm.f': 'f(x)',
    'svm.objective': 'Objective ½‖w‖² + C·Σ loss',
    'svm.reg': '½‖w‖²',
    'svm.margin_chart': 'Margin width 2/‖w‖',
    'svm.margin': 'margin width',
    'svm.state': 'The model now',
    'svm.curves': 'The losses as functions of the margin m = y·f(x)',
    'svm.curves_hint': 'Dots: every point at its margin, on the loss being trained. Beyond m = 1 the hinge is exactly 0; the logistic loss never is; the squared loss punishes points that are “too right”.',
    'svm.hinge': 'hinge max(0, 1−m)',
    'svm.logistic': 'logistic ln(1+e^−m)',
    'svm.squared': 'squared (1−m)²',
    'svm.zero_one': '0-1 (what we count)',
    'svm.points': 'points',
    'svm.m': 'margin m = y·f(x)',
    'svm.loss_now': 'Loss being trained',
    'svm.n_sv': 'Points on or inside the margin',
    'svm.accuracy': 'Accuracy',
    'svm.data_term': 'C·Σ loss',
    'svm.wide': 'inf (w = 0)',
  },
  zh: {
    'svm.boundary': 'f(x) = w·x + b：边界 f = 0 与间隔线 f = ±1',
    'svm.boundary_hint': '颜色是模型在 64×64 网格上的 f（截断到 ±3）。画圈的点在间隔上或间隔内（y·f ≤ 1）。',
    'svm.neg': 'y = −1',
    'svm.pos': 'y = +1',
    'svm.sv': '在间隔上或间隔内',
    'svm.f': 'f(x)',
    'svm.objective': '目标 ½‖w‖² + C·Σ 损失',
    'svm.reg': '½‖w‖²',
    'svm.margin_chart': '间隔宽度 2/‖w‖',
    'svm.margin': '间隔宽度',
    'svm.state': '模型现在',
    'svm.curves': '三种损失作为间隔 m = y·f(x) 的函数',
    'svm.curves_hint': '圆点：每个样本按它的间隔画在正在训练的损失上。m 超过 1 后合页损失恰好为 0；逻辑损失永远不为 0；平方损失还会惩罚“对得太多”的点。',
    'svm.hinge': '合页 max(0, 1−m)',
    'svm.logistic': '逻辑 ln(1+e^−m)',
    'svm.squared': '平方（1−m）²',
    'svm.zero_one': '0-1（我们真正数的）',
    'svm.points': '样本',
    'svm.m': '间隔 m = y·f(x)',
    'svm.loss_now': '正在训练的损失',
    'svm.n_sv': '在间隔上或间隔内的点',
    'svm.accuracy': '准确率',
    'svm.data_term': 'C·Σ 损失',
    'svm.wide': '无穷（w = 0）',
  },
});

export default function mount(root, { t, store, params, setParams }) {
  root.innerHTML = '';
  const grid = document.createElement('div');
  grid.className = 'view-grid svm-view';
  root.append(grid);
  const pBound = panel(grid, 'svm.boundary', { hint: 'svm.boundary_hint' });
  pBound.el.classList.add('big');
  const pLoss = panel(grid, 'svm.objective');
  const pInfo = panel(grid, 'svm.state', { chart: false, now: true });
  const pCurves = panel(grid, 'svm.curves', { hint: 'svm.curves_hint' });
  const pMargin = panel(grid, 'svm.margin_chart');
  pLoss.el.classList.add('svm-objective');
  pInfo.el.classList.add('svm-info');
  pCurves.el.classList.add('svm-curves');

  const canEdit = () => store.get('role') === 'driver';
  const myPoints = () => params().points || [];
  const plot = boundaryPlot(pBound.chart, {
    zmin: -3, zmax: 3, colorbarTitle: 'svm.f',
    colorscale: [[0, '#a9c3f2'], [0.5, '#f7f7f7'], [1, '#f6c39e']],
    levels: [
      { value: 0, width: 2.5 },
      { value: -1, dash: 'dash', color: '#1f4fa8', width: 1.5 },
      { value: 1, dash: 'dash', color: '#b0521a', width: 1.5 },
    ],
    classes: [{ key: 'svm.neg', color: BLUE }, { key: 'svm.pos', color: ORANGE }],
    highlightKey: 'svm.sv',
    onAdd: (x, y, cls) => { if (canEdit()) setParams({ points: addPoint(myPoints(), x, y, cls, MAX_POINTS) }); },
    onRemove: (x, y) => { if (canEdit() && myPoints().length) setParams({ points: removeNearest(myPoints(), x, y) }); },
    onClear: () => { if (canEdit() && myPoints().length) setParams({ points: [] }); },
  });
  const roleChanged = () => plot.setReadOnly(!canEdit());
  store.on('role', roleChanged);
  roleChanged();

  const lossTraces = () => [{ key: 'loss', name: 'J' }, { key: 'reg', name: t('svm.reg'), dash: 'dot' }];
  let loss = lineChart(pLoss.chart, { traces: lossTraces(), logY: true, xTitle: 'step' });
  const marginTraces = () => [{ key: 'margin_width', name: t('svm.margin'), color: '#1a9e77' }];
  let margin = lineChart(pMargin.chart, { traces: marginTraces(), xTitle: 'step' });
  const info = readout(pInfo.body);
  Plotly.newPlot(pCurves.chart, [], baseLayout({}), CONFIG);
  let rows = [];
  let last = null;

  function drawCurves(f) {
    const c = f.tensors.loss_curves;
    const [m0, m1] = f.meta.margin_range;
    const n = c.shape[1];
    const m = linspace(m0, m1, n);
    const now = f.meta.loss;
    const traces = c.labels.map((name, i) => ({
      type: 'scatter', mode: 'lines', x: m, y: Array.from(c.data.subarray(i * n, (i + 1) * n)), name: t(`svm.${name}`),
      line: { color: CURVE_COLORS[name], width: name === now ? 3.5 : 1.5, dash: name === 'zero_one' ? 'dot' : 'solid' },
      opacity: name === now || name === 'zero_one' ? 1 : 0.6, hoverinfo: 'skip',
    }));
    const pts = f.tensors.points.data, mg = f.tensors.margins.data, pl = f.tensors.point_loss.data;
    traces.push({
      type: 'scatter', mode: 'markers', x: Array.from(mg), y: Array.from(pl), name: t('svm.points'),
      marker: { size: 7, color: Array.from(mg, (_, i) => (pts[i * 3 + 2] > 0.5 ? ORANGE : BLUE)), line: { color: '#fff', width: 1 } },
      hovertemplate: 'm=%{x:.2f}, loss=%{y:.2f}<extra></extra>',
    });
    Plotly.react(pCurves.chart, traces, baseLayout({
      showlegend: true, legend: { orientation: 'h', y: 1.02, yanchor: 'bottom', font: { size: 11 } }, margin: { l: 48, r: 12, t: 46, b: 38 },
      xaxis: { title: { text: t('svm.m') }, range: [m0, m1] }, yaxis: { range: [0, 4.5] }, uirevision: 'curves',
    }), CONFIG);
  }

  function drawInfo(f) {
    const s = f.scalars;
    const [w1, w2] = f.meta.w;
    info.show([
      { label: 'w', value: `(${fmt(w1, 3)}, ${fmt(w2, 3)})` },
      { label: 'b', value: fmt(f.meta.b, 3) },
      { label: '‖w‖', value: fmt(Math.hypot(w1, w2), 3) },
      { label: t('svm.margin'), value: Number.isFinite(s.margin_width) ? fmt(s.margin_width, 3) : t('svm.wide') },
      { label: 'C', value: fmt(f.meta.C, 3) },
      { label: t('svm.loss_now'), value: t(`svm.${f.meta.loss}`) },
      { label: 'J', value: s.loss },
      { label: t('svm.reg'), value: s.reg },
      { label: t('svm.data_term'), value: s.loss - s.reg },
      { label: t('svm.n_sv'), value: String(s.n_support) },
      { label: t('svm.accuracy'), value: `${(100 * s.accuracy).toFixed(1)}%` },
    ]);
  }

  function drawFrame(f) {
    if (!f.tensors.boundary) return;
    plot.draw({ grid: f.tensors.boundary, extent: f.meta.extent, points: f.tensors.points, nUser: f.meta.n_user, highlight: f.tensors.support.data });
    drawCurves(f);
    drawInfo(f);
  }

  return {
    frame(f) { last = f; drawFrame(f); },
    scalars(newRows) { rows.push(...newRows); loss.add(newRows); margin.add(newRows); },
    reset() { rows = []; loss.clear(); margin.clear(); },
    params() { roleChanged(); },
    relabel() {
      for (const p of [pBound, pLoss, pInfo, pCurves, pMargin]) p.relabel();
      plot.relabel();
      loss = lineChart(pLoss.chart, { traces: lossTraces(), logY: true, xTitle: 'step' });
      loss.add(rows);
      margin = lineChart(pMargin.chart, { traces: marginTraces(), xTitle: 'step' });
      margin.add(rows);
      if (last) drawFrame(last);
    },
  };
}
