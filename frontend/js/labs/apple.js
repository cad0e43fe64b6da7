// View of `apple`: the loss parabola with the tangent at x, four buttons that each run one
// torch call on the server (forward / backward / step / zero_grad), a log of what .grad did,
// the loss curve and the learning rate beside its critical value 2/curvature. Every number
// comes from the server; the page only draws.
import { addStrings } from '../core/i18n.js';
import { lineChart } from '../components/lineChart.js';
import { readout } from '../components/readout.js';
import { panel } from '../components/panel.js';
import { CONFIG, baseLayout, fmt, Plotly, throttleFrame } from '../components/plot.js';
import { linspace } from '../components/heatmap.js';

addStrings({
  en: {
    'apple.curve': 'Loss L(x) = (x·apples − price)² and the tangent at x',
    'apple.buttons': 'Run one torch call at a time',
    'apple.loss_chart': 'Loss per step',
    'apple.x_chart': 'x and x.grad per step',
    'apple.numbers': 'Numbers',
    'apple.forward': 'forward',
    'apple.backward': 'backward',
    'apple.step': 'step',
    'apple.zero_grad': 'zero_grad',
    'apple.c_forward': 'forward: compute pred and loss, and record the graph',
    'apple.c_backward': 'backward: x.grad += dL/dx',
    'apple.c_step': 'step: x ← x − lr · x.grad',
    'apple.c_zero': 'zero_grad: x.grad ← None',
    'apple.log_action': 'pressed',
    'apple.log_empty': 'Press forward, then backward, then step. Press forward + backward twice without zero_grad and watch x.grad pile up.',
    'apple.no_grad_note': 'x.grad is None, so step did nothing: press backward first.',
    'apple.cycle': 'play step',
    'apple.x': 'x (price of one apple)',
    'apple.pred': 'pred = x · apples',
    'apple.slope': 'slope dL/dx at x (tangent)',
    'apple.grad': 'x.grad (what step uses)',
    'apple.grad_used': 'x.grad used by the last step',
    'apple.none': 'None',
    'apple.accumulated': 'accumulated: not the slope at x',
    'apple.curvature': 'curvature d²L/dx²',
    'apple.critical': 'critical lr 2/curvature',
    'apple.one_step': 'one-step lr 1/curvature',
    'apple.optimum': 'optimum x = price / apples',
    'apple.lr': 'learning rate',
    'apple.diverges': 'above the limit: each step multiplies the error by |1 − lr·curvature| > 1',
    'apple.edge': 'exactly at the limit: x bounces between two points forever',
    'apple.stuck': 'above the limit, but x is exactly the optimum: its error is 0 in float32, so x.grad is 0 and every step keeps x where it is (0 × |1 − lr·curvature| is still 0). Press Reset to watch this lr diverge from the first guess.',
    'apple.done_hint': 'This run has taken all its steps (“Steps to train”): press Reset to run this lr from the first guess.',
    'apple.reset': 'Reset: start again from the first guess',
    'apple.stuck_short': 'above the limit, but nothing can diverge from here (below)',
    'apple.done_short': 'the run has ended (below)',
    'apple.converges': 'below the limit: converges',
    'apple.overshoots': 'converges, overshooting the optimum each step',
    'apple.lands': 'lands on the optimum in one step',
    'apple.presets': 'Try a learning rate:',
    'apple.p_half': '½ · 1/curv',
    'apple.p_one': '1/curv (one step)',
    'apple.p_edge': '2/curv (the edge)',
    'apple.p_over': '2.16/curv (diverges)',
    'apple.path': 'past x',
    'apple.now': 'x now',
    'apple.tangent': 'tangent',
    'apple.graph_ready': 'graph recorded: backward is ready',
    'apple.graph_none': 'no graph: press forward before backward',
    'apple.forgotten': 'forgotten while playing',
    'apple.forgotten_note': 'x.grad sums every past gradient, so x keeps swinging past the optimum',
  },
  zh: {
    'apple.curve': '损失 L(x) = (x·苹果数 − 总价)² 与 x 处的切线',
    'apple.buttons': '一次只执行一个 torch 调用',
    'apple.loss_chart': '每一步的损失',
    'apple.x_chart': '每一步的 x 与 x.grad',
    'apple.numbers': '数值',
    'apple.forward': 'forward',
    'apple.backward': 'backward',
    'apple.step': 'step',
    'apple.zero_grad': 'zero_grad',
    'apple.c_forward': '前向：算出 pred 和 loss，并记录计算图',
    'apple.c_backward': '反向：x.grad += dL/dx',
    'apple.c_step': '更新：x ← x − 学习率 · x.grad',
    'apple.c_zero': '清零：x.grad ← None',
    'apple.log_action': '按下',
    'apple.log_empty': '依次按 forward、backward、step。不按 zero_grad 连做两次 forward + backward，看 x.grad 越积越多。',
    'apple.no_grad_note': 'x.grad 是 None，step 什么也没做：先按 backward。',
    'apple.cycle': '播放一步',
    'apple.x': 'x（一个苹果的价格）',
    'apple.pred': 'pred = x · 苹果数',
    'apple.slope': 'x 处的斜率 dL/dx（切线）',
    'apple.grad': 'x.grad（step 用的就是它）',
    'apple.grad_used': '上一步 step 用的 x.grad',
    'apple.none': 'None',
    'apple.accumulated': '已累加：不等于 x 处的斜率',
    'apple.curvature': '曲率 d²L/dx²',
    'apple.critical': '临界学习率 2/曲率',
    'apple.one_step': '一步到位的学习率 1/曲率',
    'apple.optimum': '最优 x = 总价 / 苹果数',
    'apple.lr': '学习率',
    'apple.diverges': '超过临界值：每一步误差乘以 |1 − 学习率·曲率| > 1',
    'apple.edge': '正好在临界值：x 在两点之间永远来回跳',
    'apple.converges': '低于临界值：收敛',
    'apple.overshoots': '收敛，但每一步都跨过最优点',
    'apple.lands': '一步落在最优点',
    'apple.presets': '试试这些学习率：',
    'apple.p_half': '½ · 1/曲率',
    'apple.p_one': '1/曲率（一步）',
    'apple.p_edge': '2/曲率（临界）',
    'apple.p_over': '2.16/曲率（发散）',
    'apple.stuck': '超过了临界值，但 x 恰好就是最优点：它的误差在 float32 里正好是 0，x.grad 也是 0，每一步都让 x 原地不动（0 × |1 − 学习率·曲率| 仍是 0）。按“重置”，看这个学习率从起始猜测开始发散。',
    'apple.done_hint': '本次训练的步数已经走完（“训练步数”）：按“重置”，用这个学习率从起始猜测重新开始。',
    'apple.reset': '重置：从起始猜测重新开始',
    'apple.stuck_short': '超过临界值，但从这里什么也不会发散（见下）',
    'apple.done_short': '本次训练已结束（见下）',
    'apple.path': '走过的 x',
    'apple.now': '当前 x',
    'apple.tangent': '切线',
    'apple.graph_ready': '计算图已记录：可以 backward',
    'apple.graph_none': '没有计算图：backward 之前先 forward',
    'apple.forgotten': '播放时被忘记',
    'apple.forgotten_note': 'x.grad 把过去所有梯度加在一起，x 会一直冲过最优点来回摆',
  },
});

