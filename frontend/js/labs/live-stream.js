// View of `live-stream`: the `linear-regression` view (loss, surface with the path, fit,
// gradients, critical lr) plus the prediction for the unseen stream, the largest training
// error, and why raw inputs explode: each weight's |gradient| and its own stability limit
// 2/curvature beside the learning rate. Every number comes from the server.
import { addStrings } from '../core/i18n.js';
import { lineChart } from '../components/lineChart.js';
import { readout } from '../components/readout.js';
import { panel } from '../components/panel.js';
import { CONFIG, baseLayout, fmt, Plotly, throttleFrame } from '../components/plot.js';
import mountLinear from './linear-regression.js';

addStrings({
  en: {
    'live-stream.new': 'The new stream (180000 users, 12000 reservations, 8 pm, SMS push)',
    'live-stream.new_chart': 'Predicted peak for the new stream, per step',
    'live-stream.why': 'Why raw inputs explode: per weight',
    'live-stream.why_hint': 'Bars: |gradient| (autograd) and the largest stable lr for that weight alone, 2/curvature. Line: your lr. Raw users and reservations are tens of thousands, so their curvature is huge and 2/λmax ≈ 9.3e-11.',
    'live-stream.pred_gd': 'gradient descent, now',
    'live-stream.pred_opt': 'least squares (closed form)',
    'live-stream.max_error': 'largest training error',
    'live-stream.mse': 'MSE on the 10 rows',
    'live-stream.growth': 'loss × per step (last finite)',
    'live-stream.growth_pred': 'predicted (1 − lr·λmax)²',
    'live-stream.lambda': 'λmax of the Hessian',
    'live-stream.limit': 'stability limit 2/λmax',
    'live-stream.grad': '|gradient|',
    'live-stream.limit_w': '2 / curvature',
    'live-stream.lr': 'lr',
    'live-stream.features': 'features',
    'live-stream.f_raw': 'raw numbers',
    'live-stream.f_zscore': 'z-scored',
    'live-stream.f_onehot': 'z-scored, push one-hot',
    'live-stream.f_log_users': 'z-scored, log(users)',
    'live-stream.optimum_line': 'least squares',
    'live-stream.why_axis': 'log scale · bars start at 10<sup>{k}</sup>',
  },
  zh: {
    'live-stream.new': '新直播（18 万用户、1.2 万预约、晚上 8 点、短信推送）',
    'live-stream.new_chart': '每一步对新直播峰值的预测',
    'live-stream.why': '原始数值为什么会爆炸：逐个权重看',
    'live-stream.why_hint': '柱子：|梯度|（autograd）以及只看这个权重时最大的稳定学习率 2/曲率。横线：你的学习率。原始的用户数、预约数有几万，曲率极大，2/λmax ≈ 9.3e-11。',
    'live-stream.pred_gd': '梯度下降（当前）',
    'live-stream.pred_opt': '最小二乘（闭式解）',
    'live-stream.max_error': '训练集上最大的误差',
    'live-stream.mse': '10 行数据上的均方误差',
    'live-stream.growth': '每步损失放大倍数（最近一次有限值）',
    'live-stream.growth_pred': '预测值 (1 − 学习率·λmax)²',
    'live-stream.lambda': 'Hessian 的 λmax',
    'live-stream.limit': '稳定上限 2/λmax',
    'live-stream.grad': '|梯度|',
    'live-stream.limit_w': '2 / 曲率',
    'live-stream.lr': '学习率',
    'live-stream.features': '特征',
    'live-stream.f_raw': '原始数值',
    'live-stream.f_zscore': '标准化',
    'live-stream.f_onehot': '标准化，推送独热编码',
    'live-stream.f_log_users': '标准化，用户数取 log',
    'live-stream.optimum_line': '最小二乘',
    'live-stream.why_axis': '对数刻度 · 柱子从 10<sup>{k}</sup> 起',
  },
});

export const stylesheet = '/css/labs/live-stream.css'; // the shell loads it

