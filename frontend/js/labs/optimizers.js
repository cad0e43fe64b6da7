// View of `optimizers`: five optimizers race as arms of the training dashboard. On a 2-D
// surface their paths are drawn on the contour (the contour is the server's torch grid, the
// paths its recorded x, y scalars); on the MLP each arm's decision boundary. The race card
// holds every arm's own learning rate and β's (live) and its first step in learning rates,
// where Adam without bias correction lurches 3.16·lr. Every number is the server's.
import { addStrings, pick, t } from '../core/i18n.js';
import { rows2d } from '../core/frame.js';
import { dashboard } from '../components/dashboard.js';
import { panel } from '../components/panel.js';
import { mapGrid } from '../components/mapGrid.js';
import { linspace } from '../components/heatmap.js';
import { baseLayout, COLORS, CONFIG, finite, fmt, Plotly, throttleFrame } from '../components/plot.js';
import { el } from '../core/dom.js';

export const stylesheet = '/css/labs/optimizers.css';

addStrings({
  en: {
    'optimizers.loss_chart': 'Loss (log scale)',
    'optimizers.loss': 'loss',
    'optimizers.step_chart': 'Step size ÷ learning rate (largest coordinate, log scale)',
    'optimizers.step_lr': 'step / lr',
    'optimizers.paths': 'Paths on the loss contour',
    'optimizers.paths_hint': 'Every arm starts at the same point (○). The contour is log₁₀(f + 0.01) on the server\'s grid; ★ is the minimum. The paths are the points each optimizer visited.',
    'optimizers.boundaries': 'Each arm\'s decision boundary (P(class 1), same start weights)',
    'optimizers.boundaries_hint': 'Every arm begins from the same weights and sees the same batches; only the optimizer differs.',
    'optimizers.card': 'The race card: each optimizer its own learning rate',
    'optimizers.card_hint': 'Change a learning rate or β: it applies at once (live), the optimizer keeps its state. Editing a learning rate switches the form to “my own”.',
    'optimizers.arm': 'optimizer',
    'optimizers.lr': 'lr',
    'optimizers.beta1': 'β1',
    'optimizers.beta2': 'β2',
    'optimizers.first': 'first step',
    'optimizers.now': 'step now',
    'optimizers.loss_now': 'loss',
    'optimizers.times_lr': '{x} × lr',
    'optimizers.first_none': 'press ▶ or step',
    'optimizers.lurch': 'Adam without bias correction: first step {x} × lr. m and v start at 0, so after one step m = (1−β1)·g and v = (1−β2)·g²: the ratio is (1−β1)/√(1−β2) = 0.1/√0.001 with torch\'s betas. Adam divides m by 1−β1ᵗ and v by 1−β2ᵗ, and steps ≈ lr.',
    'optimizers.rms_note': 'RMSProp has no bias correction either: its first step is {x} × lr.',
    'optimizers.defaults': 'torch.optim.Adam defaults',
    'optimizers.defaults_value': 'lr {lr}, betas ({b1}, {b2}), eps {eps}',
    'optimizers.rms_defaults': 'torch.optim.RMSprop defaults',
    'optimizers.rms_defaults_value': 'lr {lr}, alpha {alpha}, eps {eps}',
    'optimizers.first_row': '{arm}: first step',
    'optimizers.noise_on': 'gradient noise σ = {s}',
    'optimizers.batch_on': 'mini-batches of {n}',
    'optimizers.noise': 'noise',
    'optimizers.full_batch': 'full batch ({n})',
    'optimizers.exact': 'exact gradient',
    'optimizers.diverged': 'diverged',
    'optimizers.mode.tuned': 'learning rates tuned for this surface',
    'optimizers.mode.torch': 'torch\'s default learning rates',
    'optimizers.mode.custom': 'my own learning rates',
  },
  zh: {
    'optimizers.loss_chart': '损失（对数坐标）',
    'optimizers.loss': '损失',
    'optimizers.step_chart': '步长 ÷ 学习率（最大的坐标变化，对数坐标）',
    'optimizers.step_lr': '步长 / lr',
    'optimizers.paths': '等高线上的路径',
    'optimizers.paths_hint': '所有选手从同一点出发（○）。等高线是服务器网格上的 log₁₀(f + 0.01)；★ 是最小值。路径就是每个优化器走过的点。',
    'optimizers.boundaries': '各选手的决策边界（P(第 1 类)，起点权重相同）',
    'optimizers.boundaries_hint': '每个选手从同一组权重出发、看同样的批次；只有优化器不同。',
    'optimizers.card': '赛程卡：每个优化器各有自己的学习率',
    'optimizers.card_hint': '改学习率或 β 立即生效（实时），优化器的状态保留。改学习率会把表单切换到“我自己设”。',
    'optimizers.arm': '优化器',
    'optimizers.lr': '学习率',
    'optimizers.beta1': 'β1',
    'optimizers.beta2': 'β2',
    'optimizers.first': '第一步',
    'optimizers.now': '当前步长',
    'optimizers.loss_now': '损失',
    'optimizers.times_lr': '{x} × lr',
    'optimizers.first_none': '按 ▶ 或单步',
    'optimizers.lurch': '没有偏差修正的 Adam：第一步是 {x} × lr。m 和 v 从 0 开始，一步之后 m = (1−β1)·g，v = (1−β2)·g²：比值是 (1−β1)/√(1−β2)，用 torch 的 betas 就是 0.1/√0.001。Adam 把 m 除以 1−β1ᵗ、v 除以 1−β2ᵗ，步长 ≈ lr。',
    'optimizers.rms_note': 'RMSProp 也没有偏差修正：它的第一步是 {x} × lr。',
    'optimizers.defaults': 'torch.optim.Adam 的默认值',
    'optimizers.defaults_value': 'lr {lr}，betas ({b1}, {b2})，eps {eps}',
    'optimizers.rms_defaults': 'torch.optim.RMSprop 的默认值',
    'optimizers.rms_defaults_value': 'lr {lr}，alpha {alpha}，eps {eps}',
    'optimizers.first_row': '{arm}：第一步',
    'optimizers.noise_on': '梯度噪声 σ = {s}',
    'optimizers.batch_on': '小批量 {n} 个样本',
    'optimizers.noise': '噪声',
    'optimizers.full_batch': '全批量（{n} 个）',
    'optimizers.exact': '精确梯度',
    'optimizers.diverged': '已发散',
    'optimizers.mode.tuned': '为这个曲面调好的学习率',
    'optimizers.mode.torch': 'torch 的默认学习率',
    'optimizers.mode.custom': '我自己设的学习率',
  },
});

