// View of `rnn`: a character RNN learning a text. The dashboard draws the loss (train and
// held-out), the gradient's norm before clipping, the clip coefficient and the memorised
// span over steps; this view adds generation (greedy or sampled, the lab's declared input)
// with its top-k bars and memorisation meter, the training sample, the hidden state over
// time, ‖h_t‖ and the gradient through time (a waterfall of frames, and the last one beside
// its bound), the activations' derivatives, and the norm example beside the live clipping.
// Every number comes from the server; the view only draws.
import { addStrings, t } from '../core/i18n.js';
import { setText } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { baseLayout, CONFIG, fmt, Plotly } from '../components/plot.js';
import { probBars } from '../components/probBars.js';
import { waterfall } from '../components/waterfall.js';

const ID = 'rnn';
addStrings({
  en: {
    'rnn.loss': 'Loss (nats per character)', 'rnn.train': 'training batch', 'rnn.val': 'held-out tail',
    'rnn.gnorm': 'Gradient norm ‖g‖ before clipping', 'rnn.gtotal': '‖g‖ (all parameters)',
    'rnn.coef': 'Clip coefficient min(1, max_norm / ‖g‖)', 'rnn.clip_coef': 'clip coefficient',
    'rnn.mem': 'Memorised: longest sample span found verbatim in the training text', 'rnn.memorised': 'characters',
    'rnn.try': 'Try', 'rnn.try_explode': 'ReLU, W_hh × 2, no clipping', 'rnn.try_vanish': 'sigmoid (vanishing)',
    'rnn.try_tanh': 'back to tanh, clipping on', 'rnn.clip_on': 'Turn clipping on', 'rnn.clip_off': 'Turn clipping off',
    'rnn.gen': 'Generate', 'rnn.prompt': 'Prompt', 'rnn.mode': 'Decoding', 'rnn.greedy': 'greedy (argmax)',
    'rnn.sample': 'sample', 'rnn.temperature': 'Temperature', 'rnn.length': 'Characters', 'rnn.seed': 'Seed',
    'rnn.go': 'Generate', 'rnn.gen_hint': 'Click a generated character to see the candidates the model weighed there.',
    'rnn.cands': 'Candidates for character {i} (“{c}”)', 'rnn.cands_now': 'Next character after the text’s first {n} characters',
    'rnn.meter': 'Longest span found verbatim in the training text: {n} characters ({p} of {m} generated)',
    'rnn.meter_none': 'No generated character appears in the training text.',
    'rnn.sample_title': 'Sample during training (step {s}, sampled at temperature 1)',
    'rnn.threshold': 'Training loss {l} nats/char; the text’s char-RNN recipe (Adam {lr}, batch {b}, window {w}, clip {c}) fell to {th} nats/char on a novel: memorisation, not language.',
    'rnn.below': 'Below {th} nats/char: this model is reciting its text.',
    'rnn.hidden': 'Hidden state h_t over the text’s first characters',
    'rnn.hidden_hint': 'One column per character read, one row per hidden unit; colour: h_t’s value (diverging, 0 is white).',
    'rnn.unit': 'unit', 'rnn.char': 'character',
    'rnn.gen_hidden': 'Hidden state while generating (prompt, then generated characters)',
    'rnn.through': 'Through time: ‖h_t‖ and the gradient ‖∂L_T/∂h_t‖',
    'rnn.through_hint': 'On {n} fixed windows of the training text, the loss at the last step only. The bound multiplies ‖∂L_T/∂h_T‖ by (max f′ · ‖W_hh‖₂) for every step back: {f} × {w} = {r}.',
    'rnn.hnorm': '‖h_t‖', 'rnn.grad': '‖∂L_T/∂h_t‖', 'rnn.bound': 'bound', 'rnn.t': 'time step t',
    'rnn.wf': 'Gradient through time, frame by frame (rows: time step t, t = 0 at the bottom)',
    'rnn.derivs': 'Derivatives of the activations (autograd)',
    'rnn.derivs_hint': 'Backprop multiplies by f′ once per step: sigmoid′ ≤ {s}, tanh′ ≤ {t}; ReLU′ is 0 left of 0 and 1 right of it.',
    'rnn.clip': 'Which norm clipping uses',
    'rnn.clip_hint': 'A set as a real parameter’s gradient and clipped by torch.nn.utils.clip_grad_norm_ at max_norm {m}: it measures the 2-norm of all entries together (Frobenius), then scales by max_norm / ‖g‖.',
    'rnn.l1': 'entrywise L1 Σ|aᵢⱼ|', 'rnn.fro': 'Frobenius √Σaᵢⱼ² (what clipping measures)',
    'rnn.m1': 'matrix_norm(A, 1): max column sum', 'rnn.spec': 'spectral ‖A‖₂ (largest singular value)',
    'rnn.measured': 'clip_grad_norm_ returned', 'rnn.coef_ex': 'coefficient', 'rnn.clipped': 'A after clipping',
    'rnn.live': 'This run: ‖g‖ = {g}, {state}', 'rnn.live_on': 'clipped at {m} with coefficient {c}',
    'rnn.live_off': 'clipping off (at {m} the coefficient would be {c})',
    'rnn.facts': '{p} parameters · {v} characters in the vocabulary · {n} training characters',
    'rnn.err_too_short': 'Paste at least {min} characters to train on (this has {n}).',
    'rnn.err_distinct': 'The pasted text needs at least two different characters.',
    'rnn.err_window': 'The text ({n} characters) is shorter than a window of {window}: lower the window.',
    'rnn.err_empty': 'Type a prompt of at least one character.',
    'rnn.err_unknown': '“{char}” never appears in the training text, so the model has no id for it.',
  },
  zh: {
    'rnn.loss': '损失（每个字符的 nats）', 'rnn.train': '训练批', 'rnn.val': '留出的结尾部分',
    'rnn.gnorm': '裁剪前的梯度范数 ‖g‖', 'rnn.gtotal': '‖g‖（全部参数）',
    'rnn.coef': '裁剪系数 min(1, max_norm / ‖g‖)', 'rnn.clip_coef': '裁剪系数',
    'rnn.mem': '背诵计：样本中在训练文本里原样出现的最长片段', 'rnn.memorised': '字符数',
    'rnn.try': '试试', 'rnn.try_explode': 'ReLU、W_hh × 2、不裁剪', 'rnn.try_vanish': 'sigmoid（梯度消失）',
    'rnn.try_tanh': '回到 tanh、开启裁剪', 'rnn.clip_on': '开启裁剪', 'rnn.clip_off': '关闭裁剪',
    'rnn.gen': '生成', 'rnn.prompt': '开头', 'rnn.mode': '解码方式', 'rnn.greedy': '贪心（取最大）',
    'rnn.sample': '采样', 'rnn.temperature': '温度', 'rnn.length': '字符数', 'rnn.seed': '随机种子',
    'rnn.go': '生成', 'rnn.gen_hint': '点一个生成的字符，看模型在那里权衡的候选。',
    'rnn.cands': '第 {i} 个字符（“{c}”）的候选', 'rnn.cands_now': '读完文本前 {n} 个字符之后的下一个字符',
    'rnn.meter': '在训练文本里原样出现的最长片段：{n} 个字符（生成的 {m} 个中占 {p}）',
    'rnn.meter_none': '生成的字符没有一个出现在训练文本里。',
    'rnn.sample_title': '训练中的样本（第 {s} 步，温度 1 采样）',
    'rnn.threshold': '训练损失 {l} nats/字符；书里的字符 RNN 配方（Adam {lr}、批 {b}、窗口 {w}、裁剪 {c}）在一本小说上降到 {th} nats/字符：那是背诵，不是语言。',
    'rnn.below': '低于 {th} nats/字符：这个模型在背它的文本。',
    'rnn.hidden': '文本前几个字符上的隐藏状态 h_t',
    'rnn.hidden_hint': '每列是读入的一个字符，每行是一个隐藏单元；颜色：h_t 的值（发散色标，0 为白色）。',
    'rnn.unit': '单元', 'rnn.char': '字符',
    'rnn.gen_hidden': '生成时的隐藏状态（先是开头，再是生成的字符）',
    'rnn.through': '沿时间：‖h_t‖ 与梯度 ‖∂L_T/∂h_t‖',
    'rnn.through_hint': '在训练文本的 {n} 个固定窗口上，只取最后一步的损失。上界每往回一步乘一次 (max f′ · ‖W_hh‖₂)：{f} × {w} = {r}。',
    'rnn.hnorm': '‖h_t‖', 'rnn.grad': '‖∂L_T/∂h_t‖', 'rnn.bound': '上界', 'rnn.t': '时间步 t',
    'rnn.wf': '沿时间的梯度，逐帧（行：时间步 t，t = 0 在最下面）',
    'rnn.derivs': '激活函数的导数（autograd）',
    'rnn.derivs_hint': '反向传播每一步乘一次 f′：sigmoid′ ≤ {s}，tanh′ ≤ {t}；ReLU′ 在 0 左边是 0、右边是 1。',
    'rnn.clip': '梯度裁剪用的是哪种范数',
    'rnn.clip_hint': '把 A 设为一个真实参数的梯度，用 torch.nn.utils.clip_grad_norm_ 在 max_norm {m} 裁剪：它把所有元素放在一起算 2-范数（Frobenius），再乘以 max_norm / ‖g‖。',
    'rnn.l1': '逐元素 L1 Σ|aᵢⱼ|', 'rnn.fro': 'Frobenius √Σaᵢⱼ²（裁剪量的就是它）',
    'rnn.m1': 'matrix_norm(A, 1)：最大列和', 'rnn.spec': '谱范数 ‖A‖₂（最大奇异值）',
    'rnn.measured': 'clip_grad_norm_ 返回', 'rnn.coef_ex': '系数', 'rnn.clipped': '裁剪后的 A',
    'rnn.live': '这次训练：‖g‖ = {g}，{state}', 'rnn.live_on': '在 {m} 裁剪，系数 {c}',
    'rnn.live_off': '没有裁剪（在 {m} 裁剪的话系数是 {c}）',
    'rnn.facts': '{p} 个参数 · 词表 {v} 个字符 · 训练文本 {n} 个字符',
    'rnn.err_too_short': '至少粘贴 {min} 个字符才能训练（现在是 {n} 个）。',
    'rnn.err_distinct': '粘贴的文字至少要有两个不同的字符。',
    'rnn.err_window': '文本（{n} 个字符）比一个 {window} 的窗口还短：把窗口调小。',
    'rnn.err_empty': '请输入至少一个字符的开头。',
    'rnn.err_unknown': '“{char}”没有在训练文本里出现过，模型没有它的编号。',
  },
});

