// View of `relu-kink`. Compose mode: A's line, the ReLU's output, z with and without the
// ReLU, the kink, and the if-program the server wrote from the four numbers. Fit mode: the
// target curve, the k-unit polyline torch is fitting, each unit's share and each kink.
import { addStrings } from '../core/i18n.js';
import { linspace } from '../components/heatmap.js';
import { lineChart } from '../components/lineChart.js';
import { readout } from '../components/readout.js';
import { panel } from '../components/panel.js';
import { baseLayout, CONFIG, fmt, Plotly, throttleFrame } from '../components/plot.js';

const ID = 'relu-kink';
export const stylesheet = '/css/labs/relu-kink.css'; // the shell loads it

addStrings({
  en: {
    [`${ID}.curves`]: 'z(x): B after A, with and without the ReLU',
    [`${ID}.curves_hint`]: 'Every curve is torch’s forward pass of the 1→1→1 network on 301 points.',
    [`${ID}.program`]: 'The same thing as a program',
    [`${ID}.program_hint`]: 'Written by the server from the four numbers; change a slider and it is rewritten.',
    [`${ID}.z`]: 'z (with the ReLU)',
    [`${ID}.z_plain`]: 'z without a ReLU',
    [`${ID}.y`]: 'y = A(x)',
    [`${ID}.h`]: 'ReLU(y)',
    [`${ID}.kink`]: 'kink at x = {x}',
    [`${ID}.no_kink`]: 'no kink: without a ReLU (or with a flat A) the two lines are one line',
    [`${ID}.a`]: 'A',
    [`${ID}.b`]: 'B',
    [`${ID}.composed`]: 'B∘A without ReLU',
    [`${ID}.kink_label`]: 'Kink',
    [`${ID}.fit`]: 'A polyline of k ReLU units fitting the curve',
    [`${ID}.fit_hint`]: 'Thin lines: each unit’s share vⱼ·ReLU(wⱼx + bⱼ); dots: each unit’s kink −bⱼ/wⱼ on the fitted line.',
    [`${ID}.target`]: 'target',
    [`${ID}.fitted`]: 'fitted polyline',
    [`${ID}.parts`]: 'unit shares',
    [`${ID}.kinks`]: 'kinks',
    [`${ID}.loss`]: 'Mean squared error',
    [`${ID}.units`]: 'Units k',
    [`${ID}.inside`]: 'Kinks inside [−1, 1]',
    [`${ID}.mse`]: 'MSE',
  },
  zh: {
    [`${ID}.curves`]: 'z(x)：先 A 后 B，有无 ReLU 对比',
    [`${ID}.curves_hint`]: '每条曲线都是 torch 对 1→1→1 网络在 301 个点上的前向计算。',
    [`${ID}.program`]: '同一件事，写成程序',
    [`${ID}.program_hint`]: '由服务器根据四个数写出；拖动滑块，它就重写。',
    [`${ID}.z`]: 'z（有 ReLU）',
    [`${ID}.z_plain`]: 'z（无 ReLU）',
    [`${ID}.y`]: 'y = A(x)',
    [`${ID}.h`]: 'ReLU(y)',
    [`${ID}.kink`]: '拐点 x = {x}',
    [`${ID}.no_kink`]: '没有拐点：不加 ReLU（或 A 是水平线）时，两条直线合成一条直线',
    [`${ID}.a`]: 'A',
    [`${ID}.b`]: 'B',
    [`${ID}.composed`]: '不加 ReLU 的 B∘A',
    [`${ID}.kink_label`]: '拐点',
    [`${ID}.fit`]: 'k 个 ReLU 单元拼成的折线拟合曲线',
    [`${ID}.fit_hint`]: '细线：每个单元的贡献 vⱼ·ReLU(wⱼx + bⱼ)；圆点：每个单元的拐点 −bⱼ/wⱼ（在拟合线上）。',
    [`${ID}.target`]: '目标曲线',
    [`${ID}.fitted`]: '拟合的折线',
    [`${ID}.parts`]: '各单元贡献',
    [`${ID}.kinks`]: '拐点',
    [`${ID}.loss`]: '均方误差',
    [`${ID}.units`]: '单元数 k',
    [`${ID}.inside`]: '落在 [−1, 1] 内的拐点',
    [`${ID}.mse`]: '均方误差',
  },
});

