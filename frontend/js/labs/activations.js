// View of `activations`: f(x) and autograd's f'(x) for the chosen functions, the extremes
// marked on the curves, and a table of max f', min f, f(0), f'(0) and the probe's values.
import { addStrings } from '../core/i18n.js';
import { linspace } from '../components/heatmap.js';
import { panel } from '../components/panel.js';
import { baseLayout, CONFIG, fmt, Plotly, throttleFrame } from '../components/plot.js';

const ID = 'activations';
export const stylesheet = '/css/labs/activations.css'; // the shell loads it
const COLOURS = { relu: '#e8702a', sigmoid: '#2f6fdf', tanh: '#1a9e77', gelu: '#9b59b6', silu: '#c0392b' };
const NAMES = { relu: 'ReLU', sigmoid: 'Sigmoid', tanh: 'Tanh', gelu: 'GELU', silu: 'SiLU' };

addStrings({
  en: {
    [`${ID}.f`]: 'f(x)',
    [`${ID}.df`]: 'f′(x), from autograd',
    [`${ID}.f_hint`]: 'Dots: each function’s lowest value (on [−10, 10]).',
    [`${ID}.df_hint`]: 'Dots: each slope’s largest value; rings: the value at exactly x = 0. A slope below 1 shrinks a gradient at every layer it passes.',
    [`${ID}.table`]: 'Readouts',
    [`${ID}.table_hint`]: 'Extremes are read on [−10, 10] in steps of 0.0005; f′ is autograd’s. At exactly 0 the ReLU has no derivative; PyTorch uses 0.',
    [`${ID}.name`]: 'Function',
    [`${ID}.max_df`]: 'max f′ (at x)',
    [`${ID}.min_f`]: 'min f (at x)',
    [`${ID}.f0`]: 'f(0)',
    [`${ID}.df0`]: 'f′(0)',
    [`${ID}.fp`]: 'probe: f({x})',
    [`${ID}.dfp`]: 'probe: f′({x})',
    [`${ID}.at0`]: 'value at x = 0',
    [`${ID}.none`]: 'Tick at least one function on the left.',
    [`${ID}.edge`]: 'at the edge: no minimum inside',
  },
  zh: {
    [`${ID}.f`]: 'f(x)',
    [`${ID}.df`]: 'f′(x)（autograd 算出）',
    [`${ID}.f_hint`]: '圆点：每个函数的最小值（在 [−10, 10] 上）。',
    [`${ID}.df_hint`]: '圆点：每条导数曲线的最大值；空心圈：恰好 x = 0 处的值。导数小于 1，梯度每经过一层就缩小一次。',
    [`${ID}.table`]: '读数',
    [`${ID}.table_hint`]: '极值在 [−10, 10] 上以 0.0005 为步长读取；f′ 来自 autograd。ReLU 在恰好 0 处没有导数，PyTorch 取 0。',
    [`${ID}.name`]: '函数',
    [`${ID}.max_df`]: 'f′ 最大值（位置）',
    [`${ID}.min_f`]: 'f 最小值（位置）',
    [`${ID}.f0`]: 'f(0)',
    [`${ID}.df0`]: 'f′(0)',
    [`${ID}.fp`]: '探针：f({x})',
    [`${ID}.dfp`]: '探针：f′({x})',
    [`${ID}.at0`]: 'x = 0 处的值',
    [`${ID}.none`]: '请在左侧至少勾选一个函数。',
    [`${ID}.edge`]: '在边界上：内部没有最小值',
  },
});

// A number shown exactly enough: 0 stays "0", 0.25 stays "0.25".
const exact = (v) => (Number.isFinite(v) ? String(Number(v.toPrecision(6))) : '—');

// Where a maximum is: one x, or the interval where it holds (ReLU' is 1 on all of x > 0).
const where = (a, b) => (b - a > 1e-3 ? `${exact(a)} ≤ x ≤ ${exact(b)}` : `x = ${fmt(a, 4)}`);

