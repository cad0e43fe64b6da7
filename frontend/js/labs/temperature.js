// View of `temperature`: train / validation / test losses beside the loss on the real future,
// two valleys (over (C, A), where every ray from the origin is a level line, and over the
// identifiable plane (A/C, B/C)) with the descent paths, and the series coloured by split.
// All numbers come from the server; the page only draws.
import { addStrings } from '../core/i18n.js';
import { heatmap, linspace } from '../components/heatmap.js';
import { dashboard } from '../components/dashboard.js';
import { readout } from '../components/readout.js';
import { panel } from '../components/panel.js';
import { CONFIG, baseLayout, fmt, Plotly, throttleFrame } from '../components/plot.js';

addStrings({
  en: {
    'temperature.losses': 'Loss (MSE, °C²) on each split',
    'temperature.train': 'train',
    'temperature.val': 'validation',
    'temperature.test': 'test',
    'temperature.future': 'last 15 % of days (the future)',
    'temperature.valley': 'Valley of equal solutions: loss over (C, A) with B/C held',
    'temperature.valley_hint': 'Every ray from the origin is a level line: (A, B, C) and (2A, 2B, 2C) predict the same. Dashed: the valley floor.',
    'temperature.ratio': 'Loss over the identifiable ratios (A/C, B/C)',
    'temperature.ratio_hint': 'A second, softer valley runs along A/C + B/C ≈ 1: yesterday and the day before are nearly the same number.',
    'temperature.series': 'The series, coloured by split, and the prediction',
    'temperature.numbers': 'Numbers',
    'temperature.floor': 'valley floor',
    'temperature.path': 'path',
    'temperature.now': 'now',
    'temperature.optimum': 'least squares',
    'temperature.predicted': 'prediction',
    'temperature.day': 'day',
    'temperature.ratios': 'A/C, B/C',
    'temperature.opt_ratios': 'least-squares A/C, B/C (train)',
    'temperature.scaled': 'train loss at (2A, 2B, 2C)',
    'temperature.same': 'the same: only the ratios matter',
    'temperature.eig': 'Hessian eigenvalues in (A, B, C)',
    'temperature.eig_note': 'one near 0 (exactly 0 at the optimum): the flat direction along the ray',
    'temperature.critical': 'critical lr 2/λmax (here)',
    'temperature.lr': 'learning rate',
    'temperature.split_time': 'in time order: validation and test come after training, and show that the future is harder',
    'temperature.split_shuffled': 'shuffled: validation days sit between training days and training sees the future; validation looks better than the future really is',
    'temperature.gap': 'future loss ÷ validation loss',
  },
  zh: {
    'temperature.losses': '各个划分上的损失（均方误差，°C²）',
    'temperature.train': '训练',
    'temperature.val': '验证',
    'temperature.test': '测试',
    'temperature.future': '最后 15% 的日子（真正的未来）',
    'temperature.valley': '等价解的山谷：B/C 固定时损失随（C, A）的变化',
    'temperature.valley_hint': '从原点出发的每条射线都是等高线：(A, B, C) 与（2A, 2B, 2C）的预测完全一样。虚线是谷底。',
    'temperature.ratio': '可确定的比值（A/C, B/C）上的损失',
    'temperature.ratio_hint': '沿 A/C + B/C ≈ 1 还有一条较平缓的山谷：昨天和前天的气温几乎一样。',
    'temperature.series': '按划分着色的气温序列与预测',
    'temperature.numbers': '数值',
    'temperature.floor': '谷底',
    'temperature.path': '路径',
    'temperature.now': '当前',
    'temperature.optimum': '最小二乘解',
    'temperature.predicted': '预测',
    'temperature.day': '天',
    'temperature.ratios': 'A/C, B/C',
    'temperature.opt_ratios': '最小二乘的 A/C, B/C（训练集）',
    'temperature.scaled': '(2A, 2B, 2C) 处的训练损失',
    'temperature.same': '完全一样：只有比值起作用',
    'temperature.eig': '(A, B, C) 上 Hessian 的特征值',
    'temperature.eig_note': '有一个接近 0（在最优点正好为 0）：沿射线方向是平的',
    'temperature.critical': '临界学习率 2/λmax（当前位置）',
    'temperature.lr': '学习率',
    'temperature.split_time': '按时间顺序：验证集和测试集都在训练之后，能看出未来更难预测',
    'temperature.split_shuffled': '随机打乱：验证日夹在训练日之间，训练还看到了未来；验证损失比真实的未来好看',
    'temperature.gap': '未来损失 ÷ 验证损失',
  },
});

