// View of `depth`: plain, residual and reference stacks trained side by side. The dashboard
// draws the loss and held-out accuracy by arm and the gradient waterfall (the trainer's
// per-layer norms, output at the top of each band, input at the bottom); this view adds the
// scenarios a teacher clicks through, each arm's per-layer activation histograms, the
// symmetry picture (layers.1's weight matrix and its row spread), the init facts for the
// chosen shape and the BatchNorm comparison. Every number comes from the server.
import { addStrings, currentLang, pick, t } from '../core/i18n.js';
import { setText, el } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { tryBar } from '../components/tryBar.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { fmt } from '../components/plot.js';

addStrings({
  en: {
    'depth.loss': 'Training loss by arm (same batches, same seed)',
    'depth.train_loss': 'loss',
    'depth.acc': 'Held-out accuracy (eval mode)',
    'depth.test_acc': 'accuracy',
    'depth.try': 'Try',
    'depth.try_vanish': '30 sigmoid layers, N(0, 0.01)',
    'depth.try_zeros': 'Zero init (tanh, 2 layers)',
    'depth.try_const': 'Constant 0.5 (tanh, 3 layers)',
    'depth.try_bn': 'Add BatchNorm',
    'depth.noise_on': 'Break the symmetry with tiny noise',
    'depth.noise_off': 'Take the noise away',
    'depth.hist': 'Activations of every layer on held-out points',
    'depth.hist_hint': 'One row per layer (input layer at the bottom), one column per value bin over the arm’s range (named above its map); colour: how many values fall in the bin (each row scaled to its fullest bin).',
    'depth.layer': 'layer',
    'depth.hist_tip': '{arm} · layer {layer} · {a} to {b} · {v} of the row’s peak',
    'depth.sym': 'Symmetry: layers.1’s weight matrix',
    'depth.sym_hint': 'Rows are units. With a constant init every unit computes the same number and receives the same gradient, so the rows stay identical for ever. With all-zero weights and tanh/ReLU every weight’s gradient is exactly 0: only the output bias learns.',
    'depth.spread': 'largest |row − row 0|',
    'depth.identical': 'rows identical',
    'depth.differ': 'rows differ',
    'depth.nonzero': 'non-zero weights',
    'depth.out_bias': 'output bias',
    'depth.facts': 'Init scales for a {fi} → {fo} layer (torch.nn.init)',
    'depth.facts_hint': 'The first column from torch.nn.init’s own fan and gain helpers; the second is what each init really draws for a [{fo}, {fi}] weight. Change fan_in and fan_out in the form.',
    'depth.rule': 'init',
    'depth.value': 'torch.nn.init',
    'depth.drawn': 'drawn',
    'depth.xavier': 'Xavier-normal std',
    'depth.kin': 'Kaiming fan_in std (ReLU)',
    'depth.kout': 'Kaiming fan_out std (ReLU)',
    'depth.bound': 'nn.Linear default: bound (uniform)',
    'depth.bn': 'BatchNorm: the text’s hand version against torch’s',
    'depth.bn_hint': 'One training step on a real batch of {b} points (x₁, x₂), momentum {m}, from running_var = 1. Both normalise with the biased variance (÷{b}); the hand version also updates running_var with it, torch with the unbiased one (÷{b1}): its batch part is {b}/{b1} = {ratio} times larger.',
    'depth.feature': 'feature',
    'depth.var_b': 'batch var ÷B',
    'depth.var_u': 'batch var ÷(B−1)',
    'depth.hand_rv': 'hand running_var',
    'depth.torch_rv': 'torch running_var',
    'depth.out_same': 'normalised batch: largest |hand − torch| = {d}',
    'depth.bn_modes': 'One held-out example’s P(class 1), {arm}: train mode in a batch of {a}: {pa}; in a batch of {b}: {pb}; eval mode (running statistics): {pe}.',
    'depth.alpha': 'residual branches scaled by α = {a}',
  },
  zh: {
    'depth.loss': '各变体的训练损失（同样的批、同样的随机种子）',
    'depth.train_loss': '损失',
    'depth.acc': '留出集准确率（eval 模式）',
    'depth.test_acc': '准确率',
    'depth.try': '试试',
    'depth.try_vanish': '30 层 sigmoid，N(0, 0.01)',
    'depth.try_zeros': '全零初始化（tanh，2 层）',
    'depth.try_const': '常数 0.5（tanh，3 层）',
    'depth.try_bn': '加上 BatchNorm',
    'depth.noise_on': '加一点噪声打破对称',
    'depth.noise_off': '去掉噪声',
    'depth.hist': '每一层在留出点上的激活值',
    'depth.hist_hint': '每行一层（输入层在最下面），每列一个取值区间，覆盖这个变体的取值范围（写在图的上方）；颜色：落在这个区间的值有多少（每行按最满的区间缩放）。',
    'depth.layer': '层',
    'depth.hist_tip': '{arm} · 第 {layer} 层 · {a} 到 {b} · 该行峰值的 {v}',
    'depth.sym': '对称性：layers.1 的权重矩阵',
    'depth.sym_hint': '每行是一个单元。常数初始化时，每个单元算出同样的数、收到同样的梯度，所以各行永远相同。权重全为零、激活为 tanh/ReLU 时，每个权重的梯度恰好为 0：只有输出层的偏置在学。',
    'depth.spread': '最大 |第 i 行 − 第 0 行|',
    'depth.identical': '各行完全相同',
    'depth.differ': '各行不同',
    'depth.nonzero': '非零权重',
    'depth.out_bias': '输出偏置',
    'depth.facts': '{fi} → {fo} 的一层的初始化尺度（torch.nn.init）',
    'depth.facts_hint': '第一列来自 torch.nn.init 自己的 fan 和 gain 函数；第二列是每种初始化给 [{fo}, {fi}] 的权重实际抽出的数。在表单里改 fan_in 和 fan_out。',
    'depth.rule': '初始化',
    'depth.value': 'torch.nn.init',
    'depth.drawn': '实际抽样',
    'depth.xavier': 'Xavier 正态的标准差',
    'depth.kin': 'Kaiming fan_in 标准差（ReLU）',
    'depth.kout': 'Kaiming fan_out 标准差（ReLU）',
    'depth.bound': 'nn.Linear 默认：均匀分布的边界',
    'depth.bn': 'BatchNorm：书里的手写版与 torch 的对比',
    'depth.bn_hint': '在一个真实的批（{b} 个点的 x₁、x₂）上训练一步，momentum {m}，running_var 从 1 开始。两者都用有偏方差（÷{b}）做归一化；手写版也用它更新 running_var，torch 用无偏方差（÷{b1}）：这一批贡献的部分大 {b}/{b1} = {ratio} 倍。',
    'depth.feature': '特征',
    'depth.var_b': '批方差 ÷B',
    'depth.var_u': '批方差 ÷(B−1)',
    'depth.hand_rv': '手写 running_var',
    'depth.torch_rv': 'torch running_var',
    'depth.out_same': '归一化后的批：最大 |手写 − torch| = {d}',
    'depth.bn_modes': '一个留出样本的 P(类别 1)，{arm}：训练模式下在 {a} 个样本的批里是 {pa}；在 {b} 个样本的批里是 {pb}；eval 模式（用 running 统计量）：{pe}。',
    'depth.alpha': '残差分支乘以 α = {a}',
  },
});

