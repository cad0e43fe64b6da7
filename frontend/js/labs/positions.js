// View of `positions`: one small decoder with five kinds of positions (NoPE, sinusoidal,
// learned, RoPE, ALiBi) trained side by side at length L and tested at a longer length.
// The dashboard draws loss and held-out accuracy inside and past L by arm; this view adds
// the extrapolation curve (accuracy by position, every arm) with the survival table the
// server's numbers fill, RoPE's layout check (as trained, converted, mixed: loss, accuracy
// and the example's output) and RoPE's wavelengths at the chosen θ. The page only draws.
import { addStrings, currentLang, pick, t } from '../core/i18n.js';
import { add, el, setText } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, throttleCost, whenPlotly } from '../components/plot.js';
import { tryBar } from '../components/tryBar.js';

addStrings({
  en: {
    'positions.loss': 'Training loss by arm (length L, same batches, same seed)',
    'positions.train_loss': 'loss',
    'positions.acc_in': 'Held-out accuracy inside L',
    'positions.acc_past': 'Held-out accuracy past L (positions never trained on)',
    'positions.acc': 'accuracy',
    'positions.try': 'Try',
    'positions.try_base': 'Train at 32, test at 128',
    'positions.try_small_theta': 'RoPE θ = 100',
    'positions.try_big_theta': 'RoPE θ = 10⁶',
    'positions.try_long': 'Test at 512',
    'positions.causal_off': 'Remove the causal mask',
    'positions.causal_on': 'Put the causal mask back',
    'positions.curve': 'Which scheme survives past L: accuracy by position',
    'positions.curve_hint': 'Each arm on {n} held-out sequences of length {T}, scored at step {step}: the fraction right at every position. Left of the dashed line is the length it trained at (L = {L}); right of it, positions it never saw. Dotted: chance ({chance}).',
    'positions.headline': 'Trained at L = {L}, tested at {T} (task: name the token {lag} places back).',
    'positions.survivors': 'Holding past L: {names}.',
    'positions.none_survive': 'No arm holds past L yet.',
    'positions.arm': 'arm',
    'positions.inside': 'inside L',
    'positions.past': 'past L',
    'positions.verdict': 'verdict past L',
    'positions.holds': 'holds to {T}',
    'positions.breaks': 'breaks at position {p}',
    'positions.not_learned': 'not learned inside L yet',
    'positions.nope': 'NoPE has no position vector at all. With the causal mask, token t sees t tokens, itself included: that count is its only clue to where it is. Without the mask every token sees the same set: NoPE cannot tell which token sat k places back, and can only guess the sequence’s most frequent symbol (that scores {bag} here: dash-dot line).',
    'positions.mask_on': 'Causal mask: on.',
    'positions.mask_off': 'Causal mask: off.',
    'positions.x': 'position',
    'positions.y': 'accuracy',
    'positions.layouts': 'RoPE’s two layouts: one network up to a permutation',
    'positions.layouts_hint': 'rotate_half pairs feature j with j + d/2; interleaved pairs 2i with 2i+1. Converted: every head’s q and k features permuted so the pairs line up, then run in the other layout. Mixed: the same weights run in the other layout as they are, as when a checkpoint is loaded into code that pairs its features differently. On {n} held-out sequences of length L.',
    'positions.trained_as': 'The RoPE arm trains with {layout}.',
    'positions.diff': 'largest |logit difference| after converting: {d} (logits up to {s})',
    'positions.agree': 'the same network (rounding)',
    'positions.run': 'run',
    'positions.loss_col': 'loss',
    'positions.acc_col': 'accuracy',
    'positions.run_trained': 'as trained ({layout})',
    'positions.run_converted': 'converted to {layout}',
    'positions.run_mixed': 'mixed: the same weights as {layout}',
    'positions.example': 'The first held-out sequence, position by position (graded positions marked right or wrong):',
    'positions.input': 'input',
    'positions.target': 'target',
    'positions.other_layout': 'Train with {layout} instead',
    'positions.waves': 'RoPE’s wavelengths at the chosen θ',
    'positions.waves_hint': 'Feature pair i turns a full circle every 2π·θ^(2i/d) positions (d = {d} per head). At θ = {theta}, {n} of {m} pairs turn slower than L = {L}: in training they only ever visit part of their circle. Raise or lower θ and compare where the RoPE arm’s curve breaks.',
    'positions.pair': 'feature pair i',
    'positions.wavelength': 'positions per turn',
    'positions.line_L': 'L',
    'positions.line_T': 'test length',
  },
  zh: {
    'positions.loss': '各变体的训练损失（长度 L，同样的批、同样的随机种子）',
    'positions.train_loss': '损失',
    'positions.acc_in': '留出集准确率：L 以内',
    'positions.acc_past': '留出集准确率：L 以外（从没训练过的位置）',
    'positions.acc': '准确率',
    'positions.try': '试试',
    'positions.try_base': '在 32 上训练，在 128 上测试',
    'positions.try_small_theta': 'RoPE θ = 100',
    'positions.try_big_theta': 'RoPE θ = 10⁶',
    'positions.try_long': '在 512 上测试',
    'positions.causal_off': '去掉因果掩码',
    'positions.causal_on': '把因果掩码加回来',
    'positions.curve': '超过 L 之后，哪种位置编码还管用：逐位置的准确率',
    'positions.curve_hint': '每个变体在 {n} 条长度 {T} 的留出序列上、第 {step} 步时的成绩：每个位置答对的比例。虚线左边是训练用的长度（L = {L}），右边是它从没见过的位置。点线：随机猜测的水平（{chance}）。',
    'positions.headline': '在 L = {L} 上训练，在 {T} 上测试（任务：答出前面第 {lag} 个 token）。',
    'positions.survivors': '过了 L 仍然成立：{names}。',
    'positions.none_survive': '还没有哪个变体在 L 以外成立。',
    'positions.arm': '变体',
    'positions.inside': 'L 以内',
    'positions.past': 'L 以外',
    'positions.verdict': '过了 L 之后',
    'positions.holds': '一直成立到 {T}',
    'positions.breaks': '在位置 {p} 失效',
    'positions.not_learned': 'L 以内还没学会',
    'positions.nope': 'NoPE 根本没有位置向量。有因果掩码时，第 t 个 token 看得见 t 个 token（包括它自己）：这个数目是它知道自己在哪儿的唯一线索。去掉掩码，每个 token 看到的是同一个集合：NoPE 分不出前面第 k 个是谁，只能猜序列里出现最多的那个符号（在这里能得 {bag}：点划线）。',
    'positions.mask_on': '因果掩码：开。',
    'positions.mask_off': '因果掩码：关。',
    'positions.x': '位置',
    'positions.y': '准确率',
    'positions.layouts': 'RoPE 的两种配对方式：换个排列就是同一个网络',
    'positions.layouts_hint': 'rotate_half 把第 j 维和第 j + d/2 维配对；interleaved 把第 2i 维和第 2i+1 维配对。转换：把每个头的 q、k 特征按排列重排，让配对对上，再用另一种方式运行。混用：同样的权重原样用另一种方式运行，就像把检查点装进了配对方式不同的代码。在 {n} 条长度 L 的留出序列上。',
    'positions.trained_as': 'RoPE 这个变体用 {layout} 训练。',
    'positions.diff': '转换后 logit 的最大差 |Δ|：{d}（logit 最大到 {s}）',
    'positions.agree': '同一个网络（舍入误差）',
    'positions.run': '运行方式',
    'positions.loss_col': '损失',
    'positions.acc_col': '准确率',
    'positions.run_trained': '训练时的样子（{layout}）',
    'positions.run_converted': '转换成 {layout}',
    'positions.run_mixed': '混用：同样的权重按 {layout} 运行',
    'positions.example': '第一条留出序列，逐个位置（评分的位置标出对错）：',
    'positions.input': '输入',
    'positions.target': '答案',
    'positions.other_layout': '改用 {layout} 训练',
    'positions.waves': '所选 θ 下 RoPE 的波长',
    'positions.waves_hint': '第 i 对特征每隔 2π·θ^(2i/d) 个位置转一整圈（每个头 d = {d}）。在 θ = {theta} 下，{m} 对里有 {n} 对转得比 L = {L} 还慢：训练时它们只走过自己圆周的一部分。调大或调小 θ，比较 RoPE 那条曲线在哪里失效。',
    'positions.pair': '特征对 i',
    'positions.wavelength': '转一圈的位置数',
    'positions.line_L': 'L',
    'positions.line_T': '测试长度',
  },
});