export default function mount(root, ctx) {
  const { t, store } = ctx;
  root.innerHTML = '';
  const baseRoot = document.createElement('div');
  const extra = document.createElement('div');
  extra.className = 'view-grid live-stream-extra';
  root.append(baseRoot, extra);
  const base = mountLinear(baseRoot, ctx);

  const pNew = panel(extra, 'live-stream.new', { chart: false });
  const pNewChart = panel(extra, 'live-stream.new_chart');
  const pWhy = panel(extra, 'live-stream.why', { hint: 'live-stream.why_hint' });
  const info = readout(pNew.body);
  const predChart = lineChart(pNewChart.chart, { traces: [{ key: 'pred_new', name: t('live-stream.pred_gd') }], xTitle: 'step' });
  Plotly.newPlot(pWhy.chart, [], baseLayout({}), CONFIG);

  let last = null;
  let optLine = null;
  let lastGrowth = null; // the last finite loss ratio between two steps (∞ once it overflows)

  const drawWhy = throttleFrame((f) => {
    const g = f.tensors.grad, c = f.tensors.curvature;
    if (!g || !c) return;
    const labels = g.labels;
    const lr = store.get('params').lr;
    // A zero has no place on a log axis: no bar (not a made-up floor).
    const grads = Array.from(g.data, (v) => (Math.abs(v) > 0 && Number.isFinite(v) ? Math.abs(v) : null));
    const limits = Array.from(c.data, (v) => (v > 0 ? 2 / v : null));
    // The axis starts at a whole decade below every value, and says which: a bar's length
    // reads from that labelled base (plotly's own range started at a data value).
    const shown = [...grads, ...limits, lr].filter((v) => v > 0 && Number.isFinite(v));
    const k = shown.length ? Math.floor(Math.log10(Math.min(...shown))) - 1 : -1;
    const top = shown.length ? Math.log10(Math.max(...shown)) + 0.5 : 1;
    Plotly.react(pWhy.chart, [
      { type: 'bar', x: labels, y: grads, name: t('live-stream.grad'), marker: { color: '#9b59b6' } },
      { type: 'bar', x: labels, y: limits, name: t('live-stream.limit_w'), marker: { color: '#1a9e77' } },
      { type: 'scatter', mode: 'lines', x: [labels[0], labels[labels.length - 1]], y: [lr, lr], line: { color: '#c0392b', width: 2, dash: 'dash' }, name: `${t('live-stream.lr')} = ${fmt(lr, 3)}` },
    ], baseLayout({
      barmode: 'group', showlegend: true, legend: { orientation: 'h', y: 1.16, x: 1, xanchor: 'right' },
      xaxis: { type: 'category' },
      yaxis: { type: 'log', exponentformat: 'power', range: [k, Math.max(top, k + 1)], title: { text: t('live-stream.why_axis', { k }) } },
    }), CONFIG);
  });

  // Viewers to one decimal with thousands separators: gradient descent's 30,161.8 and the
  // closed form's 30,159.1 must differ visibly (4 significant digits showed both as 30160).
  const viewers = (v) => (Number.isFinite(v) ? v.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }) : fmt(v));

  function drawNew(f) {
    const s = f.scalars, m = f.meta;
    const lr = store.get('params').lr;
    const unstable = m.critical_lr !== undefined && lr > m.critical_lr;
    info.show([
      { label: t('live-stream.features'), value: m.features ? t(`live-stream.f_${m.features}`) : '–' },
      { label: t('live-stream.pred_gd'), value: viewers(s.pred_new), warn: !Number.isFinite(s.pred_new) },
      ...(m.pred_new_optimum !== undefined ? [{ label: t('live-stream.pred_opt'), value: viewers(m.pred_new_optimum) }] : []),
      { label: t('live-stream.max_error'), value: s.max_error },
      { label: t('live-stream.mse'), value: s.mse, warn: !Number.isFinite(s.mse) },
      ...(lastGrowth !== null ? [{ label: t('live-stream.growth'), value: lastGrowth, warn: lastGrowth > 1.0001 }] : []),
      ...(m.growth_predicted !== undefined && unstable ? [{ label: t('live-stream.growth_pred'), value: m.growth_predicted, warn: true }] : []),
      ...(m.lambda_max !== undefined ? [{ label: t('live-stream.lambda'), value: m.lambda_max }] : []),
      ...(m.critical_lr !== undefined ? [{ label: t('live-stream.limit'), value: m.critical_lr, note: `${t('live-stream.lr')} = ${fmt(lr, 3)}`, warn: unstable }] : []),
    ]);
    if (m.pred_new_optimum !== undefined && optLine !== m.pred_new_optimum) {
      optLine = m.pred_new_optimum;
      Plotly.relayout(pNewChart.chart, {
        shapes: [{ type: 'line', xref: 'paper', x0: 0, x1: 1, y0: optLine, y1: optLine, line: { color: '#ffb000', width: 2, dash: 'dash' } }],
        annotations: [{ xref: 'paper', x: 1, xanchor: 'right', y: optLine, yanchor: 'bottom', text: `${t('live-stream.optimum_line')} ${viewers(optLine)}`, showarrow: false, font: { size: 11 } }],
      });
    }
  }

  const redrawNew = throttleFrame(drawNew);

  return {
    frame(f) {
      base.frame(f);
      last = f;
      drawNew(f);
      drawWhy(f);
    },
    scalars(rows) {
      base.scalars(rows);
      predChart.add(rows);
      for (const r of rows) if (Number.isFinite(r.values.growth)) lastGrowth = r.values.growth;
      if (last) redrawNew(last);
    },
    reset() {
      base.reset();
      predChart.clear();
      optLine = null;
      lastGrowth = null;
    },
    params(p) {
      base.params?.(p);
      if (last) { drawNew(last); drawWhy(last); }
    },
    relabel() {
      base.relabel();
      for (const p of [pNew, pNewChart, pWhy]) p.relabel();
      optLine = null;
      if (last) { drawNew(last); drawWhy(last); }
    },
  };
}