export default function mount(root, { t }) {
  let mode = null;
  let panels = [];
  let last = null;
  let rows = [];
  let ui = {};

  function build(m) {
    mode = m;
    root.innerHTML = '';
    const grid = document.createElement('div');
    grid.className = 'view-grid rk';
    root.append(grid);
    if (m === 'compose') {
      const pCurve = panel(grid, `${ID}.curves`, { hint: `${ID}.curves_hint` });
      const pProg = panel(grid, `${ID}.program`, { chart: false, hint: `${ID}.program_hint` });
      const pre = document.createElement('pre');
      pre.className = 'rk-program';
      const code = document.createElement('code');
      pre.append(code);
      const formulas = readout(pProg.body);
      pProg.body.prepend(pre);
      Plotly.newPlot(pCurve.chart, [], baseLayout({}), CONFIG);
      ui = { pCurve, code, formulas };
      panels = [pCurve, pProg];
    } else {
      const pFit = panel(grid, `${ID}.fit`, { hint: `${ID}.fit_hint` });
      pFit.el.classList.add('rk-span2');
      const pLoss = panel(grid, `${ID}.loss`);
      const pRead = panel(grid, null, { chart: false });
      Plotly.newPlot(pFit.chart, [], baseLayout({}), CONFIG);
      const loss = lineChart(pLoss.chart, { traces: [{ key: 'loss', name: t(`${ID}.mse`) }], logY: true, xTitle: 'step' });
      loss.add(rows);
      ui = { pFit, loss, info: readout(pRead.body) };
      panels = [pFit, pLoss];
    }
  }

  function drawCompose(f) {
    const m = f.meta;
    const T = f.tensors;
    const xs = linspace(m.x_range[0], m.x_range[1], T.hook_logits.data.length);
    const line = (tensor, name, style) => ({ type: 'scatter', mode: 'lines', x: xs, y: Array.from(tensor.data), name, line: style });
    const traces = [
      line(T['layers.0.hook_pre'], t(`${ID}.y`), { color: '#2f6fdf', width: 1.5, dash: 'dot' }),
      line(T['layers.0.hook_post'], t(`${ID}.h`), { color: '#2f6fdf', width: 2 }),
      line(T.without_relu, t(`${ID}.z_plain`), { color: '#9aa0a6', width: 2, dash: 'dash' }),
      line(T.hook_logits, t(`${ID}.z`), { color: '#e8702a', width: 3.5 }),
    ];
    const shapes = [], annotations = [];
    const inView = m.kink !== null && m.kink >= m.x_range[0] && m.kink <= m.x_range[1];
    if (inView) {
      shapes.push({ type: 'line', x0: m.kink, x1: m.kink, yref: 'paper', y0: 0, y1: 1, line: { color: '#e8702a', dash: 'dot', width: 1.5 } });
      annotations.push({ x: m.kink, y: 1, yref: 'paper', text: t(`${ID}.kink`, { x: fmt(m.kink) }), showarrow: false, yanchor: 'bottom', font: { color: '#e8702a' } });
    }
    Plotly.react(ui.pCurve.chart, traces, baseLayout({
      showlegend: true, legend: { orientation: 'h', y: -0.3 }, shapes, annotations,
      margin: { l: 50, r: 12, t: 22, b: 80 }, xaxis: { title: { text: 'x' }, zeroline: true }, yaxis: { zeroline: true }, uirevision: 'c',
    }), CONFIG);
    ui.code.textContent = m.program;
    ui.formulas.show([
      { label: t(`${ID}.a`), value: m.a },
      { label: t(`${ID}.b`), value: m.b },
      { label: t(`${ID}.composed`), value: m.composed },
      { label: t(`${ID}.kink_label`), value: m.kink === null ? '—' : `x = ${fmt(m.kink)}`, note: m.kink === null ? t(`${ID}.no_kink`) : '' },
    ]);
  }

  function drawFit(f) {
    const m = f.meta;
    const T = f.tensors;
    if (!T.target) return;
    const n = T.target.data.length;
    const xs = linspace(m.x_range[0], m.x_range[1], n);
    const [k] = T.units.shape;
    // All unit shares as one trace, separated by gaps: one trace draws fast at any k.
    const px = [], py = [];
    for (let j = 0; j < k; j++) {
      for (let i = 0; i < n; i++) { px.push(xs[i]); py.push(T.units.data[j * n + i]); }
      px.push(null); py.push(null);
    }
    const kx = [], ky = [];
    T.kinks.data.forEach((x, j) => { if (Number.isFinite(x) && x >= m.x_range[0] && x <= m.x_range[1]) { kx.push(x); ky.push(T.kink_y.data[j]); } });
    Plotly.react(ui.pFit.chart, [
      { type: 'scatter', mode: 'lines', x: px, y: py, name: t(`${ID}.parts`), line: { color: 'rgba(47,111,223,0.35)', width: 1 }, connectgaps: false, hoverinfo: 'skip' },
      { type: 'scatter', mode: 'lines', x: xs, y: Array.from(T.target.data), name: t(`${ID}.target`), line: { color: '#9aa0a6', width: 5 } },
      { type: 'scatter', mode: 'lines', x: xs, y: Array.from(T.hook_logits.data), name: t(`${ID}.fitted`), line: { color: '#e8702a', width: 2.5 } },
      { type: 'scatter', mode: 'markers', x: kx, y: ky, name: t(`${ID}.kinks`), marker: { color: '#e8702a', size: 7, line: { color: '#fff', width: 1 } } },
    ], baseLayout({
      showlegend: true, legend: { orientation: 'h', y: -0.3 }, margin: { l: 50, r: 12, t: 10, b: 80 },
      xaxis: { title: { text: 'x' }, range: m.x_range }, yaxis: { range: [-1.6, 1.6] }, uirevision: 'f',
    }), CONFIG);
    ui.info.show([
      { label: t(`${ID}.units`), value: m.units },
      { label: t(`${ID}.inside`), value: f.scalars.kinks_inside },
      { label: t(`${ID}.mse`), value: f.scalars.loss },
    ]);
  }

  const draw = throttleFrame(() => {
    if (!last) return;
    if (last.meta.mode !== mode) build(last.meta.mode);
    if (mode === 'compose') drawCompose(last);
    else drawFit(last);
  });

  return {
    frame(f) { last = f; draw(); },
    scalars(newRows) {
      rows.push(...newRows);
      if (mode === 'fit' && ui.loss) ui.loss.add(newRows);
    },
    reset() {
      rows = [];
      if (mode === 'fit' && ui.loss) ui.loss.clear();
    },
    relabel() {
      for (const p of panels) p.relabel();
      mode = null; // rebuild with the new language's names
      draw();
    },
  };
}