export const stylesheet = '/css/labs/positions.css';
export const lazyPlotly = true; // tables first; the curves when plotly comes

const SCENARIOS = {
  base: { train_len: 32, test_len: 128, rope_theta: 10000, causal: true },
  small_theta: { rope_theta: 100 },
  big_theta: { rope_theta: 1e6 },
  long: { test_len: 512 },
};
const RUNS = ['trained', 'converted', 'mixed'];
const pct = (v) => (typeof v === 'number' && Number.isFinite(v) ? `${(100 * v).toFixed(1)}%` : '–');
const theta = (v) => (v >= 1e4 ? v.toExponential(0).replace('e+', 'e') : fmt(v, 3));

// An arm's name: its label in en, its title on a zh page ("Learned" → 学习的位置向量（绝对）).
const armName = (a) => (currentLang() === 'zh' && pick(a.title)) || a.label;

export default function mount(root, ctx) {
  root.innerHTML = '';
  const view = el('div', 'pos-view');
  root.append(view);
  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'positions.loss', keys: [{ key: 'loss', name: 'positions.train_loss' }], logY: true },
      { title: 'positions.acc_in', keys: [{ key: 'acc_in', name: 'positions.acc', markers: true }], kept: false },
      { title: 'positions.acc_past', keys: [{ key: 'acc_past', name: 'positions.acc', markers: true }] },
    ],
    armTitles: 'zh', // "Learned", "Sinusoidal" are English words: zh pages name them in zh
  });
  const pics = dash.picturesEl;
  const after = dash.grid;
  const tries = tryBar(pics, ctx, { prefix: 'positions', scenarios: SCENARIOS, toggle: { param: 'causal', on: 'positions.causal_on', off: 'positions.causal_off' } });

  // -- the extrapolation curve and who survives -------------------------------------------------
  const pCurve = panel(pics, 'positions.curve', { chart: false, wide: true });
  pCurve.el.classList.add('pos-curve');
  const headline = add(pCurve.body, 'p', 'pos-headline');
  const survivors = add(pCurve.body, 'p', 'pos-survivors');
  const curveEl = add(pCurve.body, 'div', 'chart pos-curve-chart');
  const curveHint = add(pCurve.body, 'p', 'hint');
  const table = add(pCurve.body, 'table', 'pos-table');
  const thead = add(table, 'thead');
  const tbody = add(table, 'tbody');
  const nope = add(pCurve.body, 'p', 'pos-nope');

  // -- RoPE's layouts --------------------------------------------------------------------------
  const pLayout = panel(after, 'positions.layouts', { chart: false, wide: true });
  pLayout.el.classList.add('pos-layouts');
  const layoutHint = add(pLayout.body, 'p', 'hint');
  const trainedAs = add(pLayout.body, 'p', 'pos-trained-as');
  const diffEl = add(pLayout.body, 'p', 'pos-diff');
  const runs = add(pLayout.body, 'table', 'pos-table pos-runs');
  const exampleNote = add(pLayout.body, 'p', 'pos-example-note');
  const exampleEl = add(pLayout.body, 'div', 'pos-example');
  const layoutBtn = add(pLayout.body, 'button', 'pos-layout-btn');
  layoutBtn.type = 'button';
  layoutBtn.dataset.act = 'rope-layout';
  layoutBtn.onclick = () => ctx.setParams({ rope_layout: ctx.params().rope_layout === 'rotate_half' ? 'interleaved' : 'rotate_half' });

  // -- RoPE's wavelengths ----------------------------------------------------------------------
  const pWaves = panel(after, 'positions.waves', { chart: false });
  pWaves.el.classList.add('pos-waves');
  const wavesEl = add(pWaves.body, 'div', 'chart');
  const wavesHint = add(pWaves.body, 'p', 'hint');

  let last = null;

  const drawCurve = throttleCost(() => {
    const m = last.meta;
    const data = m.arms.map((a, i) => {
      const c = last.tensors[`arm.${i}.acc_by_pos`];
      const y = c ? Array.from(c.data, (v) => (Number.isFinite(v) ? v : null)) : [];
      return { type: 'scatter', mode: 'lines', name: armName(a), x: y.map((_, p) => p), y, line: { color: COLORS[i % COLORS.length], width: 1.6 }, hovertemplate: `${armName(a)} · %{x}: %{y:.2f}<extra></extra>` };
    });
    const line = (x0, x1, y0, y1, dash) => ({ type: 'line', x0, x1, y0, y1, line: { color: '#555', width: 1, dash } });
    const layout = baseLayout({
      showlegend: true,
      legend: { orientation: 'h', x: 0, xanchor: 'left', y: 1.02, yanchor: 'bottom', font: { size: 11 } },
      margin: { l: 48, r: 10, t: 30, b: 40 },
      xaxis: { title: { text: t('positions.x') }, range: [0, m.test_len - 1] },
      yaxis: { title: { text: t('positions.y') }, range: [0, 1.05] },
      shapes: [line(m.train_len - 0.5, m.train_len - 0.5, 0, 1.05, 'dash'), line(0, m.test_len - 1, m.chance, m.chance, 'dot'), line(0, m.test_len - 1, m.bag_accuracy, m.bag_accuracy, 'dashdot')],
      annotations: [{ x: m.train_len - 0.5, y: 1.05, text: `L = ${m.train_len}`, showarrow: false, xanchor: 'left', yanchor: 'top', font: { size: 11 } }],
    });
    whenPlotly((P) => P.react(curveEl, data, layout, CONFIG));
  });

  function verdict(a, m) {
    if (!a.learned) return ['', t('positions.not_learned')];
    if (a.breaks_at === null || a.breaks_at === undefined) return ['ok', t('positions.holds', { T: m.test_len })];
    return ['warn', t('positions.breaks', { p: a.breaks_at })];
  }

  function drawTable() {
    const m = last.meta;
    setText(headline, t('positions.headline', { L: m.train_len, T: m.test_len, lag: m.lag }));
    const alive = m.arms.filter((a) => a.learned && (a.breaks_at === null || a.breaks_at === undefined));
    setText(survivors, alive.length ? t('positions.survivors', { names: alive.map(armName).join(currentLang() === 'zh' ? '、' : ', ') }) : t('positions.none_survive'));
    survivors.dataset.survivors = alive.map((a) => a.label).join(',');
    survivors.classList.toggle('none', !alive.length);
    setText(curveHint, t('positions.curve_hint', { n: m.n_eval, T: m.test_len, L: m.train_len, step: m.scored_at, chance: fmt(m.chance, 2) }));
    thead.replaceChildren(el('tr'));
    for (const h of ['positions.arm', 'positions.inside', 'positions.past', 'positions.verdict']) thead.firstChild.append(el('th', null, t(h)));
    tbody.replaceChildren(...m.arms.map((a, i) => {
      const tr = el('tr');
      tr.dataset.arm = a.label;
      const name = el('td', 'pos-name');
      const sw = el('i', 'pos-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      name.append(sw, el('b', null, a.label), el('small', null, ` ${pick(a.title)}`));
      const [cls, text] = verdict(a, m);
      tr.append(name, el('td', 'pos-in', pct(a.acc_in)), el('td', 'pos-past', pct(a.acc_past)), el('td', `pos-verdict ${cls}`, text));
      return tr;
    }));
    setText(nope, `${t('positions.nope', { bag: pct(m.bag_accuracy) })} ${t(m.causal ? 'positions.mask_on' : 'positions.mask_off')}`);
  }

  function tokenRow(label, tokens, marks) {
    const row = el('div', 'pos-row');
    row.append(el('span', 'pos-row-label', label));
    tokens.forEach((tok, i) => row.append(el('span', `pos-tok ${marks ? marks[i] : ''}`, tok)));
    return row;
  }

  function drawLayouts() {
    const rope = last.meta.arms.find((a) => a.scheme === 'rope');
    const c = rope && rope.layout_check;
    if (!c) return;
    setText(layoutHint, t('positions.layouts_hint', { n: last.meta.n_eval }));
    setText(trainedAs, t('positions.trained_as', { layout: c.layout }));
    const agree = c.max_abs_diff <= 1e-4 * Math.max(c.max_abs_logit, 1e-12);
    setText(diffEl, `${t('positions.diff', { d: c.max_abs_diff.toExponential(1), s: fmt(c.max_abs_logit, 3) })}${agree ? ` — ${t('positions.agree')}` : ''}`);
    diffEl.className = `pos-diff ${agree ? 'ok' : 'warn'}`;
    diffEl.dataset.agree = String(agree);
    const head = el('tr');
    for (const h of ['positions.run', 'positions.loss_col', 'positions.acc_col']) head.append(el('th', null, t(h)));
    const body = RUNS.map((k) => {
      const tr = el('tr');
      tr.dataset.run = k;
      const layout = k === 'trained' ? c.layout : c.other;
      tr.append(el('td', null, t(`positions.run_${k}`, { layout })), el('td', 'pos-loss', fmt(c[k].loss, 3)), el('td', 'pos-acc', pct(c[k].acc)));
      return tr;
    });
    runs.replaceChildren(el('thead'), el('tbody'));
    runs.firstChild.append(head);
    runs.lastChild.append(...body);
    setText(exampleNote, t('positions.example'));
    const marks = (out) => out.map((tok, i) => (c.graded[i] ? (tok === c.target[i] ? 'ok' : 'bad') : 'off'));
    exampleEl.replaceChildren(
      tokenRow(t('positions.input'), c.input),
      tokenRow(t('positions.target'), c.target, c.graded.map((g) => (g ? '' : 'off'))),
      ...RUNS.map((k) => {
        const r = tokenRow(t(`positions.run_${k}`, { layout: k === 'trained' ? c.layout : c.other }), c[k].output, marks(c[k].output));
        r.dataset.run = k;
        return r;
      }),
    );
    setText(layoutBtn, t('positions.other_layout', { layout: c.other }));
    layoutBtn.hidden = ctx.store.get('role') !== 'driver';
  }

  const drawWaves = throttleCost(() => {
    const m = last.meta;
    const w = m.wavelengths;
    const x = w.map((_, i) => i);
    const line = (y, dash, text) => ({ type: 'line', xref: 'paper', x0: 0, x1: 1, y0: y, y1: y, line: { color: '#555', width: 1, dash }, label: { text, textposition: 'end', font: { size: 10 } } });
    const data = [{ type: 'bar', x, y: w, marker: { color: w.map((v) => (v > m.train_len ? COLORS[3] : '#b9bec7')) }, hovertemplate: `i = %{x}: %{y:.1f}<extra></extra>` }];
    const layout = baseLayout({
      margin: { l: 56, r: 10, t: 10, b: 40 },
      xaxis: { title: { text: t('positions.pair') }, dtick: 1 },
      yaxis: { title: { text: t('positions.wavelength') }, type: 'log', dtick: 1 },
      shapes: [line(m.train_len, 'dash', `${t('positions.line_L')} = ${m.train_len}`), line(m.test_len, 'dot', `${t('positions.line_T')} = ${m.test_len}`)],
    });
    whenPlotly((P) => P.react(wavesEl, data, layout, CONFIG));
  });

  function drawWaveText() {
    const m = last.meta;
    setText(wavesHint, t('positions.waves_hint', { theta: theta(m.rope_theta), d: 2 * m.wavelengths.length, n: m.slow_pairs, m: m.wavelengths.length, L: m.train_len }));
  }

  function draw() {
    if (!last) return;
    tries.draw();
    drawTable();
    drawCurve();
    drawLayouts();
    drawWaveText();
    drawWaves();
  }

  ctx.store.on('role', () => { tries.draw(); if (last) drawLayouts(); });
  ctx.store.on('params', () => tries.draw());
  tries.draw();

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || f.meta.arms[0].acc_in === undefined) return;
      last = f;
      draw();
      root.dataset.step = String(f.step);
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); },
    relabel() {
      dash.relabel();
      for (const p of [pCurve, pLayout, pWaves]) p.relabel();
      draw();
    },
  };
}
