// View of `logistic`: the model's p over the plane with the points and the threshold line,
// the confusion matrix and precision/recall/accuracy at the threshold (counted on the
// server), the "always say no" baseline and θ; the training dashboard draws the BCE curve
// (with kept runs) and accuracy / precision / recall against the baseline. Clicking adds a point.
import { addStrings } from '../core/i18n.js';
import { addPoint, boundaryPlot, removeNearest } from '../components/boundaryPlot.js';
import { dashboard } from '../components/dashboard.js';
import { bars } from '../components/bars.js';
import { readout } from '../components/readout.js';
import { panel } from '../components/panel.js';
import { fmt, Plotly } from '../components/plot.js';

const MAX_POINTS = 100;
const BLUE = '#2f6fdf';
const ORANGE = '#e8702a';

addStrings({
  en: {
    'logistic.boundary': 'p(yes) = σ(θ·x) over the plane, with the threshold line',
    'logistic.boundary_hint': 'The colours are the model’s own output on a 64×64 grid; the black line is where p equals the threshold.',
    'logistic.loss': 'Binary cross-entropy (all points)',
    'logistic.metrics': 'At the threshold',
    'logistic.curves': 'Accuracy, precision, recall vs. “always no”',
    'logistic.theta': 'θ (bias first)',
    'logistic.cls0': 'No (0)',
    'logistic.cls1': 'Yes (1)',
    'logistic.cls0_buy': 'Doesn’t buy (0)',
    'logistic.cls1_buy': 'Buys (1)',
    'logistic.age': 'x1: age (standardized)',
    'logistic.income': 'x2: income (standardized)',
    'logistic.x1': 'x1',
    'logistic.x2': 'x2',
    'logistic.p': 'p',
    'logistic.threshold': 'Threshold',
    'logistic.predicted': 'Predicted',
    'logistic.actual': 'Actual',
    'logistic.pred_no': 'no',
    'logistic.pred_yes': 'yes',
    'logistic.accuracy': 'Accuracy',
    'logistic.precision': 'Precision',
    'logistic.recall': 'Recall',
    'logistic.f1': 'F1',
    'logistic.baseline': '“Always no” accuracy',
    'logistic.baseline_note': 'recall 0: it never finds a positive',
    'logistic.positives': 'Positives',
    'logistic.lies': 'Only {pct}% of the points are positive, so answering “no” to everyone already scores {acc}. Look at recall.',
    'logistic.tn': 'TN', 'logistic.fp': 'FP', 'logistic.fn': 'FN', 'logistic.tp': 'TP',
  },
  zh: {
    'logistic.boundary': '平面上的 p(是) = σ(θ·x)，黑线是阈值',
    'logistic.boundary_hint': '颜色是模型在 64×64 网格上算出的输出；黑线处 p 恰好等于阈值。',
    'logistic.loss': '二元交叉熵（全部点）',
    'logistic.metrics': '在当前阈值下',
    'logistic.curves': '准确率、查准率、查全率 与 “全答否”',
    'logistic.theta': 'θ（先是偏置）',
    'logistic.cls0': '否（0）',
    'logistic.cls1': '是（1）',
    'logistic.cls0_buy': '不买（0）',
    'logistic.cls1_buy': '买（1）',
    'logistic.age': 'x1：年龄（标准化）',
    'logistic.income': 'x2：收入（标准化）',
    'logistic.x1': 'x1',
    'logistic.x2': 'x2',
    'logistic.p': 'p',
    'logistic.threshold': '阈值',
    'logistic.predicted': '预测',
    'logistic.actual': '实际',
    'logistic.pred_no': '否',
    'logistic.pred_yes': '是',
    'logistic.accuracy': '准确率',
    'logistic.precision': '查准率（精确率）',
    'logistic.recall': '查全率（召回率）',
    'logistic.f1': 'F1',
    'logistic.baseline': '“全答否” 的准确率',
    'logistic.baseline_note': '查全率为 0：一个正类也找不到',
    'logistic.positives': '正类个数',
    'logistic.lies': '只有 {pct}% 的点是正类，所以对所有人都答“否”就能得到 {acc} 的准确率。要看查全率。',
    'logistic.tn': 'TN', 'logistic.fp': 'FP', 'logistic.fn': 'FN', 'logistic.tp': 'TP',
  },
});