export const stylesheet = '/css/labs/rnn.css';
// "My pasted text" shows the paste box and waits for the text (the lab cannot train on nothing).
export const formWaits = { text: { pasted: { field: 'pasted', min: 200 } } };

const SCENARIOS = {
  explode: { activation: 'relu', whh_scale: 2.0, clip: false },
  vanish: { activation: 'sigmoid', whh_scale: 1.0 },
  tanh: { activation: 'tanh', whh_scale: 1.0, clip: true },
};

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const pct = (v) => `${(v * 100).toFixed(0)}%`;

/** A text with one span marked (the meter's); each character a button when onPick. */
function markedText(box, text, start, length, onPick = null, pickedAt = -1) {
  box.replaceChildren();
  [...text].forEach((c, i) => {
    const s = el(onPick ? 'button' : 'span', 'rnn-ch', c === '\n' ? '↵' : c);
    if (onPick) { s.type = 'button'; s.onclick = () => onPick(i); }
    if (i >= start && i < start + length) s.classList.add('rnn-verbatim');
    if (i === pickedAt) s.classList.add('rnn-picked');
    box.append(s);
  });
}

export default function mount(root, ctx) {
  root.innerHTML = '';
  const dash = dashboard(root, ctx, {
    className: 'rnn-view',
    waterfall: false, // the gradient through time gets its own waterfall below
    charts: [
      { title: 'rnn.loss', keys: [{ key: 'loss', name: 'rnn.train' }, { key: 'val_loss', name: 'rnn.val', markers: true }], logY: true },
      { title: 'rnn.gnorm', keys: [{ key: 'grad_total', name: 'rnn.gtotal' }], logY: true, kept: false },
      { title: 'rnn.coef', keys: [{ key: 'clip_coef', name: 'rnn.clip_coef' }], kept: false, yaxis: { range: [0, 1.05] } },
      { title: 'rnn.mem', keys: [{ key: 'memorised', name: 'rnn.memorised', markers: true }], kept: false },
    ],
  });
  const pics = dash.picturesEl;
  pics.classList.add('rnn-pictures');
  const after = dash.grid;
  const isDriver = () => ctx.store.get('role') === 'driver';

  // -- scenarios ----------------------------------------------------------------------------
  const bar = el('div', 'rnn-try');
  const tryLabel = el('span', 'rnn-try-label');
  bar.append(tryLabel);
  const tries = Object.keys(SCENARIOS).map((k) => {
    const b = el('button');
    b.type = 'button';
    b.dataset.act = `try-${k}`;
    b.onclick = () => ctx.setParams(SCENARIOS[k]);
    bar.append(b);
    return [k, b];
  });
  const clipBtn = el('button');
  clipBtn.type = 'button';
  clipBtn.dataset.act = 'clip';
  clipBtn.onclick = () => ctx.setParams({ clip: !ctx.params().clip });
  bar.append(clipBtn);
  pics.append(bar);

  // -- generation (the declared input) ------------------------------------------------------
  const pGen = panel(pics, 'rnn.gen', { chart: false, wide: true, hint: 'rnn.gen_hint' });
  const form = el('form', 'rnn-gen-form');
  form.innerHTML = `
    <label class="rnn-prompt"><span data-k="rnn.prompt"></span><input name="prompt" maxlength="64" value="The "></label>
    <label><span data-k="rnn.mode"></span><select name="mode"><option value="greedy" data-k="rnn.greedy"></option><option value="sample" data-k="rnn.sample" selected></option></select></label>
    <label><span data-k="rnn.temperature"></span><span class="rnn-range"><input name="temperature" type="range" min="0.05" max="3" step="0.05" value="0.8"><output>0.8</output></span></label>
    <label><span data-k="rnn.length"></span><input name="n_chars" type="number" min="1" max="300" value="120"></label>
    <label><span data-k="rnn.seed"></span><input name="seed" type="number" min="0" max="2147483647" value="0"></label>
    <button type="submit" class="primary" data-k="rnn.go"></button>`;
  const fe = form.elements;
  form.addEventListener('input', () => {
    form.querySelector('.rnn-range output').textContent = fe.temperature.value;
    fe.temperature.disabled = fe.mode.value === 'greedy';
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!isDriver()) return;
    const num = (n, lo, hi) => Math.min(hi, Math.max(lo, Math.round(Number(fe[n].value) || 0)));
    ctx.infer({ prompt: fe.prompt.value, mode: fe.mode.value, temperature: Number(fe.temperature.value), length: num('n_chars', 1, 300), seed: num('seed', 0, 2147483647) });
  });
  const genText = el('div', 'rnn-text rnn-gen-text');
  genText.setAttribute('aria-live', 'polite');
  const genMeter = el('p', 'rnn-meter');
  const genCols = el('div', 'rnn-cols');
  const candBox = el('div', 'rnn-col');
  const candTitle = el('h4', 'rnn-cands-title');
  const cands = probBars(el('div'), { max: 8 });
  candBox.append(candTitle, cands.el);
  const genHeatBox = el('div', 'rnn-col rnn-heat');
  const genHeatTitle = el('h4');
  const genHeatEl = el('div');
  genHeatBox.append(genHeatTitle, genHeatEl);
  genCols.append(candBox, genHeatBox);
  pGen.body.append(form, genText, genMeter, genCols);
  const heatOpts = { colormap: 'diverging', range: 'symmetric', maxCell: 380, minCell: 60 };
  const genHeat = mapGrid(genHeatEl, heatOpts);
  let gen = null; // the last infer frame
  let picked = 0;

  // -- training sample and meter ------------------------------------------------------------
  const pSample = panel(pics, null, { chart: false, wide: true });
  const sampleTitle = el('h3');
  const sampleText = el('div', 'rnn-text');
  const sampleMeter = el('p', 'rnn-meter');
  const thresh = el('p', 'rnn-threshold');
  const below = el('p', 'rnn-below');
  pSample.el.prepend(sampleTitle);
  pSample.body.append(sampleText, sampleMeter, thresh, below);

  // -- hidden state and next-character bars ------------------------------------------------
  const pHidden = panel(pics, 'rnn.hidden', { chart: false, wide: true, hint: 'rnn.hidden_hint' });
  const hidCols = el('div', 'rnn-cols');
  const hidEl = el('div', 'rnn-col rnn-heat');
  const nextBox = el('div', 'rnn-col');
  const nextTitle = el('h4');
  const nextBars = probBars(el('div'), { max: 8 });
  nextBox.append(nextTitle, nextBars.el);
  hidCols.append(hidEl, nextBox);
  pHidden.body.append(hidCols);
  const hidden = mapGrid(hidEl, heatOpts);

  // -- through time -------------------------------------------------------------------------
  const pThrough = panel(after, 'rnn.through', { chart: false, wide: true });
  const throughHint = el('p', 'hint');
  const plots = el('div', 'rnn-cols');
  const hPlot = el('div', 'rnn-plot');
  const gPlot = el('div', 'rnn-plot');
  plots.append(hPlot, gPlot);
  pThrough.body.append(plots, throughHint);
  const pWf = panel(after, 'rnn.wf', { chart: false, wide: true });
  const wf = waterfall(pWf.body);
  const pDer = panel(after, 'rnn.derivs', { chart: false });
  const derPlot = el('div', 'rnn-plot');
  const derHint = el('p', 'hint');
  pDer.body.append(derPlot, derHint);

  // -- the norm example and live clipping ---------------------------------------------------
  const pClip = panel(after, 'rnn.clip', { chart: false });
  const clipHint = el('p', 'hint');
  const mats = el('div', 'rnn-mats');
  const normTable = el('table', 'rnn-table');
  const liveClip = el('p', 'rnn-live-clip');
  pClip.body.append(mats, normTable, liveClip, clipHint);
  const factsLine = el('p', 'rnn-facts');
  after.append(factsLine);

  let last = null;
  let lastScalars = {};
  const plotted = new Set();

  const matrix = (rows, title) => {
    const box = el('figure', 'rnn-mat');
    const cap = el('figcaption', null, title);
    const tb = el('table');
    for (const r of rows) {
      const tr = el('tr');
      for (const v of r) tr.append(el('td', null, fmt(v, 4)));
      tb.append(tr);
    }
    box.append(cap, tb);
    return box;
  };

  function drawBar() {
    setText(tryLabel, t('rnn.try'));
    const names = { explode: 'rnn.try_explode', vanish: 'rnn.try_vanish', tanh: 'rnn.try_tanh' };
    for (const [k, b] of tries) setText(b, t(names[k]));
    setText(clipBtn, t(ctx.params().clip ? 'rnn.clip_off' : 'rnn.clip_on'));
    bar.hidden = !isDriver();
    form.querySelectorAll('[data-k]').forEach((n) => setText(n, t(n.dataset.k)));
    form.querySelector('button').disabled = !isDriver();
  }

  function drawGen() {
    if (!gen) return;
    const m = gen.meta;
    markedText(genText, m.text, m.span.start, m.span.length, (i) => { picked = i; drawGen(); }, picked);
    genText.prepend(el('span', 'rnn-prompt-text', m.prompt));
    setText(genMeter, m.span.length ? t('rnn.meter', { n: m.span.length, m: [...m.text].length, p: pct(m.span.length / Math.max(1, [...m.text].length)) }) : t('rnn.meter_none'));
    const top = gen.tensors.gen_top;
    const k = top.shape[1];
    const i = Math.min(picked, top.shape[0] - 1);
    setText(candTitle, t('rnn.cands', { i: i + 1, c: [...m.text][i] === '\n' ? '↵' : [...m.text][i] }));
    const chosen = [...m.text][i];
    cands.show(m.top_chars[i].map((c, j) => ({ label: c === '\n' ? '↵' : c === ' ' ? '␣' : c, value: top.data[i * k + j], hot: c === chosen })));
    setText(genHeatTitle, t('rnn.gen_hidden'));
    const h = gen.tensors.gen_hidden;
    genHeat.draw([{ data: h.data, rows: h.shape[0], cols: h.shape[1], group: 0 }], { colLabels: m.hidden_chars, rowTitle: t('rnn.unit'), colTitle: t('rnn.char') });
  }

  function drawSample() {
    const m = last.meta;
    const s = m.sample;
    setText(sampleTitle, t('rnn.sample_title', { s: s.step }));
    markedText(sampleText, s.text, s.span[1], s.span[0]);
    setText(sampleMeter, s.span[0] ? t('rnn.meter', { n: s.span[0], m: [...s.text].length, p: pct(s.span[0] / Math.max(1, [...s.text].length)) }) : t('rnn.meter_none'));
    const loss = lastScalars.loss;
    const r = m.recipe;
    setText(thresh, t('rnn.threshold', { l: Number.isFinite(loss) ? loss.toFixed(3) : '—', lr: r.lr, b: r.batch, w: r.window, c: r.clip, th: m.threshold }));
    below.hidden = !(Number.isFinite(loss) && loss < m.threshold);
    setText(below, t('rnn.below', { th: m.threshold }));
  }

  function drawHidden() {
    const h = last.tensors.hidden;
    if (!h) return;
    hidden.draw([{ data: h.data, rows: h.shape[0], cols: h.shape[1], group: 0 }], { colLabels: last.meta.heat_chars, rowTitle: t('rnn.unit'), colTitle: t('rnn.char') });
    const nx = last.tensors.next;
    setText(nextTitle, t('rnn.cands_now', { n: h.shape[1] }));
    nextBars.show(nx.labels.map((c, j) => ({ label: c === '\n' ? '↵' : c === ' ' ? '␣' : c, value: nx.data[j] })));
  }

  function react(div, traces, layout) {
    if (!Plotly) return;
    const fn = plotted.has(div) ? Plotly.react : Plotly.newPlot;
    plotted.add(div);
    fn(div, traces, baseLayout({ margin: { l: 52, r: 10, t: 8, b: 40 }, showlegend: true, legend: { orientation: 'h', x: 0, y: 1.02, yanchor: 'bottom' }, ...layout }), CONFIG);
  }

  function drawThrough() {
    const T = last.tensors;
    if (!T.h_norm) return;
    const n = T.h_norm.data.length;
    const xs = Array.from({ length: n }, (_, i) => i);
    react(hPlot, [{ x: xs, y: Array.from(T.h_norm.data), name: t('rnn.hnorm'), mode: 'lines+markers', marker: { size: 4 } }],
      { xaxis: { title: { text: t('rnn.t') } }, yaxis: { rangemode: 'tozero' }, uirevision: 'h' });
    const g = Array.from(T.bptt.data);
    const pos = g.filter((v) => v > 0);
    // The axis spans the measured gradient; the bound may run far above it (and off the top).
    const lo = pos.length ? Math.log10(Math.min(...pos)) - 0.5 : -8, hi = pos.length ? Math.log10(Math.max(...pos)) + 1 : 1;
    react(gPlot, [
      { x: xs, y: g, name: t('rnn.grad'), mode: 'lines+markers', marker: { size: 4 }, line: { color: '#e8702a' } },
      { x: xs, y: Array.from(T.bptt_bound.data), name: t('rnn.bound'), mode: 'lines', line: { color: '#7f8c8d', dash: 'dash' } },
    ], { xaxis: { title: { text: t('rnn.t') } }, yaxis: { type: 'log', range: [lo, hi] } });
    const m = last.meta;
    setText(throughHint, t('rnn.through_hint', { n: 16, f: fmt(m.derivs_max[m.activation], 3), w: fmt(m.whh_spectral, 4), r: fmt(m.rate, 4) }));
    if (!last.replay) {
      const values = {};
      for (let i = n - 1; i >= 0; i--) values[`grad_norm.t=${i}`] = g[i];
      wf.add([{ step: last.step, values }]);
    }
  }

  let derDrawn = false;
  function drawDerivs() {
    const d = last.tensors.derivs;
    if (!d || (derDrawn && derPlot.dataset.lang === document.documentElement.lang)) return;
    derDrawn = true;
    derPlot.dataset.lang = document.documentElement.lang;
    const [lo, hi] = last.meta.derivs_x;
    const n = d.shape[1];
    const xs = Array.from({ length: n }, (_, i) => lo + ((hi - lo) * i) / (n - 1));
    const colors = ['#1a9e77', '#2f6fdf', '#e8702a'];
    react(derPlot, d.labels.map((name, k) => ({ x: xs, y: Array.from(d.data.slice(k * n, (k + 1) * n)), name: `${name}′`, mode: 'lines', line: { color: colors[k], width: 2 } })),
      { xaxis: { title: { text: 'x' } }, yaxis: { range: [-0.05, 1.1] } });
    const mx = last.meta.derivs_max;
    setText(derHint, t('rnn.derivs_hint', { s: fmt(mx.sigmoid, 3), t: fmt(mx.tanh, 3) }));
  }

  function drawClip() {
    const e = last.meta.norms;
    setText(clipHint, t('rnn.clip_hint', { m: e.max_norm }));
    mats.replaceChildren(matrix(e.matrix, 'A'), matrix(e.clipped, t('rnn.clipped')));
    const row = (label, value, hot = false) => {
      const tr = el('tr');
      tr.append(el('th', null, label), el('td', null, value));
      if (hot) tr.classList.add('rnn-hot');
      return tr;
    };
    normTable.replaceChildren(
      row(t('rnn.l1'), fmt(e.l1_entrywise, 4)),
      row(t('rnn.fro'), fmt(e.frobenius, 4), true),
      row(t('rnn.m1'), fmt(e.matrix_1, 4)),
      row(t('rnn.spec'), fmt(e.spectral, 4)),
      row(t('rnn.measured'), fmt(e.clip_total, 4), true),
      row(`${t('rnn.coef_ex')} ${e.max_norm} / ${fmt(e.clip_total, 4)}`, e.clip_coef.toFixed(4), true),
    );
    const p = ctx.params();
    const g = lastScalars.grad_total;
    if (!Number.isFinite(g)) { liveClip.hidden = true; return; }
    liveClip.hidden = false;
    const state = p.clip && Number.isFinite(lastScalars.clip_coef)
      ? t('rnn.live_on', { m: p.max_norm, c: lastScalars.clip_coef.toFixed(4) })
      : t('rnn.live_off', { m: p.max_norm, c: Math.min(1, p.max_norm / g).toFixed(4) });
    setText(liveClip, t('rnn.live', { g: fmt(g, 4), state }));
  }

  function draw() {
    drawBar();
    if (!last || !last.meta || !last.meta.norms) return;
    drawSample();
    drawHidden();
    drawThrough();
    drawDerivs();
    drawClip();
    const m = last.meta;
    setText(factsLine, t('rnn.facts', { p: m.n_params.toLocaleString(), v: m.vocab_size, n: m.n_train.toLocaleString() }));
  }

  ctx.store.on('role', drawBar);
  ctx.store.on('params', drawBar);
  drawBar();

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !f.meta.norms) return;
      last = f;
      if (f.scalars && Object.keys(f.scalars).length) lastScalars = f.scalars;
      draw();
      root.dataset.step = String(f.step);
    },
    scalars(rows) {
      dash.onScalars(rows);
      if (rows.length) lastScalars = { ...lastScalars, ...rows[rows.length - 1].values };
    },
    infer(f) {
      gen = f;
      picked = 0;
      drawGen();
      root.dataset.generated = String(f.meta.text.length);
    },
    reset() { dash.reset(); wf.clear(); lastScalars = {}; },
    relabel() {
      dash.relabel();
      for (const p of [pGen, pSample, pHidden, pThrough, pWf, pDer, pClip]) p.relabel();
      hidden.relabel();
      genHeat.relabel();
      plotted.clear();
      derDrawn = false;
      draw();
      drawGen();
    },
  };
}
