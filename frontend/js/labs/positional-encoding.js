// View of `positional-encoding`: the sinusoidal table as a heatmap and as clock hands,
// PE·PEᵀ and its offset profile, R(k), RoPE scores and rotating q/k hands, the ×√d norms,
// 猫追狗 vs 狗追猫 with and without positions, and this lab's own small GPT learning its
// position embeddings. Every number is the server's; the position slider only picks which
// row of the server's table the clocks show.
import { addStrings } from '../core/i18n.js';
import { rows2d } from '../core/frame.js';
import { bars } from '../components/bars.js';
import { clockHands } from '../components/clockHands.js';
import { heatmap } from '../components/heatmap.js';
import { lineChart } from '../components/lineChart.js';
import { matrixView } from '../components/matrixView.js';
import { panel } from '../components/panel.js';
import { readout } from '../components/readout.js';
import { baseLayout, COLORS, CONFIG, fmt, Plotly } from '../components/plot.js';

const L = 'positional-encoding';
addStrings({
  en: {
    [`${L}.pe`]: 'Sinusoidal encoding PE: positions × dimensions',
    [`${L}.clocks`]: 'Each (sin, cos) pair is a clock hand',
    [`${L}.clock_hint`]: 'Clock i is the pair (PE[p, 2i], PE[p, 2i+1]) = (sin pω_i, cos pω_i); it turns by ω_i = base^(−2i/d) per position: the first hands spin fast, the last barely move. Together they name the position, like the hands of a clock.',
    [`${L}.position`]: 'position p',
    [`${L}.turn`]: '▶ turn',
    [`${L}.stop`]: '❚❚ stop',
    [`${L}.sim`]: 'PE · PEᵀ: the same along every diagonal',
    [`${L}.profile`]: 'PE(p) · PE(p + k) against the offset k (the same for every p)',
    [`${L}.rotation`]: 'R(k): PE(p + k) = R(k) · PE(p)',
    [`${L}.rope`]: 'RoPE scores (R_m q) · (R_n k): constant along diagonals',
    [`${L}.rope_clocks`]: 'RoPE turns q (at m = p) and k (at n = p − k) together',
    [`${L}.rope_hint`]: 'Move p: both hands turn, the angle between them stays the same, so q·k depends only on m − n.',
    [`${L}.norms`]: 'Why token embeddings are multiplied by √d_model',
    [`${L}.norms_hint`]: 'Embeddings initialised with std 1/√d have norm ≈ 1, the table’s rows have norm √(d/2): without ×√d the positions drown the tokens.',
    [`${L}.perm`]: '猫追狗 vs 狗追猫 through a small Transformer (no causal mask)',
    [`${L}.perm_hint`]: 'Without positions, attention sees a set: swapping 猫 and 狗 only swaps their output rows. With position embeddings the outputs really differ.',
    [`${L}.no_pos`]: 'no positions',
    [`${L}.with_pos`]: 'with positions',
    [`${L}.checks`]: 'Numerical checks (torch, float32)',
    [`${L}.c_offset`]: 'max |PE(p)·PE(p+k) − PE(0)·PE(k)|',
    [`${L}.c_rotation`]: 'max |R(k)·PE(p) − PE(p+k)|',
    [`${L}.c_orth`]: 'max |R(k)·R(k)ᵀ − I|',
    [`${L}.c_rope`]: 'max |score(m, n) − score(m+s, n+s)|',
    [`${L}.c_rope_norm`]: 'max | |R_m q| − |q| |',
    [`${L}.c_perm`]: 'no positions: max |out(狗追猫) − permuted out(猫追狗)|',
    [`${L}.c_withpos`]: 'with positions: the same difference',
    [`${L}.of`]: 'values up to {v}',
    [`${L}.learned`]: 'This lab’s own small GPT: learned position embeddings',
    [`${L}.learned_sim`]: 'Cosine similarity of its learned position embeddings',
    [`${L}.learned_hint`]: 'Press play: this lab trains its own small GPT ({p} parameters, learned positions as in GPT-2) on the “{task}” task and shows its position table as it learns. Positions ≥ {a} hold the answer.',
    [`${L}.train`]: 'Its training: loss and accuracy',
    [`${L}.loss`]: 'loss',
    [`${L}.acc`]: 'token accuracy',
    [`${L}.seq_acc`]: 'sequence accuracy',
    [`${L}.position_axis`]: 'position',
    [`${L}.dim_axis`]: 'dimension',
    [`${L}.offset_axis`]: 'offset k',
    [`${L}.task_sort`]: 'sort',
    [`${L}.task_reverse`]: 'reverse',
    [`${L}.task_copy`]: 'copy',
    [`${L}.pair`]: 'pair {i}',
  },
  zh: {
    [`${L}.pe`]: '正弦位置编码 PE：位置 × 维度',
    [`${L}.clocks`]: '每一对（sin, cos）是一根时钟指针',
    [`${L}.clock_hint`]: '第 i 个钟是 (PE[p, 2i], PE[p, 2i+1]) = (sin pω_i, cos pω_i)；每走一个位置转 ω_i = base^(−2i/d)：前面的指针转得快，后面的几乎不动。所有指针合起来就说出了位置，就像钟表的时针、分针、秒针。',
    [`${L}.position`]: '位置 p',
    [`${L}.turn`]: '▶ 转起来',
    [`${L}.stop`]: '❚❚ 停',
    [`${L}.sim`]: 'PE · PEᵀ：每条对角线上都一样',
    [`${L}.profile`]: 'PE(p) · PE(p + k) 随偏移 k 的变化（与 p 无关）',
    [`${L}.rotation`]: 'R(k)：PE(p + k) = R(k) · PE(p)',
    [`${L}.rope`]: 'RoPE 分数 (R_m q) · (R_n k)：沿对角线不变',
    [`${L}.rope_clocks`]: 'RoPE 让 q（在 m = p）和 k（在 n = p − k）一起转',
    [`${L}.rope_hint`]: '拖动 p：两根指针一起转，夹角不变，所以 q·k 只取决于 m − n。',
    [`${L}.norms`]: '为什么词向量要乘 √d_model',
    [`${L}.norms_hint`]: '按标准差 1/√d 初始化的词向量长度约为 1，位置表每行长度是 √(d/2)：不乘 √d，位置就把 token 淹没了。',
    [`${L}.perm`]: '“猫追狗”和“狗追猫”经过一个小 Transformer（没有因果掩码）',
    [`${L}.perm_hint`]: '没有位置时，注意力看到的只是一个集合：交换“猫”和“狗”只会交换它们的输出行。加上位置向量，输出才真的不同。',
    [`${L}.no_pos`]: '没有位置',
    [`${L}.with_pos`]: '有位置',
    [`${L}.checks`]: '数值检验（torch，float32）',
    [`${L}.c_offset`]: 'max |PE(p)·PE(p+k) − PE(0)·PE(k)|',
    [`${L}.c_rotation`]: 'max |R(k)·PE(p) − PE(p+k)|',
    [`${L}.c_orth`]: 'max |R(k)·R(k)ᵀ − I|',
    [`${L}.c_rope`]: 'max |score(m, n) − score(m+s, n+s)|',
    [`${L}.c_rope_norm`]: 'max | |R_m q| − |q| |',
    [`${L}.c_perm`]: '没有位置：max |out(狗追猫) − 换序后的 out(猫追狗)|',
    [`${L}.c_withpos`]: '有位置：同样的差',
    [`${L}.of`]: '数值最大 {v}',
    [`${L}.learned`]: '本实验自己的小 GPT：学到的位置向量',
    [`${L}.learned_sim`]: '学到的位置向量两两的余弦相似度',
    [`${L}.learned_hint`]: '按“播放”：本实验训练自己的一个小 GPT（{p} 个参数，像 GPT-2 一样学习位置向量），任务是“{task}”，边学边显示它的位置表。位置 ≥ {a} 是答案。',
    [`${L}.train`]: '它的训练：损失与准确率',
    [`${L}.loss`]: '损失',
    [`${L}.acc`]: '逐 token 准确率',
    [`${L}.seq_acc`]: '整句准确率',
    [`${L}.position_axis`]: '位置',
    [`${L}.dim_axis`]: '维度',
    [`${L}.offset_axis`]: '偏移 k',
    [`${L}.task_sort`]: '排序',
    [`${L}.task_reverse`]: '倒序',
    [`${L}.task_copy`]: '复制',
    [`${L}.pair`]: '第 {i} 对',
  },
});