export const stylesheet = '/css/labs/depth.css';
export const lazyPlotly = true; // canvases and tables first; the curves when plotly comes


const SCENARIOS = {
  vanish: { depth: 30, activation: 'sigmoid', init: 'normal', sigma: 0.01, norm: 'none', noise: false },
  zeros: { depth: 2, activation: 'tanh', init: 'zeros', norm: 'none', noise: false },
  const: { depth: 3, activation: 'tanh', init: 'constant', constant: 0.5, norm: 'none', noise: false },
  bn: { norm: 'batchnorm' },
};

// An arm's name: its label ("plain") in en, its title on a zh page ("普通堆叠").
const armName = (a) => (currentLang() === 'zh' && pick(a.title)) || a.label;

export default function mount(root, ctx) {
  root.innerHTML = '';
  const view = el('div', 'depth-view');
  root.append(view);
  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'depth.loss', keys: [{ key: 'loss', name: 'depth.train_loss' }], logY: true },
      { title: 'depth.acc', keys: [{ key: 'test_acc', name: 'depth.test_acc', markers: true }], legend: 'low', kept: false },
    ],
    armTitles: 'zh',
  });
  const pics = dash.picturesEl;
  pics.classList.add('depth-pictures');
  const after = dash.grid;

  // -- scenarios ----------------------------------------------------------------------------
  const tries = tryBar(pics, ctx, { prefix: 'depth', scenarios: SCENARIOS, toggle: { param: 'noise', on: 'depth.noise_on', off: 'depth.noise_off' } });

  // -- activation histograms ----------------------------------------------------------------
  const pHist = panel(pics, 'depth.hist', { chart: false, wide: true });
  const histHint = el('p', 'hint');
  const histEl = el('div', 'depth-hist');
  pHist.body.append(histHint, histEl);
  let last = null;
  const hist = mapGrid(histEl, {
    colormap: 'blues', range: [0, 1], flipRows: true, maxCell: 240, minCell: 90,
    tip: (h) => {
      const a = last.meta.arms[h.map];
      const [lo, hi] = a.hist_range, w = (hi - lo) / last.tensors[`arm.${h.map}.act_hist`].shape[1];
      return t('depth.hist_tip', { arm: armName(a), layer: h.row, a: fmt(lo + h.col * w, 3), b: fmt(lo + (h.col + 1) * w, 3), v: fmt(h.value, 2) });
    },
  });

  // -- symmetry -----------------------------------------------------------------------------
  const pSym = panel(after, 'depth.sym', { chart: false, hint: 'depth.sym_hint' });
  const symFacts = el('table', 'depth-table depth-sym');
  const symEl = el('div', 'depth-weights');
  pSym.body.append(symFacts, symEl);
  const weights = mapGrid(symEl, { colormap: 'diverging', range: 'symmetric', maxCell: 150, minCell: 80 });

  // -- init facts ---------------------------------------------------------------------------
  const pFacts = panel(after, null, { chart: false });
  const factsTitle = el('h3');
  const factsHint = el('p', 'hint');
  const facts = el('table', 'depth-table depth-facts');
  pFacts.el.prepend(factsTitle);
  pFacts.body.append(facts, factsHint);

  // -- BatchNorm ----------------------------------------------------------------------------
  const pBn = panel(after, 'depth.bn', { chart: false });
  const bnHint = el('p', 'hint');
  const bnTable = el('table', 'depth-table depth-bn');
  const bnSame = el('p', 'depth-bn-same');
  const bnModes = el('p', 'depth-bn-modes');
  pBn.body.append(bnTable, bnSame, bnModes, bnHint);

  const row = (cells, head = false) => {
    const tr = el('tr');
    for (const c of cells) tr.append(el(head ? 'th' : 'td', null, c));
    return tr;
  };

  function drawBar() {
    tries.draw();
  }

  function drawHist() {
    const arms = last.meta.arms;
    const maps = [];
    arms.forEach((a, i) => {
      const h = last.tensors[`arm.${i}.act_hist`];
      if (h) maps.push({ data: h.data, rows: h.shape[0], cols: h.shape[1], group: 0 });
    });
    if (!maps.length) return;
    setText(histHint, t('depth.hist_hint'));
    hist.draw(maps, {
      mapLabels: arms.map((a) => `${armName(a)}: ${fmt(a.hist_range[0], 3)} … ${fmt(a.hist_range[1], 3)}`),
      title: (g, i) => pick(arms[i].title) || arms[i].label,
      rowTitle: t('depth.layer'),
    });
    histEl.dataset.layers = String(maps[0].rows);
  }

  function drawSym() {
    const arms = last.meta.arms;
    const head = row(['', ...arms.map(armName)], true);
    const spread = row([t('depth.spread'), ...arms.map((a) => `${a.row_spread === 0 ? '0' : a.row_spread.toExponential(2)} · ${t(a.row_spread === 0 ? 'depth.identical' : 'depth.differ')}`)]);
    spread.dataset.spread = arms.map((a) => a.row_spread).join(',');
    const nz = row([t('depth.nonzero'), ...arms.map((a) => `${a.nonzero_weights} / ${a.weights_total}`)]);
    nz.dataset.nonzero = arms.map((a) => a.nonzero_weights).join(',');
    const bias = row([t('depth.out_bias'), ...arms.map((a) => a.out_bias.map((v) => fmt(v, 3)).join(', '))]);
    const alpha = arms.find((a) => a.alpha);
    symFacts.replaceChildren(head, spread, nz, bias);
    if (alpha) symFacts.append(row([t('depth.alpha', { a: fmt(alpha.alpha, 3) }), ...arms.map((a) => (a.alpha ? '✓' : ''))]));
    const list = [];
    arms.forEach((a, i) => {
      const w = last.tensors[`arm.${i}.weight`];
      if (w) list.push({ data: w.data, rows: w.shape[0], cols: w.shape[1], group: 0 });
    });
    weights.draw(list, { mapLabels: arms.map(armName), rowTitle: t('mg.row'), colTitle: t('mg.col') });
  }

  function drawFacts() {
    const f = last.meta.init_facts;
    setText(factsTitle, t('depth.facts', { fi: f.fan_in, fo: f.fan_out }));
    setText(factsHint, t('depth.facts_hint', { fi: f.fan_in, fo: f.fan_out }));
    const lines = [['depth.xavier', 'xavier_normal'], ['depth.kin', 'kaiming_fan_in'], ['depth.kout', 'kaiming_fan_out'], ['depth.bound', 'linear_default_bound']];
    facts.replaceChildren(row([t('depth.rule'), t('depth.value'), t('depth.drawn')], true), ...lines.map(([k, key]) => {
      const tr = row([t(k), f[key].toFixed(4), f[`drawn_${key}`].toFixed(4)]);
      tr.dataset.fact = key;
      return tr;
    }));
  }

  function drawBn() {
    const bn = last.meta.batchnorm;
    const b = bn.batch_size;
    setText(bnHint, t('depth.bn_hint', { b, b1: b - 1, m: bn.momentum, ratio: (b / (b - 1)).toFixed(4) }));
    const feats = bn.var_biased.map((_, j) => j);
    bnTable.replaceChildren(
      row([t('depth.feature'), ...feats.map((j) => `x${'₁₂₃₄'[j] || j}`)], true),
      row([t('depth.var_b'), ...bn.var_biased.map((v) => v.toFixed(4))]),
      row([t('depth.var_u'), ...bn.var_unbiased.map((v) => v.toFixed(4))]),
      row([t('depth.hand_rv'), ...bn.hand_running_var.map((v) => v.toFixed(4))]),
      row([t('depth.torch_rv'), ...bn.torch_running_var.map((v) => v.toFixed(4))]),
    );
    setText(bnSame, t('depth.out_same', { d: bn.max_out_diff.toExponential(1) }));
    const arm = last.meta.arms.find((a) => a.bn_modes);
    bnModes.hidden = !arm;
    if (arm) {
      const m = arm.bn_modes;
      setText(bnModes, t('depth.bn_modes', { arm: arm.label, a: m.batch_a, b: m.batch_b, pa: m.train_a.toFixed(4), pb: m.train_b.toFixed(4), pe: m.eval.toFixed(4) }));
    }
  }

  function draw() {
    if (!last) return;
    drawBar();
    drawHist();
    drawSym();
    drawFacts();
    drawBn();
  }

  ctx.store.on('role', drawBar);
  ctx.store.on('params', drawBar);

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.init_facts) return;
      last = f;
      draw();
      root.dataset.step = String(f.step);
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); },
    relabel() {
      dash.relabel();
      for (const p of [pHist, pSym, pBn]) p.relabel();
      hist.relabel();
      weights.relabel();
      draw();
    },
  };
}