export const stylesheet = '/css/labs/logistic.css'; // the shell loads it

const pct = (v) => `${(100 * v).toFixed(1)}%`;

export default function mount(root, ctx) {
  const { t, store, params, setParams } = ctx;
  root.innerHTML = '';
  // One weight vector, one stage: no waterfall. The metrics panel is the readout.
  const dash = dashboard(root, ctx, {
    className: 'logistic-view',
    charts: [
      { title: 'logistic.loss', cls: 'logistic-loss', keys: [{ key: 'loss', name: () => 'BCE' }] },
      {
        title: 'logistic.curves', cls: 'logistic-curves', kept: false,
        keys: [
          { key: 'accuracy', name: 'logistic.accuracy' },
          { key: 'precision', name: 'logistic.precision' },
          { key: 'recall', name: 'logistic.recall' },
          { key: 'baseline_accuracy', name: 'logistic.baseline', color: '#7f8c8d', dash: 'dash' },
        ],
      },
    ],
    waterfall: false, readout: false,
  });
  const pBound = panel(dash.picturesEl, 'logistic.boundary', { hint: 'logistic.boundary_hint' });
  pBound.el.classList.add('big');
  dash.picturesEl.append(dash.panels[0].el); // the loss beside the plane, as before the dashboard
  const pMet = panel(dash.picturesEl, 'logistic.metrics', { chart: false });
  const pTheta = panel(dash.grid, 'logistic.theta');
  pMet.el.classList.add('logistic-metrics');

  const canEdit = () => store.get('role') === 'driver';
  const myPoints = () => params().points || [];
  const isBuy = () => params().dataset !== 'circles';
  const classes = () => (isBuy()
    ? [{ key: 'logistic.cls0_buy', color: BLUE }, { key: 'logistic.cls1_buy', color: ORANGE }]
    : [{ key: 'logistic.cls0', color: BLUE }, { key: 'logistic.cls1', color: ORANGE }]);

  let plot = null;
  let plotKind = null;
  const buildPlot = () => {
    const kind = isBuy() ? 'buy' : 'plain';
    if (kind === plotKind) return;
    plotKind = kind;
    if (plot) { Plotly.purge(pBound.chart); pBound.el.querySelector('.boundary-tools')?.remove(); }
    plot = boundaryPlot(pBound.chart, {
      zmin: 0, zmax: 1, colorbarTitle: 'logistic.p',
      colorscale: [[0, '#a9c3f2'], [0.5, '#f7f7f7'], [1, '#f6c39e']],
      levels: [{ value: params().threshold }],
      classes: classes(),
      xTitle: isBuy() ? 'logistic.age' : 'logistic.x1',
      yTitle: isBuy() ? 'logistic.income' : 'logistic.x2',
      onAdd: (x, y, cls) => { if (canEdit()) setParams({ points: addPoint(myPoints(), x, y, cls, MAX_POINTS) }); },
      onRemove: (x, y) => { if (canEdit() && myPoints().length) setParams({ points: removeNearest(myPoints(), x, y) }); },
      onClear: () => { if (canEdit() && myPoints().length) setParams({ points: [] }); },
    });
  };
  buildPlot();

  const theta = bars(pTheta.chart, { color: '#9b59b6' });

  // The metrics panel: a threshold slider, the confusion matrix and the readout.
  const thrRow = document.createElement('label');
  thrRow.className = 'logistic-thr';
  const thrName = document.createElement('span');
  const thr = document.createElement('input');
  thr.type = 'range'; thr.min = '0.01'; thr.max = '0.99'; thr.step = '0.01';
  thr.id = 'logistic-threshold';
  const thrOut = document.createElement('output');
  thrRow.append(thrName, thr, thrOut);
  thr.oninput = () => { thrOut.textContent = Number(thr.value).toFixed(2); };
  thr.onchange = () => { if (canEdit()) setParams({ threshold: Number(thr.value) }); };
  const table = document.createElement('table');
  table.className = 'confusion';
  const lies = document.createElement('p');
  lies.className = 'logistic-lies';
  const infoEl = document.createElement('div');
  pMet.body.append(thrRow, table, lies, infoEl);
  const info = readout(infoEl);

  const setThreshold = (v) => { thr.value = String(v); thrOut.textContent = Number(v).toFixed(2); };
  setThreshold(params().threshold);
  const roleChanged = () => { thr.disabled = !canEdit(); plot.setReadOnly(!canEdit()); };
  store.on('role', roleChanged);
  roleChanged();

  let last = null;

  function drawMetrics(f) {
    const c = f.meta.counts;
    const s = f.scalars;
    thrName.textContent = t('logistic.threshold');
    const cell = (tag, text, cls) => { const e = document.createElement(tag); e.textContent = text; if (cls) e.className = cls; return e; };
    const row = (...cells) => { const tr = document.createElement('tr'); tr.append(...cells); return tr; };
    table.replaceChildren(
      row(cell('th', ''), cell('th', `${t('logistic.predicted')}: ${t('logistic.pred_no')}`), cell('th', `${t('logistic.predicted')}: ${t('logistic.pred_yes')}`)),
      row(cell('th', `${t('logistic.actual')}: ${t('logistic.pred_no')}`), cell('td', `${t('logistic.tn')} ${c.tn}`, 'ok'), cell('td', `${t('logistic.fp')} ${c.fp}`, 'bad')),
      row(cell('th', `${t('logistic.actual')}: ${t('logistic.pred_yes')}`), cell('td', `${t('logistic.fn')} ${c.fn}`, 'bad'), cell('td', `${t('logistic.tp')} ${c.tp}`, 'ok')),
    );
    const share = f.meta.positives / f.meta.n;
    const base = f.meta.baseline;
    lies.textContent = base.accuracy >= 0.75 ? t('logistic.lies', { pct: (100 * share).toFixed(0), acc: pct(base.accuracy) }) : '';
    info.show([
      { label: t('logistic.accuracy'), value: pct(s.accuracy), warn: s.accuracy <= base.accuracy },
      { label: t('logistic.baseline'), value: pct(base.accuracy), note: t('logistic.baseline_note') },
      { label: t('logistic.precision'), value: pct(s.precision) },
      { label: t('logistic.recall'), value: pct(s.recall), warn: s.recall < 0.5 },
      { label: t('logistic.f1'), value: fmt(s.f1, 3) },
      { label: t('logistic.positives'), value: `${f.meta.positives} / ${f.meta.n}` },
      { label: 'BCE', value: s.loss },
    ]);
  }

  function drawFrame(f) {
    if (!f.tensors.boundary) return;
    plot.setLevels([{ value: f.meta.threshold }]);
    plot.draw({ grid: f.tensors.boundary, extent: f.meta.extent, points: f.tensors.points, nUser: f.meta.n_user });
    const th = f.tensors.theta;
    theta.draw(th.labels, Array.from(th.data));
    drawMetrics(f);
  }

  return {
    frame(f) { last = f; dash.onFrame(f); drawFrame(f); },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); },
    params(p) {
      setThreshold(p.threshold);
      const kind = plotKind;
      buildPlot();
      roleChanged();
      if (kind !== plotKind && last) drawFrame(last);
    },
    relabel() {
      for (const p of [pBound, pMet, pTheta]) p.relabel();
      dash.relabel();
      plot.relabel();
      if (last) drawFrame(last);
    },
  };
}