export const stylesheet = '/css/labs/positional-encoding.css'; // the shell loads it

const MAX_CLOCKS = 32;

export default function mount(root, { t }) {
  root.innerHTML = '';
  const grid = document.createElement('div');
  grid.className = 'view-grid pe-view';
  root.append(grid);
  const k = (s) => `${L}.${s}`;

  // What play trains comes right after the sinusoidal table, in the first screen: its loss,
  // its learned position embeddings and their similarities (they were ~2,000 px below the
  // fold, after every fixed picture). The fixed pictures follow.
  const pPe = panel(grid, k('pe'));
  const pSim = panel(grid, k('sim'));
  const pTrain = panel(grid, k('train'));
  const pLearned = panel(grid, k('learned'));
  const pLsim = panel(grid, k('learned_sim'));
  const pClock = panel(grid, k('clocks'), { chart: false, hint: k('clock_hint') });
  const pProfile = panel(grid, k('profile'));
  const pRot = panel(grid, k('rotation'));
  const pRope = panel(grid, k('rope'));
  const pPerm = panel(grid, k('perm'), { chart: false, hint: k('perm_hint') });
  const pNorms = panel(grid, k('norms'), { hint: k('norms_hint') });
  const pRopeClock = panel(grid, k('rope_clocks'), { chart: false, hint: k('rope_hint') });
  const pChecks = panel(grid, k('checks'), { chart: false });
  for (const p of [pPe, pClock, pPerm, pLearned]) p.el.classList.add('pe-wide');
  for (const p of [pRopeClock, pChecks]) p.el.classList.add('pe-full');
  pChecks.el.classList.add('pe-checks');
  pTrain.el.classList.add('pe-train');
  const learnedHint = document.createElement('p');
  learnedHint.className = 'hint';
  pLearned.el.append(learnedHint);

  const diverging = [[0, '#2f6fdf'], [0.5, '#ffffff'], [1, '#e8702a']];
  const hmPe = heatmap(pPe.chart, { colorscale: diverging, xTitle: t(k('dim_axis')), yTitle: t(k('position_axis')) });
  const hmSim = heatmap(pSim.chart, { colorscale: 'Viridis', xTitle: t(k('position_axis')), yTitle: t(k('position_axis')) });
  const hmRot = heatmap(pRot.chart, { colorscale: diverging, xTitle: t(k('dim_axis')), yTitle: t(k('dim_axis')) });
  const hmRope = heatmap(pRope.chart, { colorscale: 'Viridis', xTitle: 'n', yTitle: 'm' });
  const hmLearned = heatmap(pLearned.chart, { colorscale: diverging, xTitle: t(k('dim_axis')), yTitle: t(k('position_axis')) });
  const hmLsim = heatmap(pLsim.chart, { colorscale: diverging, xTitle: t(k('position_axis')), yTitle: t(k('position_axis')) });
  // Matrices read top-down: row 0 (position 0) at the top.
  const axes = [[pPe, 'dim_axis', 'position_axis'], [pSim, 'position_axis', 'position_axis'], [pRot, 'dim_axis', 'dim_axis'],
    [pRope, null, null], [pLearned, 'dim_axis', 'position_axis'], [pLsim, 'position_axis', 'position_axis']];
  const relabelAxes = () => {
    for (const [p, x, y] of axes) {
      Plotly.relayout(p.chart, { 'yaxis.autorange': 'reversed', ...(x ? { 'xaxis.title.text': t(k(x)), 'yaxis.title.text': t(k(y)) } : {}) });
    }
  };
  relabelAxes();
  Plotly.newPlot(pProfile.chart, [], baseLayout({}), CONFIG);
  const normBars = bars(pNorms.chart, { color: COLORS[0] });
  const checks = readout(pChecks.body);
  const train = lineChart(pTrain.chart, {
    traces: [
      { key: 'loss', name: t(k('loss')) },
      { key: 'accuracy', name: t(k('acc')) },
      { key: 'seq_accuracy', name: t(k('seq_acc')), dash: 'dot' },
    ],
    xTitle: 'step',
  });

  // The position slider and its animation: they only choose a row of the server's tables.
  const ctl = document.createElement('div');
  ctl.className = 'pe-clock-ctl';
  const posLabel = document.createElement('label');
  const posInput = document.createElement('input');
  posInput.type = 'range';
  posInput.min = '0';
  posInput.value = '0';
  posInput.id = 'pe-position';
  const posOut = document.createElement('output');
  const turn = document.createElement('button');
  turn.type = 'button';
  turn.className = 'pe-turn';
  posLabel.htmlFor = 'pe-position';
  ctl.append(posLabel, posInput, posOut, turn);
  pClock.body.append(ctl);
  const clocks = clockHands(pClock.body);
  const ropeClocks = clockHands(pRopeClock.body);

  // 猫追狗 / 狗追猫 matrices.
  const permGrid = document.createElement('div');
  permGrid.className = 'pe-perm';
  pPerm.body.append(permGrid);
  const permHeads = [];
  const permViews = {};
  for (const [rowKey, names] of [['no_pos', ['nopos_a', 'nopos_b']], ['with_pos', ['withpos_a', 'withpos_b']]]) {
    const h = document.createElement('h4');
    permGrid.append(h);
    permHeads.push([h, rowKey]);
    const row = document.createElement('div');
    row.className = 'pe-perm-row';
    permGrid.append(row);
    for (const n of names) permViews[n] = matrixView(row, { name: '', digits: 2 });
  }

  let last = null;
  let staticKey = null;
  let placed = false; // the slider starts at p = k once
  let playing = false;
  let timer = null;

  const setTurnLabel = () => { turn.textContent = playing ? t(k('stop')) : t(k('turn')); };
  turn.onclick = () => {
    playing = !playing;
    setTurnLabel();
    clearInterval(timer);
    if (playing) {
      timer = setInterval(() => {
        const n = Number(posInput.max) + 1;
        posInput.value = String((Number(posInput.value) + 1) % n);
        drawClocks();
      }, 250);
    }
  };
  posInput.oninput = () => drawClocks();
  setTurnLabel();

  function pairsAt(tensor, p, pairs) {
    // pe is [n, d] with (sin, cos) interleaved: pair i = (PE[p, 2i], PE[p, 2i+1]).
    const d = tensor.shape[1];
    const row = tensor.data.subarray(p * d, (p + 1) * d);
    return Array.from({ length: pairs }, (_, i) => ({ x: row[2 * i + 1], y: row[2 * i] }));
  }

  function vecAt(tensor, p, i) {
    // rope_q / rope_k are [n, d/2, 2]: pair i at position p.
    const [, h] = tensor.shape;
    const at = (p * h + i) * 2;
    return { x: tensor.data[at], y: tensor.data[at + 1] };
  }

  function drawClocks() {
    if (!last) return;
    const T = last.tensors;
    const m = last.meta;
    const p = Number(posInput.value);
    posLabel.textContent = t(k('position'));
    posOut.textContent = String(p);
    const nPairs = Math.min(MAX_CLOCKS, m.d_model / 2);
    const hands = pairsAt(T.pe, p, nPairs);
    clocks.draw(hands.map((h, i) => ({
      label: String(i),
      hands: [{ ...h, color: COLORS[1] }],
    })), { scale: 1, label: t(k('clocks')) });
    const n = p - m.offset;
    ropeClocks.draw(Array.from({ length: Math.min(16, m.d_model / 2) }, (_, i) => ({
      label: t(k('pair'), { i }),
      hands: [
        { ...vecAt(T.rope_q, p, i), color: COLORS[0] },
        ...(n >= 0 ? [{ ...vecAt(T.rope_k, n, i), color: COLORS[1] }] : []),
      ],
    })), { label: t(k('rope_clocks')), perClock: true });
  }

  function drawStatic(f) {
    const T = f.tensors;
    const m = f.meta;
    const key = JSON.stringify([m.n_ctx, m.d_model, m.offset, m.base, document.documentElement.lang]);
    if (key === staticKey) return;
    staticKey = key;
    if (!placed) { placed = true; posInput.value = String(Math.min(m.offset, m.n_ctx - 1)); } // k's hand shows from p = k
    posInput.max = String(m.n_ctx - 1);
    if (Number(posInput.value) > m.n_ctx - 1) posInput.value = String(m.n_ctx - 1);
    hmPe.draw(T.pe);
    hmPe.overlay(0, { zmin: [-1], zmax: [1] });
    hmSim.draw(T.pe_sim);
    const r = T.rotation;
    const big = Math.max(Math.abs(r.min), Math.abs(r.max));
    hmRot.draw(r);
    hmRot.overlay(0, { zmin: [-big], zmax: [big] });
    hmRope.draw(T.rope_scores);
    const prof = Array.from(T.pe_profile.data);
    Plotly.react(pProfile.chart, [{
      type: 'scatter', mode: 'lines+markers', x: prof.map((_, i) => i), y: prof,
      line: { color: COLORS[0], width: 2 }, marker: { size: 4 },
    }, {
      type: 'scatter', mode: 'markers', x: [m.offset], y: [prof[m.offset]],
      marker: { size: 12, color: COLORS[1], symbol: 'diamond' }, hoverinfo: 'x+y',
    }], baseLayout({ xaxis: { title: { text: t(k('offset_axis')) } }, yaxis: { title: { text: 'PE(p)·PE(p+k)' } } }), CONFIG);
    normBars.draw(T.norms.labels, Array.from(T.norms.data), [COLORS[5], COLORS[0], COLORS[1]]);
    const c = m.checks;
    checks.show([
      { label: t(k('c_offset')), value: c.offset_error, note: t(k('of'), { v: fmt(m.d_model / 2, 3) }) },
      { label: `${t(k('c_rotation'))} (k = ${m.offset})`, value: c.rotation_error },
      { label: t(k('c_orth')), value: c.rotation_orthogonal },
      { label: t(k('c_rope')), value: c.rope_error },
      { label: t(k('c_rope_norm')), value: c.rope_norm_error },
      { label: t(k('c_perm')), value: c.perm_error, note: t(k('of'), { v: fmt(c.perm_scale, 3) }) },
      { label: t(k('c_withpos')), value: c.withpos_diff, warn: false },
    ]);
    for (const [h, rk] of permHeads) h.textContent = t(k(rk));
    const dims = (n) => Array.from({ length: n }, (_, i) => `d${i}`);
    for (const [name, idx] of [['nopos_a', 0], ['nopos_b', 1], ['withpos_a', 0], ['withpos_b', 1]]) {
      permViews[name].setName(m.sentences[idx]);
      permViews[name].draw({ rows: T[name], rowLabels: m.tokens[idx], colLabels: dims(T[name].shape[1]) });
    }
    drawClocks();
  }

  function drawLearned(f) {
    const T = f.tensors;
    const g = f.meta.gpt;
    hmLearned.draw(T.hook_pos_embed);
    hmLsim.draw(T.pos_sim);
    hmLsim.overlay(0, { zmin: [-1], zmax: [1] });
    learnedHint.textContent = t(k('learned_hint'), { p: g.params.toLocaleString(), task: t(k(`task_${g.task}`)), a: g.answer_start });
  }

  return {
    frame(f) {
      if (!f.meta || !f.meta.checks) return;
      last = f;
      drawStatic(f);
      drawLearned(f);
    },
    scalars(rows) { train.add(rows); },
    reset() { train.clear(); },
    relabel() {
      for (const p of [pPe, pClock, pSim, pProfile, pRot, pRope, pRopeClock, pChecks, pNorms, pPerm, pLearned, pLsim, pTrain]) p.relabel();
      staticKey = null;
      setTurnLabel();
      relabelAxes();
      if (last) { drawStatic(last); drawLearned(last); }
    },
  };
}