const MAX_PATH = 4000; // points drawn per path (the rows are all kept)
const N_ARMS = 5;
const BETAS = { momentum: ['beta1'], rmsprop: ['beta2'], adam: ['beta1', 'beta2'], adam_no_bias: ['beta1', 'beta2'] };
const LR_RANGE = [1e-5, 3], BETA_RANGE = [0, 0.9999];
const CONTOUR_SCALE = [[0, '#ffffff'], [0.35, '#dfe7f2'], [0.7, '#a9b8cc'], [1, '#6e7f96']];

const ADAPTIVE = new Set(['rmsprop', 'adam', 'adam_no_bias']); // steps measured in lr: ≈ 1 is normal
const times = (x) => t('optimizers.times_lr', { x: fmt(x, 4) });

export default function mount(root, ctx) {
  const { store } = ctx;
  root.innerHTML = '';
  const view = el('div', 'optimizers-view');
  root.append(view);

  let last = null; // the latest frame
  const armsOf = (f) => (f && f.meta && f.meta.arms) || [];

  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'optimizers.loss_chart', keys: [{ key: 'loss', name: 'optimizers.loss' }], logY: true },
      { title: 'optimizers.step_chart', keys: [{ key: 'step_lr', name: 'optimizers.step_lr' }], logY: true, kept: false },
    ],
    readout: (f) => readoutRows(f),
    armTitles: true, // "Adam without bias correction", in the page's language
  });

  // -- the race card ------------------------------------------------------------------------
  const pCard = panel(dash.picturesEl, 'optimizers.card', { chart: false, hint: 'optimizers.card_hint', wide: true });
  pCard.el.classList.add('opt-card');
  const tableWrap = el('div', 'opt-table-wrap');
  const table = el('table', 'opt-table');
  const thead = el('thead');
  const tbody = el('tbody');
  table.append(thead, tbody);
  tableWrap.append(table);
  const lurch = el('p', 'opt-lurch');
  lurch.hidden = true;
  lurch.setAttribute('role', 'status');
  const rmsNote = el('p', 'opt-note');
  rmsNote.hidden = true;
  const mode = el('p', 'opt-mode');
  pCard.body.append(mode, tableWrap, lurch, rmsNote);

  const cells = []; // per arm: {row, name, lr, beta1, beta2, first, now, loss}
  function header() {
    const tr = el('tr');
    for (const k of ['arm', 'lr', 'first', 'now', 'loss_now', 'beta1', 'beta2']) tr.append(el('th', null, t(`optimizers.${k}`)));
    thead.replaceChildren(tr);
  }
  header();

  function numberInput(kind, field, range, label) {
    const input = el('input', `opt-${field.split('_').pop()}`);
    input.type = 'number';
    input.step = 'any';
    input.min = String(range[0]);
    input.max = String(range[1]);
    input.dataset.field = field;
    input.setAttribute('aria-label', label);
    input.onchange = () => {
      const v = Number(input.value);
      if (!Number.isFinite(v) || v < range[0] || v > range[1]) { input.setCustomValidity('out of range'); input.reportValidity(); return; }
      input.setCustomValidity('');
      const p = { [field]: v };
      if (field.endsWith('_lr') && ctx.params().lr_mode !== 'custom') {
        // Switch to my own learning rates, starting from the ones each arm runs with now.
        p.lr_mode = 'custom';
        for (const a of armsOf(last)) if (a.kind && `${a.kind}_lr` !== field) p[`${a.kind}_lr`] = a.lr;
      }
      ctx.setParams(p);
    };
    return input;
  }

  function buildCard(arms) {
    tbody.replaceChildren();
    cells.length = 0;
    arms.forEach((a, i) => {
      const row = el('tr');
      row.dataset.arm = String(i);
      row.dataset.kind = a.kind;
      const name = el('th', 'opt-name');
      name.scope = 'row';
      const sw = el('span', 'opt-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      const label = el('span', null, pick(a.title) || a.label);
      name.append(sw, label);
      const tdLr = el('td');
      const lr = numberInput(a.kind, `${a.kind}_lr`, LR_RANGE, `${pick(a.title) || a.label} ${t('optimizers.lr')}`);
      tdLr.append(lr);
      const betas = {};
      const tds = ['beta1', 'beta2'].map((b) => {
        const td = el('td');
        if ((BETAS[a.kind] || []).includes(b)) {
          betas[b] = numberInput(a.kind, `${a.kind}_${b}`, BETA_RANGE, `${pick(a.title) || a.label} ${t(`optimizers.${b}`)}`);
          td.append(betas[b]);
        } else td.textContent = '–';
        return td;
      });
      const first = el('td', 'opt-first');
      const now = el('td', 'opt-now');
      const loss = el('td', 'opt-loss');
      row.append(name, tdLr, first, now, loss, ...tds); // the first step beside the lr: a phone sees both
      tbody.append(row);
      cells.push({ row, label, lr, betas, first, now, loss });
    });
    setReadOnly();
  }

  function setReadOnly() {
    const ro = store.get('role') !== 'driver' || !!store.get('readOnly');
    for (const c of cells) for (const i of [c.lr, ...Object.values(c.betas)]) i.disabled = ro;
  }
  store.on('role', setReadOnly);
  store.on('readOnly', setReadOnly);

  const setValue = (input, v) => { if (document.activeElement !== input && finite(v)) input.value = String(v); };

  function drawCard(f) {
    const arms = armsOf(f);
    const sig = arms.map((a) => a.kind).join(',');
    if (sig !== cells.map((c) => c.row.dataset.kind).join(',')) buildCard(arms);
    const s = f.scalars || {};
    arms.forEach((a, i) => {
      const c = cells[i];
      const key = (k) => s[`arm.${i}.${k}`];
      setValue(c.lr, a.lr);
      for (const [b, input] of Object.entries(c.betas)) setValue(input, a[b]);
      c.first.textContent = finite(a.first_step_lr) ? `${times(a.first_step_lr)} (${fmt(a.first_step, 3)})` : t('optimizers.first_none');
      c.first.classList.toggle('warn', ADAPTIVE.has(a.kind) && finite(a.first_step_lr) && a.first_step_lr > 1.5);
      c.now.textContent = finite(key('step_lr')) ? times(key('step_lr')) : '–';
      c.loss.textContent = a.diverged ? t('optimizers.diverged') : fmt(key('loss'));
      c.row.classList.toggle('diverged', !!a.diverged);
    });
    const m = f.meta || {};
    const noise = !m.noise ? t('optimizers.exact')
      : m.surface === 'mlp' ? t('optimizers.batch_on', { n: m.batch }) : t('optimizers.noise_on', { s: fmt(m.noise_sigma, 3) });
    mode.textContent = `${t(`optimizers.mode.${m.lr_mode || 'tuned'}`)} · ${noise}`;
    const nb = arms.find((a) => a.kind === 'adam_no_bias');
    lurch.hidden = !(nb && finite(nb.first_step_lr));
    if (!lurch.hidden) lurch.textContent = t('optimizers.lurch', { x: fmt(nb.first_step_lr, 4) });
    const rms = arms.find((a) => a.kind === 'rmsprop');
    rmsNote.hidden = !(rms && finite(rms.first_step_lr));
    if (!rmsNote.hidden) rmsNote.textContent = t('optimizers.rms_note', { x: fmt(rms.first_step_lr, 4) });
  }

  function readoutRows(f) {
    const m = f.meta || {};
    const out = [];
    const d = m.torch_defaults || {};
    if (d.Adam) {
      out.push({ label: t('optimizers.defaults'), value: t('optimizers.defaults_value', { lr: String(d.Adam.lr), b1: d.Adam.betas[0], b2: d.Adam.betas[1], eps: String(d.Adam.eps) }) });
    }
    if (d.RMSprop) out.push({ label: t('optimizers.rms_defaults'), value: t('optimizers.rms_defaults_value', { lr: String(d.RMSprop.lr), alpha: d.RMSprop.alpha, eps: String(d.RMSprop.eps) }) });
    armsOf(f).forEach((a) => {
      if (finite(a.first_step_lr)) out.push({ label: t('optimizers.first_row', { arm: pick(a.title) || a.label }), value: times(a.first_step_lr), warn: ADAPTIVE.has(a.kind) && a.first_step_lr > 1.5 });
    });
    return out;
  }

  // -- paths on the contour (2-D surfaces) --------------------------------------------------
  const pPaths = panel(dash.picturesEl, 'optimizers.paths', { hint: 'optimizers.paths_hint', wide: true });
  pPaths.el.classList.add('opt-paths');
  const paths = Array.from({ length: N_ARMS }, () => ({ x: [], y: [] })); // every recorded point
  let surfaceKey = null;
  let plotted = false;

  function pathTraces(names) {
    return names.map((name, i) => ({
      type: 'scatter', mode: 'lines', x: [], y: [], name, line: { color: COLORS[i % COLORS.length], width: 2 },
    }));
  }

  function drawContour(f) {
    const m = f.meta;
    const z = f.tensors.surface;
    const [[x0, x1], [y0, y1]] = m.extent;
    const [rows, cols] = z.shape;
    const names = armsOf(f).map((a) => pick(a.title) || a.label);
    const traces = [
      {
        type: 'contour', z: rows2d(z), x: linspace(x0, x1, cols), y: linspace(y0, y1, rows),
        colorscale: CONTOUR_SCALE, ncontours: 22, contours: { coloring: 'heatmap', showlines: true },
        line: { color: 'rgba(60,70,90,0.35)', width: 0.6 }, showscale: true,
        colorbar: { thickness: 10, title: { text: 'log₁₀(f+0.01)', side: 'right' } }, hoverinfo: 'x+y+z', name: 'f',
      },
      ...pathTraces(names),
      { type: 'scatter', mode: 'markers', x: [], y: [], marker: { size: 11, color: COLORS.slice(0, N_ARMS), line: { color: '#fff', width: 1.5 } }, showlegend: false, hoverinfo: 'x+y', name: 'now' },
      { type: 'scatter', mode: 'markers', x: [m.start[0]], y: [m.start[1]], marker: { size: 13, symbol: 'circle-open', color: '#222', line: { width: 2 } }, showlegend: false, hoverinfo: 'x+y', name: 'start' },
      { type: 'scatter', mode: 'markers', x: [m.minimum[0]], y: [m.minimum[1]], marker: { size: 15, symbol: 'star', color: '#ffb000', line: { color: '#000', width: 1 } }, showlegend: false, hoverinfo: 'x+y', name: 'min' },
    ];
    const layout = baseLayout({
      xaxis: { title: { text: 'x' }, range: [x0, x1], zeroline: false },
      yaxis: { title: { text: 'y' }, range: [y0, y1], zeroline: false },
      margin: { l: 48, r: 10, t: 10, b: 44 },
      showlegend: true,
      legend: { orientation: 'h', y: -0.18, x: 0 },
      uirevision: surfaceKey,
    });
    Plotly.react(pPaths.chart, traces, layout, CONFIG);
    plotted = true;
  }

  const drawPaths = throttleFrame(() => {
    if (!plotted) return;
    const xs = [], ys = [];
    for (const p of paths) {
      const stride = Math.max(1, Math.ceil(p.x.length / MAX_PATH));
      const px = [], py = [];
      for (let i = 0; i < p.x.length; i += stride) { px.push(p.x[i]); py.push(p.y[i]); }
      if (p.x.length && (p.x.length - 1) % stride) { px.push(p.x[p.x.length - 1]); py.push(p.y[p.y.length - 1]); }
      xs.push(px);
      ys.push(py);
    }
    const idx = paths.map((_, i) => i + 1);
    Plotly.restyle(pPaths.chart, { x: xs, y: ys }, idx);
  });

  function drawNow(f) {
    if (!plotted) return;
    const s = f.scalars || {};
    const nx = [], ny = [];
    for (let i = 0; i < N_ARMS; i++) { nx.push(s[`arm.${i}.x`] ?? null); ny.push(s[`arm.${i}.y`] ?? null); }
    Plotly.restyle(pPaths.chart, { x: [nx], y: [ny] }, [N_ARMS + 1]);
  }

  // -- the MLP: each arm's boundary ---------------------------------------------------------
  const pBound = panel(dash.picturesEl, 'optimizers.boundaries', { chart: false, hint: 'optimizers.boundaries_hint', wide: true });
  pBound.el.classList.add('opt-boundaries');
  const boundEl = el('div');
  pBound.body.append(boundEl);
  let bounds = null; // made at the first MLP frame: on a phone, three maps a row

  function drawBoundaries(f) {
    const arms = armsOf(f);
    const maps = [];
    arms.forEach((a, i) => {
      const b = f.tensors[`arm.${i}.boundary`];
      if (b) maps.push({ data: b.data, offset: 0, rows: b.shape[0], cols: b.shape[1], group: 0 });
    });
    if (!maps.length) return;
    if (!bounds) {
      const columns = root.clientWidth < 600 ? 3 : N_ARMS;
      bounds = mapGrid(boundEl, { colormap: 'diverging', range: [0, 1], flipRows: true, columns, maxCell: 150, minCell: 60 });
    }
    bounds.draw(maps, { mapLabels: arms.map((a) => pick(a.title) || a.label), rowTitle: 'x₂', colTitle: 'x₁' });
  }

  function showSurface(isMlp) {
    pPaths.el.hidden = isMlp;
    pBound.el.hidden = !isMlp;
  }
  showSurface(ctx.params().surface === 'mlp');

  function addRows(newRows) {
    for (const { values } of newRows) {
      for (let i = 0; i < N_ARMS; i++) {
        const x = values[`arm.${i}.x`], y = values[`arm.${i}.y`];
        if (finite(x) && finite(y)) { paths[i].x.push(x); paths[i].y.push(y); }
      }
    }
  }

  function frame(f) {
    last = f;
    const m = f.meta || {};
    dash.onFrame(f); // the dashboard names the arms by their zh/en titles
    if (m.surface) showSurface(m.surface === 'mlp');
    if (f.tensors.surface) {
      const key = JSON.stringify([m.surface, m.extent]);
      if (key !== surfaceKey || !plotted) { surfaceKey = key; drawContour(f); drawPaths(); }
      drawNow(f);
    }
    if (m.surface === 'mlp') drawBoundaries(f);
    if (armsOf(f).length) drawCard(f);
  }

  return {
    frame,
    scalars(rows) {
      dash.onScalars(rows);
      addRows(rows);
      drawPaths();
    },
    reset() {
      dash.reset();
      for (const p of paths) { p.x = []; p.y = []; }
      drawPaths();
    },
    params(p) {
      showSurface(p.surface === 'mlp');
    },
    relabel() {
      header();
      for (const p of [pCard, pPaths, pBound]) p.relabel();
      if (last) {
        cells.length = 0; // rebuild the card's names in the new language
        surfaceKey = null;
      }
      dash.relabel();
      if (last) frame(last);
    },
  };
}