const SPLIT_COLORS = ['#2f6fdf', '#1a9e77', '#c0392b'];
const SPLIT_KEYS = ['temperature.train', 'temperature.val', 'temperature.test'];

export const stylesheet = '/css/labs/temperature.css'; // the shell loads it

function pathOverlay(color) {
  return { type: 'scatter', mode: 'lines', x: [], y: [], line: { color, width: 2 } };
}

export default function mount(root, ctx) {
  const { t, store } = ctx;
  root.innerHTML = '';
  // Plain gradient descent on (A, B, C): one stage, no waterfall; the numbers are the readout.
  // The loss legend sits above the plot, out of the curves' way.
  const dash = dashboard(root, ctx, {
    className: 'temperature-view', waterfall: false, readout: false,
    charts: [{
      title: 'temperature.losses', logY: true, legend: 'above',
      keys: [
        { key: 'loss', name: 'temperature.train', color: SPLIT_COLORS[0] },
        { key: 'val_loss', name: 'temperature.val', color: SPLIT_COLORS[1] },
        { key: 'test_loss', name: 'temperature.test', color: SPLIT_COLORS[2] },
        { key: 'future_loss', name: 'temperature.future', color: '#7f8c8d', dash: 'dot' },
      ],
    }],
  });
  const grid = dash.grid;
  const pRead = panel(grid, 'temperature.numbers', { chart: false });
  const pValley = panel(grid, 'temperature.valley', { hint: 'temperature.valley_hint' });
  const pRatio = panel(grid, 'temperature.ratio', { hint: 'temperature.ratio_hint' });
  const pSeries = panel(grid, 'temperature.series');

  // Fresh objects per chart: plotly keeps (and restyles) the trace objects it is given.
  const star = () => ({ type: 'scatter', mode: 'markers', x: [], y: [], marker: { symbol: 'star', size: 15, color: '#ffb000', line: { color: '#000', width: 1 } } });
  const dot = () => ({ type: 'scatter', mode: 'markers', x: [], y: [], marker: { size: 11, color: '#e8702a', line: { color: '#fff', width: 2 } } });
  const valley = heatmap(pValley.chart, {
    xTitle: 'C', yTitle: 'A', colorbarTitle: 'log10 L',
    overlays: [
      { type: 'scatter', mode: 'lines', x: [], y: [], line: { color: '#fff', width: 2, dash: 'dash' } },
      pathOverlay('#ffb000'),
      dot(),
    ],
  });
  const ratio = heatmap(pRatio.chart, {
    xTitle: 'A/C', yTitle: 'B/C', colorbarTitle: 'log10 L',
    overlays: [pathOverlay('#fff'), star(), dot()],
  });
  Plotly.newPlot(pSeries.chart, [], baseLayout({}), CONFIG);
  const info = readout(pRead.body);
  const note = document.createElement('p');
  note.className = 'temperature-note';
  pRead.body.append(note);

  let rows = [];
  let last = null;
  let valleyRanged = false; // the floor line must not stretch the axes
  let seriesKey = null; // redraw the series scatter only when the run or split changes

  const drawPaths = throttleFrame(() => {
    const stride = Math.max(1, Math.floor(rows.length / 2000));
    const cx = [], ay = [], ra = [], rb = [];
    for (let i = 0; i < rows.length; i += stride) {
      const v = rows[i].values;
      if (![v.A, v.C, v.a, v.b].every(Number.isFinite)) continue;
      cx.push(v.C); ay.push(v.A); ra.push(v.a); rb.push(v.b);
    }
    valley.overlay(2, { x: [cx], y: [ay] });
    ratio.overlay(1, { x: [ra], y: [rb] });
  });

  const drawSeries = throttleFrame((f) => {
    const s = f.tensors.series, p = f.tensors.prediction, sp = f.tensors.split;
    const key = `${store.get('run')}:${f.meta.split_mode}`;
    const days = linspace(2, s.data.length - 1, p.data.length); // the target day of each window
    if (key !== seriesKey) {
      seriesKey = key;
      const groups = [[], [], []].map(() => ({ x: [], y: [] }));
      for (let i = 0; i < sp.data.length; i++) {
        const g = groups[Math.round(sp.data[i])];
        g.x.push(days[i]); g.y.push(s.data[i + 2]);
      }
      const data = groups.map((g, k) => ({ type: 'scatter', mode: 'markers', x: g.x, y: g.y, marker: { size: 4, color: SPLIT_COLORS[k] }, name: t(SPLIT_KEYS[k]) }));
      data.push({ type: 'scatter', mode: 'lines', x: days, y: Array.from(p.data), line: { color: 'rgba(232,112,42,0.75)', width: 1 }, name: t('temperature.predicted') });
      Plotly.react(pSeries.chart, data, baseLayout({
        showlegend: true, legend: { orientation: 'h', y: 1.14, x: 1, xanchor: 'right' },
        xaxis: { title: { text: t('temperature.day') }, zeroline: false }, yaxis: { title: { text: '°C' }, zeroline: false },
      }), CONFIG);
    } else {
      Plotly.restyle(pSeries.chart, { y: [Array.from(p.data)] }, [3]);
    }
  });

  function drawInfo(f) {
    const s = f.scalars, m = f.meta;
    const lr = store.get('params').lr;
    const eig = f.tensors.hessian_eig ? Array.from(f.tensors.hessian_eig.data) : null;
    const unstable = m.critical_lr && lr > m.critical_lr;
    info.show([
      { label: 'A, B, C', value: [s.A, s.B, s.C].map((v) => fmt(v)).join(', ') },
      { label: t('temperature.ratios'), value: [s.a, s.b].map((v) => fmt(v)).join(', ') },
      ...(m.optimum ? [{ label: t('temperature.opt_ratios'), value: m.optimum.map((v) => fmt(v)).join(', ') }] : []),
      { label: t('temperature.train'), value: s.loss, warn: !Number.isFinite(s.loss) },
      { label: t('temperature.val'), value: s.val_loss },
      { label: t('temperature.test'), value: s.test_loss },
      { label: t('temperature.future'), value: s.future_loss },
      { label: t('temperature.gap'), value: s.future_loss / s.val_loss, warn: s.future_loss / s.val_loss > 1.3 },
      { label: t('temperature.scaled'), value: s.loss_scaled, note: Math.abs(s.loss_scaled - s.loss) <= 1e-4 * Math.abs(s.loss) ? t('temperature.same') : '' },
      ...(eig ? [{ label: t('temperature.eig'), value: eig.map((v) => fmt(v, 3)).join(', '), note: t('temperature.eig_note') }] : []),
      { label: t('temperature.lr'), value: lr, warn: unstable },
      ...(m.critical_lr ? [{ label: t('temperature.critical'), value: m.critical_lr, warn: unstable }] : []),
    ]);
    if (m.split_mode) note.textContent = t(`temperature.split_${m.split_mode}`);
  }

  function show(f) {
    last = f;
    const m = f.meta;
    if (f.tensors.valley) {
      const [[c0, c1], [a0, a1]] = m.valley_ranges;
      const n = f.tensors.valley.shape;
      valley.draw(f.tensors.valley, { x: linspace(c0, c1, n[1]), y: linspace(a0, a1, n[0]) });
      // The floor A = slope·C, clipped to the picture.
      const cEnd = Math.min(c1, m.valley_slope > 0 ? a1 / m.valley_slope : m.valley_slope < 0 ? a0 / m.valley_slope : c1);
      valley.overlay(1, { x: [[0, cEnd]], y: [[0, m.valley_slope * cEnd]], name: t('temperature.floor') });
      valley.overlay(3, { x: [[f.scalars.C]], y: [[f.scalars.A]] });
      if (!valleyRanged) { valleyRanged = true; Plotly.relayout(pValley.chart, { 'xaxis.range': [c0, c1], 'yaxis.range': [a0, a1] }); }
    }
    if (f.tensors.ratio_surface) {
      const [[a0, a1], [b0, b1]] = m.ratio_ranges;
      const n = f.tensors.ratio_surface.shape;
      ratio.draw(f.tensors.ratio_surface, { x: linspace(a0, a1, n[1]), y: linspace(b0, b1, n[0]) });
      ratio.overlay(2, { x: [[m.optimum[0]]], y: [[m.optimum[1]]] });
      ratio.overlay(3, { x: [[f.scalars.a]], y: [[f.scalars.b]] });
    }
    if (f.tensors.series) drawSeries(f);
    drawInfo(f);
  }

  return {
    frame(f) { dash.onFrame(f); show(f); },
    scalars(newRows) {
      rows.push(...newRows);
      dash.onScalars(newRows);
      drawPaths();
    },
    reset() {
      rows = [];
      seriesKey = null;
      dash.reset();
      drawPaths();
    },
    params() { if (last) drawInfo(last); },
    relabel() {
      for (const p of [pRead, pValley, pRatio, pSeries]) p.relabel();
      dash.relabel();
      seriesKey = null;
      if (last) show(last);
    },
  };
}