export default function mount(root, { t }) {
  root.innerHTML = '';
  const grid = document.createElement('div');
  grid.className = 'view-grid act';
  root.append(grid);
  const pF = panel(grid, `${ID}.f`, { hint: `${ID}.f_hint` });
  const pDf = panel(grid, `${ID}.df`, { hint: `${ID}.df_hint` });
  const pTab = panel(grid, `${ID}.table`, { chart: false, wide: true, hint: `${ID}.table_hint` });
  const table = document.createElement('table');
  table.className = 'act-table';
  pTab.body.append(table);
  Plotly.newPlot(pF.chart, [], baseLayout({}), CONFIG);
  Plotly.newPlot(pDf.chart, [], baseLayout({}), CONFIG);
  let last = null;

  function chart(el, curves, marks, range, probe, at0 = null) {
    const names = curves.labels || [];
    const [, n] = curves.shape;
    const xs = linspace(range[0], range[1], n);
    const traces = names.map((name, a) => ({
      type: 'scatter', mode: 'lines', x: xs, y: Array.from(curves.data.subarray(a * n, (a + 1) * n)),
      name: NAMES[name] || name, line: { color: COLOURS[name], width: 2.5 },
    }));
    if (marks) {
      // A lowest point on the edge of [−10, 10] is no minimum (ReLU, sigmoid, tanh): skip it.
      const keep = names.map((_, a) => a).filter((a) => Math.abs(marks.x.data[a]) < 10 - 1e-6);
      traces.push({
        type: 'scatter', mode: 'markers', showlegend: false, hoverinfo: 'x+y',
        x: keep.map((a) => marks.x.data[a]), y: keep.map((a) => marks.y.data[a]),
        marker: { size: 9, color: keep.map((a) => COLOURS[names[a]]), line: { color: '#fff', width: 1.5 } },
      });
    }
    if (at0) {
      traces.push({
        type: 'scatter', mode: 'markers', name: t(`${ID}.at0`), hoverinfo: 'x+y',
        x: names.map(() => 0), y: Array.from(at0.data),
        marker: { size: 13, symbol: 'circle-open', color: names.map((nm) => COLOURS[nm]), line: { width: 2.5 } },
      });
    }
    const shapes = [{ type: 'line', x0: probe, x1: probe, yref: 'paper', y0: 0, y1: 1, line: { color: '#999', dash: 'dot', width: 1 } }];
    Plotly.react(el, traces, baseLayout({
      showlegend: true, legend: { orientation: 'h', y: -0.14, yanchor: 'top' }, shapes, margin: { l: 50, r: 12, t: 10, b: 72 },
      xaxis: { range, zeroline: true }, yaxis: { zeroline: true }, uirevision: 'a',
    }), CONFIG);
  }

  function cell(tag, text, cls) {
    const c = document.createElement(tag);
    c.textContent = text;
    if (cls) c.className = cls;
    return c;
  }

  function drawTable(f) {
    const T = f.tensors;
    const names = T.f.labels || [];
    const probe = fmt(f.meta.probe, 3);
    const head = document.createElement('tr');
    for (const k of ['name', 'max_df', 'min_f', 'f0', 'df0']) head.append(cell('th', t(`${ID}.${k}`)));
    head.append(cell('th', t(`${ID}.fp`, { x: probe })), cell('th', t(`${ID}.dfp`, { x: probe })));
    const body = names.map((name, a) => {
      const tr = document.createElement('tr');
      tr.dataset.fn = name;
      const sw = cell('td', NAMES[name] || name, 'fn');
      sw.style.borderLeftColor = COLOURS[name]; // CSSOM: allowed by the content security policy
      const argmin = T.argmin_f.data[a];
      const edge = Math.abs(argmin) >= f.meta.stats_range[1] - 1e-6;
      tr.append(
        sw,
        cell('td', `${exact(T.max_df.data[a])} (${where(T.argmax_df.data[a], T.argmax_df_last.data[a])})`, 'max-df'),
        cell('td', edge ? `${fmt(T.min_f.data[a], 4)} (${t(`${ID}.edge`)})` : `${fmt(T.min_f.data[a], 6)} (x = ${fmt(argmin, 4)})`, 'min-f'),
        cell('td', exact(T.f0.data[a]), 'f0'),
        cell('td', exact(T.df0.data[a]), 'df0'),
        cell('td', exact(T.probe.data[2 * a]), 'fp'),
        cell('td', exact(T.probe.data[2 * a + 1]), 'dfp'),
      );
      return tr;
    });
    table.replaceChildren(head, ...body);
    if (!names.length) table.replaceChildren(cell('caption', t(`${ID}.none`)));
  }

  const draw = throttleFrame(() => {
    const f = last;
    if (!f || !f.tensors.f) return;
    const T = f.tensors;
    // Markers: the lowest point of each f (when it is inside the range) and the top of each f'.
    chart(pF.chart, T.f, { x: T.argmin_f, y: T.min_f }, f.meta.x_range, f.meta.probe);
    chart(pDf.chart, T.df, { x: T.argmax_df, y: T.max_df }, f.meta.x_range, f.meta.probe, T.df0);
    drawTable(f);
  });

  return {
    frame(f) { last = f; draw(); },
    relabel() { for (const p of [pF, pDf, pTab]) p.relabel(); draw(); },
  };
}