const ACTIONS = [
  ['forward', 'apple.c_forward'],
  ['backward', 'apple.c_backward'],
  ['step', 'apple.c_step'],
  ['zero_grad', 'apple.c_zero'],
];
const LOG_ROWS = 10;
const PATH_POINTS = 300;

export const stylesheet = '/css/labs/apple.css'; // the shell loads it

export default function mount(root, { t, store, setParams, infer, client }) {
  root.innerHTML = '';
  const grid = document.createElement('div');
  grid.className = 'view-grid apple-view';
  root.append(grid);
  const pCurve = panel(grid, 'apple.curve');
  const pButtons = panel(grid, 'apple.buttons', { chart: false });
  const pLoss = panel(grid, 'apple.loss_chart');
  const pX = panel(grid, 'apple.x_chart');
  const pRead = panel(grid, 'apple.numbers', { chart: false });

  // The four buttons, each beside the line of code it runs.
  const ops = document.createElement('ol');
  ops.className = 'apple-ops';
  const buttons = {};
  const codeNotes = {};
  for (const [action, key] of ACTIONS) {
    const li = document.createElement('li');
    li.dataset.action = action;
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.action = action;
    b.onclick = () => infer({ action });
    const code = document.createElement('code');
    const note = document.createElement('span');
    note.className = 'note';
    li.append(b, code, note);
    ops.append(li);
    buttons[action] = { b, code, li };
    codeNotes[action] = { key, note };
  }
  const status = document.createElement('p');
  status.className = 'apple-status';
  const log = document.createElement('table');
  log.className = 'apple-log';
  pButtons.body.append(ops, status, log);

  const info = readout(pRead.body);
  const presets = document.createElement('div');
  presets.className = 'apple-presets';
  pRead.body.append(presets);

  const loss = lineChart(pLoss.chart, { traces: [{ key: 'loss', name: t('loss') }], logY: true, xTitle: 'step' });
  const xs = lineChart(pX.chart, {
    traces: [
      { key: 'x', name: 'x' },
      { key: 'grad_used', name: t('apple.grad_used'), dash: 'dot' },
    ],
    xTitle: 'step',
  });
  // x (around 2) and the .grad a step used (tens) need their own y axes.
  const twoAxes = () => {
    Plotly.relayout(pX.chart, { yaxis2: { overlaying: 'y', side: 'right', zeroline: false, exponentformat: 'power', title: { text: 'x.grad' } }, 'yaxis.title.text': 'x', 'margin.r': 84 });
    Plotly.restyle(pX.chart, { yaxis: 'y2' }, [1]);
  };
  twoAxes();
  Plotly.newPlot(pCurve.chart, [], baseLayout({}), CONFIG);

  let rows = [];
  let last = null;
  let entries = []; // the action log: [{action, x, loss, grad, note}]

  const drawCurve = throttleFrame(() => {
    const f = last;
    if (!f || !f.tensors.curve) return;
    const m = f.meta;
    const c = f.tensors.curve;
    const cx = linspace(m.curve_x[0], m.curve_x[1], c.data.length);
    const path = rows.slice(-PATH_POINTS).filter((r) => Number.isFinite(r.values.x) && Number.isFinite(r.values.loss));
    const traces = [
      { type: 'scatter', mode: 'lines', x: cx, y: Array.from(c.data), line: { color: '#2f6fdf', width: 2 }, name: 'L(x)' },
      { type: 'scatter', mode: 'markers', x: path.map((r) => r.values.x), y: path.map((r) => r.values.loss), marker: { size: 6, color: 'rgba(232,112,42,0.35)' }, name: t('apple.path') },
      { type: 'scatter', mode: 'markers', x: [m.optimum], y: [0], marker: { symbol: 'star', size: 15, color: '#ffb000', line: { color: '#000', width: 1 } }, name: 'x*' },
    ];
    const tg = f.tensors.tangent;
    if (tg) {
      const [x0, y0, x1, y1] = tg.data;
      traces.push({ type: 'scatter', mode: 'lines', x: [x0, x1], y: [y0, y1], line: { color: '#c0392b', width: 2, dash: 'dash' }, name: t('apple.tangent') });
    }
    if (Number.isFinite(f.scalars.x) && Number.isFinite(f.scalars.loss)) {
      traces.push({ type: 'scatter', mode: 'markers', x: [f.scalars.x], y: [f.scalars.loss], marker: { size: 13, color: '#e8702a', line: { color: '#fff', width: 2 } }, name: t('apple.now') });
    }
    const top = Math.max(...c.data);
    Plotly.react(pCurve.chart, traces, baseLayout({
      showlegend: true,
      legend: { orientation: 'h', y: 1.14, x: 1, xanchor: 'right' },
      xaxis: { title: { text: 'x' }, range: m.curve_x, zeroline: false, exponentformat: 'power' },
      yaxis: { title: { text: 'L' }, range: [-0.08 * top, 1.08 * top], exponentformat: 'power' },
    }), CONFIG);
  });

  function drawButtons(f) {
    const m = f.meta;
    const a = fmt(m.apples), p = fmt(m.price);
    buttons.forward.code.textContent = `loss = (x * ${a} - ${p}) ** 2`;
    buttons.backward.code.textContent = 'loss.backward()';
    buttons.step.code.textContent = 'opt.step()';
    buttons.zero_grad.code.textContent = 'opt.zero_grad()';
    const ro = store.get('role') !== 'driver';
    for (const [action] of ACTIONS) {
      const { b, li } = buttons[action];
      b.textContent = t(`apple.${action}`);
      b.disabled = ro || (action === 'backward' && !m.has_graph);
      li.classList.toggle('last', m.action === action);
      codeNotes[action].note.textContent = t(codeNotes[action].key);
    }
    status.textContent = m.note === 'no_grad' ? t('apple.no_grad_note') : t(m.has_graph ? 'apple.graph_ready' : 'apple.graph_none');
    status.classList.toggle('warn', m.note === 'no_grad');
  }

  function drawLog() {
    const head = `<tr><th>${t('apple.log_action')}</th><th>x</th><th>${t('loss')}</th><th>x.grad</th></tr>`;
    if (!entries.length) {
      log.innerHTML = '';
      const cap = document.createElement('caption');
      cap.textContent = t('apple.log_empty');
      log.append(cap);
      return;
    }
    log.innerHTML = head;
    for (const e of entries) {
      const tr = document.createElement('tr');
      for (const v of [e.action === 'cycle' ? t('apple.cycle') : e.action, fmt(e.x), fmt(e.loss), e.grad === null ? t('apple.none') : fmt(e.grad)]) {
        const td = document.createElement('td');
        td.textContent = v;
        tr.append(td);
      }
      if (e.note) tr.className = 'warn';
      log.append(tr);
    }
  }

  // Why an lr above the limit shows nothing now: the run has ended, or x is exactly the
  // optimum (the server says so: its float32 error is 0). Both are undone by Reset.
  function stuck(lr, m, short = false) {
    if (lr * m.curvature <= 2 + 1e-9) return null; // below the limit: its own note says what happens
    if (store.get('state') === 'done') return t(short ? 'apple.done_short' : 'apple.done_hint');
    if (m.exact_optimum) return t(short ? 'apple.stuck_short' : 'apple.stuck');
    return null;
  }

  function lrNote(lr, m) {
    const r = lr * m.curvature;
    const why = stuck(lr, m, true);
    if (why) return `⚠ ${why}`;
    if (r > 2 + 1e-9) return t('apple.diverges');
    if (Math.abs(r - 2) <= 1e-9) return t('apple.edge');
    if (Math.abs(r - 1) <= 1e-9) return t('apple.lands');
    return r > 1 ? t('apple.overshoots') : t('apple.converges');
  }

  function drawInfo(f) {
    const m = f.meta, s = f.scalars;
    const lr = Number.isFinite(s.lr) ? s.lr : store.get('params').lr;
    const grad = 'grad' in s ? s.grad : null;
    const accumulated = grad !== null && Number.isFinite(s.slope) && Math.abs(grad - s.slope) > 1e-6 * Math.max(1, Math.abs(s.slope));
    info.show([
      { label: t('apple.x'), value: s.x, warn: !Number.isFinite(s.x) },
      { label: t('apple.pred'), value: s.pred },
      { label: t('loss'), value: s.loss, warn: !Number.isFinite(s.loss) },
      { label: t('apple.slope'), value: s.slope },
      { label: t('apple.grad'), value: grad === null ? t('apple.none') : grad, note: accumulated ? `⚠ ${t('apple.accumulated')}` : '', warn: accumulated },
      { label: t('apple.lr'), value: lr, note: lrNote(lr, m), warn: lr * m.curvature > 2 + 1e-9 || !!stuck(lr, m) },
      ...(store.get('params').forget_zero_grad ? [{ label: 'zero_grad', value: t('apple.forgotten'), note: t('apple.forgotten_note'), warn: true }] : []),
      { label: t('apple.critical'), value: m.critical_lr },
      { label: t('apple.one_step'), value: m.one_step_lr },
      { label: t('apple.curvature'), value: m.curvature },
      { label: t('apple.optimum'), value: m.optimum },
    ]);
    const ro = store.get('role') !== 'driver';
    const choices = [['apple.p_half', 0.5], ['apple.p_one', 1], ['apple.p_edge', 2], ['apple.p_over', 2.16]];
    const reset = [];
    if (stuck(lr, m)) {
      reset.push(Object.assign(document.createElement('p'), { className: 'apple-stuck', textContent: stuck(lr, m) }));
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'apple-reset';
      b.textContent = t('apple.reset');
      b.disabled = ro;
      b.onclick = () => client.control('reset');
      reset.push(b);
    }
    presets.replaceChildren(Object.assign(document.createElement('span'), { textContent: t('apple.presets') }), ...choices.map(([key, k]) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = `${t(key)} = ${fmt(k / m.curvature, 3)}`;
      b.disabled = ro;
      b.onclick = () => setParams({ lr: Math.min(0.25, Math.max(0.001, k / m.curvature)) });
      return b;
    }), ...reset);
  }

  store.on('state', () => { if (last) drawInfo(last); }); // done: the hint to reset

  function show(f) {
    last = f;
    drawCurve();
    drawButtons(f);
    drawInfo(f);
  }

  return {
    frame(f) { show(f); },
    infer(f) {
      // A pressed `step` is recorded: scrubbing back to it replays its frame, not the press.
      if (!f.replay) {
        const s = f.scalars;
        entries = [...entries, { action: f.meta.action, x: s.x, loss: s.loss, grad: 'grad' in s ? s.grad : null, note: f.meta.note }].slice(-LOG_ROWS);
        drawLog();
      }
      show(f);
    },
    scalars(newRows) {
      rows.push(...newRows);
      if (rows.length > 4 * PATH_POINTS) rows = rows.slice(-PATH_POINTS);
      loss.add(newRows);
      xs.add(newRows);
      drawCurve();
    },
    reset() {
      rows = [];
      entries = [];
      loss.clear();
      xs.clear();
      twoAxes();
      drawLog();
    },
    params() { if (last) { drawButtons(last); drawInfo(last); } },
    relabel() {
      for (const p of [pCurve, pButtons, pLoss, pX, pRead]) p.relabel();
      drawLog();
      if (last) show(last);
    },
  };
}
