// View of `transformer`: a small encoder-decoder learning number words (en ↔ zh). The
// dashboard draws the label-smoothed loss, both perplexities, held-out exact answers and the
// warm-up lr; above it the learner's phrase translated by greedy decoding and by beam search
// (every hypothesis with its length penalty) with the attention of every layer and head, and
// the training example's maps; below, the schedule's curves, both label-smoothing
// conventions, LayerNorm vs BatchNorm on a padded batch, and the text's two models counted
// from their configs. Every number comes from the server; the page only draws.
import { el } from '../core/dom.js';
import { addStrings, t } from '../core/i18n.js';
import { dashboard } from '../components/dashboard.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, whenPlotly } from '../components/plot.js';

addStrings({
  en: {
    'transformer.loss': 'Training loss (label-smoothed) and true cross-entropy',
    'transformer.loss_s': 'label-smoothed loss', 'transformer.nll': 'cross-entropy (no smoothing)', 'transformer.val_nll': 'held-out cross-entropy',
    'transformer.ppl': 'Perplexity: e^(smoothed loss) overstates e^(cross-entropy)',
    'transformer.ppl_s': 'e^(smoothed loss)', 'transformer.ppl_t': 'e^(cross-entropy)',
    'transformer.exact': 'Exact translations', 'transformer.exact_train': 'this batch', 'transformer.exact_val': 'held-out numbers (never trained on)',
    'transformer.lr': 'Learning rate now (the warm-up schedule)', 'transformer.lr_name': 'lr',
    'transformer.try': 'Translate your own phrase', 'transformer.try_hint': 'Words the model knows: {vocab}. At most {max} tokens.',
    'transformer.phrase': 'Phrase', 'transformer.width': 'Beam width', 'transformer.alpha': 'Length penalty α', 'transformer.go': 'Translate', 'transformer.busy': 'Translating…',
    'transformer.greedy': 'Greedy', 'transformer.beam': 'Beam search (width {w}, α {a})',
    'transformer.agree': 'Greedy and beam search agree.', 'transformer.differ': 'Greedy and beam search differ.',
    'transformer.hyp': 'Beam hypotheses (score = log p ÷ ((5 + length) / 6)^α)',
    'transformer.h_text': 'translation', 'transformer.h_logp': 'log p', 'transformer.h_len': 'length', 'transformer.h_lp': 'penalty', 'transformer.h_score': 'score',
    'transformer.unfinished': '(no end token)',
    'transformer.maps_of': 'Attention of', 'transformer.kind_cross': 'Cross-attention (decoder → source)', 'transformer.kind_dec': 'Decoder masked self-attention', 'transformer.kind_enc': 'Encoder self-attention',
    'transformer.lh': 'L{l} H{h}', 'transformer.layer': 'layer {l}', 'transformer.written': 'token written', 'transformer.source': 'source', 'transformer.query': 'query', 'transformer.key': 'key',
    'transformer.ex_maps': 'The training example, every layer and head', 'transformer.ex_line': '{src} → {out} (greedy, at this step)',
    'transformer.maps_hint': 'Rows: the tokens written (each row is the step that wrote it); columns: what that head read. Click a map to enlarge it.',
    'transformer.sched': 'The warm-up schedule: lr = factor · d^−0.5 · min(step^−0.5, step · warmup^−1.5)',
    'transformer.sched_run': 'this run (d {d}, warm-up {w}, factor {f})', 'transformer.sched_text': 'the text’s recipe (d 512, warm-up 4000): peak {peak} at step 4000',
    'transformer.step': 'step', 'transformer.now': 'now',
    'transformer.ls': 'Label smoothing, ε = 0.1, K = 4',
    'transformer.ls_hint': 'Logits {logits}, target class 0. Torch’s CrossEntropyLoss(label_smoothing=0.1) spreads ε over all K classes, the target included.',
    'transformer.conv': 'convention', 'transformer.on_t': 'on the target', 'transformer.on_o': 'on each other', 'transformer.ce': 'cross-entropy',
    'transformer.others': 'the text’s table: ε/(K−1)', 'transformer.uniform': 'the text’s code and torch: ε/K', 'transformer.torch': 'torch CrossEntropyLoss(label_smoothing=0.1)', 'transformer.plain': 'no smoothing',
    'transformer.ls_now': 'This run trains with ε = {eps}, {conv}.',
    'transformer.norms': 'LayerNorm vs BatchNorm on a padded batch',
    'transformer.norms_hint': 'Two sentences, three features a token; the short one is padded with 3 PAD rows of zeros. LayerNorm normalises each token over its own features: 今天 gives the same numbers in any batch. BatchNorm normalises each feature over every position of the batch, PAD included, so its statistics and 今天’s output depend on the padding and on the other sentence: padding and varying lengths are why sequence models use LayerNorm.',
    'transformer.tok': 'token', 'transformer.x': 'features', 'transformer.ln': 'LayerNorm', 'transformer.bn_pad': 'BatchNorm (PAD counted)', 'transformer.bn_real': 'BatchNorm (real tokens only)',
    'transformer.bn_stats': 'BatchNorm’s mean per feature: {pad} with PAD, {real} without.',
    'transformer.scale': 'The text’s models, counted from their configs',
    'transformer.scale_hint': '{L} + {L} post-norm layers, d {d}, {h} heads of {dh}, FFN {ff}, one {V}-token table for source, target and output, an output bias, a final LayerNorm on each stack.',
    'transformer.m_hand': 'hand-written', 'transformer.m_qk': 'torch, with QK-norm', 'transformer.params': 'parameters', 'transformer.val': 'validation loss (label-smoothed)',
    'transformer.ppl_ls': 'e^(loss): overstates the true perplexity', 'transformer.hours': '{h} h on one RTX 5090',
    'transformer.qk': 'QK-norm: a LayerNorm (weight and bias over d_head {dh}) on q and on k in all {n} attention modules adds {extra} parameters.',
    'transformer.this': 'This lab’s model: {n} parameters ({L} + {L} layers, d {d}, {h} heads); {train} numbers to train on, {held} held out.',
    'transformer.err_unknown': '“{token}” is not a word the model knows.',
    'transformer.err_empty': 'Type a phrase to translate.',
    'transformer.err_long': '{n} tokens: at most {max}.',
  },
  zh: {
    'transformer.loss': '训练损失（标签平滑）与真正的交叉熵',
    'transformer.loss_s': '标签平滑后的损失', 'transformer.nll': '交叉熵（不平滑）', 'transformer.val_nll': '留出集交叉熵',
    'transformer.ppl': '困惑度：e^（平滑损失）高估了 e^（交叉熵）',
    'transformer.ppl_s': 'e^（平滑损失）', 'transformer.ppl_t': 'e^（交叉熵）',
    'transformer.exact': '整句译对的比例', 'transformer.exact_train': '这一批', 'transformer.exact_val': '留出的数（从未训练过）',
    'transformer.lr': '当前学习率（预热调度）', 'transformer.lr_name': '学习率',
    'transformer.try': '翻译你自己的短语', 'transformer.try_hint': '模型认识的词：{vocab}。最多 {max} 个 token。',
    'transformer.phrase': '短语', 'transformer.width': '集束宽度', 'transformer.alpha': '长度惩罚 α', 'transformer.go': '翻译', 'transformer.busy': '翻译中…',
    'transformer.greedy': '贪心解码', 'transformer.beam': '集束搜索（宽度 {w}，α {a}）',
    'transformer.agree': '贪心与集束搜索结果相同。', 'transformer.differ': '贪心与集束搜索结果不同。',
    'transformer.hyp': '集束中的候选（得分 = log p ÷（（5 + 长度）/ 6）^α）',
    'transformer.h_text': '译文', 'transformer.h_logp': 'log p', 'transformer.h_len': '长度', 'transformer.h_lp': '惩罚', 'transformer.h_score': '得分',
    'transformer.unfinished': '（没有结束符）',
    'transformer.maps_of': '注意力：', 'transformer.kind_cross': '交叉注意力（解码器 → 源句）', 'transformer.kind_dec': '解码器带掩码的自注意力', 'transformer.kind_enc': '编码器自注意力',
    'transformer.lh': '层{l} 头{h}', 'transformer.layer': '第 {l} 层', 'transformer.written': '写出的 token', 'transformer.source': '源句', 'transformer.query': '查询', 'transformer.key': '键',
    'transformer.ex_maps': '训练示例：每一层、每个头', 'transformer.ex_line': '{src} → {out}（此刻的贪心解码）',
    'transformer.maps_hint': '行是写出的 token（每一行是写它的那一步），列是这个头读了什么。点一张图放大。',
    'transformer.sched': '预热调度：lr = 倍数 · d^−0.5 · min(step^−0.5, step · warmup^−1.5)',
    'transformer.sched_run': '本次训练（d {d}，预热 {w}，倍数 {f}）', 'transformer.sched_text': '书中的配方（d 512，预热 4000）：第 4000 步达到峰值 {peak}',
    'transformer.step': '步', 'transformer.now': '此刻',
    'transformer.ls': '标签平滑，ε = 0.1，K = 4',
    'transformer.ls_hint': 'logits {logits}，目标是第 0 类。torch 的 CrossEntropyLoss(label_smoothing=0.1) 把 ε 分给全部 K 类，目标类也算在内。',
    'transformer.conv': '约定', 'transformer.on_t': '目标类', 'transformer.on_o': '其余每类', 'transformer.ce': '交叉熵',
    'transformer.others': '书中的表：ε/(K−1)', 'transformer.uniform': '书中的代码与 torch：ε/K', 'transformer.torch': 'torch CrossEntropyLoss(label_smoothing=0.1)', 'transformer.plain': '不平滑',
    'transformer.ls_now': '本次训练用 ε = {eps}，{conv}。',
    'transformer.norms': '填充批上的 LayerNorm 与 BatchNorm',
    'transformer.norms_hint': '两句话，每个 token 三个特征；短句补了 3 个全零的 PAD。LayerNorm 对每个 token 在它自己的特征上归一化：今天 在任何批里结果都一样。BatchNorm 对每个特征在整批所有位置上归一化，PAD 也算在内，所以它的统计量和 今天 的输出取决于填充和另一句话：序列模型用 LayerNorm，是因为填充和长度不一。',
    'transformer.tok': 'token', 'transformer.x': '特征', 'transformer.ln': 'LayerNorm', 'transformer.bn_pad': 'BatchNorm（算上 PAD）', 'transformer.bn_real': 'BatchNorm（只算真实 token）',
    'transformer.bn_stats': 'BatchNorm 每个特征的均值：算上 PAD 是 {pad}，不算是 {real}。',
    'transformer.scale': '书中的两个模型，由配置算出',
    'transformer.scale_hint': '编码器、解码器各 {L} 层后置归一化，d {d}，{h} 个头各 {dh} 维，FFN {ff}，源、目标与输出共用一张 {V} 词的表，输出带偏置，两个栈末尾各一个 LayerNorm。',
    'transformer.m_hand': '手写版', 'transformer.m_qk': 'torch 版，带 QK-norm', 'transformer.params': '参数', 'transformer.val': '验证损失（标签平滑）',
    'transformer.ppl_ls': 'e^（损失）：高于真正的困惑度', 'transformer.hours': '一张 RTX 5090 上 {h} 小时',
    'transformer.qk': 'QK-norm：在全部 {n} 个注意力模块里对 q 和 k 各加一个 LayerNorm（d_head {dh} 维的权重和偏置），多出 {extra} 个参数。',
    'transformer.this': '本实验的模型：{n} 个参数（各 {L} 层，d {d}，{h} 个头）；{train} 个数用来训练，{held} 个留出。',
    'transformer.err_unknown': '“{token}” 不是模型认识的词。',
    'transformer.err_empty': '请输入要翻译的短语。',
    'transformer.err_long': '{n} 个 token：最多 {max} 个。',
  },
});

export const stylesheet = '/css/labs/transformer.css';
export const lazyPlotly = true;

const KINDS = [['cross', 'cross_attn', 'transformer.kind_cross'], ['dec', 'attn', 'transformer.kind_dec'], ['enc', 'attn', 'transformer.kind_enc']];
const vec = (v, d = 3) => `[${v.map((x) => fmt(x, d)).join(', ')}]`;
const num = (n) => Math.round(n).toLocaleString('en-US');

/** A kind chooser and a mapGrid of every layer (group) and head (map) of one attention kind. */
function attentionMaps(parent, key) {
  const bar = el('div', 'tf-kinds');
  const host = el('div', 'tf-maps');
  parent.append(bar, host);
  const grid = mapGrid(host, { maxCell: 150, minCell: 40 });
  let kind = 'cross', last = null;
  const buttons = KINDS.map(([k, , label]) => {
    const b = el('button', 'tf-kind');
    b.type = 'button';
    b.dataset.kind = k;
    b.dataset.label = label;
    b.addEventListener('click', () => { kind = k; draw(); });
    bar.append(b);
    return b;
  });
  function draw() {
    buttons.forEach((b) => { b.textContent = t(b.dataset.label); b.setAttribute('aria-pressed', String(b.dataset.kind === kind)); });
    if (!last) return;
    const { tensors, prefix, src, written, L } = last;
    const list = [];
    for (let l = 0; l < L; l++) {
      const name = kind === 'enc' ? `${prefix}encoder.blocks.${l}.attn.hook_pattern` : `${prefix}decoder.blocks.${l}.${kind === 'cross' ? 'cross_attn' : 'attn'}.hook_pattern`;
      const p = tensors[name];
      if (!p) return;
      const [H, R, C] = p.shape;
      for (let h = 0; h < H; h++) list.push({ data: p.data, offset: h * R * C, rows: R, cols: C, group: l });
    }
    const H = tensors[`${prefix}encoder.blocks.0.attn.hook_pattern`].shape[0];
    const rows = kind === 'enc' ? src : written;
    const cols = kind === 'cross' || kind === 'enc' ? src : written;
    const mapLabels = Array.from({ length: H }, (_, h) => `H${h}`);
    grid.draw(list, {
      title: (g, i) => t('transformer.lh', { l: g, h: i }),
      groupLabels: Array.from({ length: L }, (_, l) => `L${l}`),
      mapLabels, rowLabels: rows, colLabels: cols,
      rowTitle: kind === 'enc' ? t('transformer.query') : t('transformer.written'),
      colTitle: kind === 'dec' ? t('transformer.key') : t('transformer.source'),
      masked: kind === 'dec' ? (i, j) => j > i : null,
    });
    host.dataset.kind = kind;
    host.dataset.key = key;
  }
  return {
    show(tensors, prefix, src, written, L) { last = { tensors, prefix, src, written, L }; draw(); },
    relabel() { grid.relabel(); draw(); },
  };
}

export default function mount(root, ctx) {
  root.innerHTML = '';
  const view = el('div', 'tf-view');
  root.append(view);
  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'transformer.loss', keys: [{ key: 'loss', name: 'transformer.loss_s' }, { key: 'nll', name: 'transformer.nll' }, { key: 'val_nll', name: 'transformer.val_nll', markers: true }] },
      { title: 'transformer.ppl', keys: [{ key: 'ppl_smoothed', name: 'transformer.ppl_s' }, { key: 'ppl', name: 'transformer.ppl_t' }], logY: true, kept: false },
      { title: 'transformer.exact', keys: [{ key: 'exact', name: 'transformer.exact_train' }, { key: 'val_exact', name: 'transformer.exact_val', markers: true }], kept: false, legend: 'low' },
      { title: 'transformer.lr', keys: [{ key: 'lr', name: 'transformer.lr_name' }], kept: false },
    ],
  });
  const pics = dash.picturesEl;
  const after = dash.grid;

  // -- the learner's phrase -----------------------------------------------------------------
  const pTry = panel(pics, 'transformer.try', { chart: false, wide: true });
  const tryHint = el('p', 'hint tf-vocab');
  const form = el('form', 'tf-form');
  const mk = (labelKey, input) => { const l = el('label'); const s = el('span'); s.dataset.key = labelKey; l.append(s, input); form.append(l); return input; };
  const text = mk('transformer.phrase', Object.assign(el('input', 'tf-text'), { type: 'text', name: 'text', maxLength: 80, value: 'three hundred twenty one' }));
  const width = mk('transformer.width', Object.assign(el('input'), { type: 'number', name: 'width', min: 1, max: 8, step: 1, value: 4 }));
  const alpha = mk('transformer.alpha', Object.assign(el('input'), { type: 'number', name: 'alpha', min: 0, max: 2, step: 0.1, value: 0.6 }));
  const go = Object.assign(el('button', 'tf-go'), { type: 'submit' });
  form.append(go);
  const result = el('div', 'tf-result');
  const table = el('table', 'tf-hyps');
  const pickBar = el('div', 'tf-which');
  const mapsBox = el('div');
  const hypWrap = el('div', 'tf-scroll'); // a phone scrolls the table, not the page
  hypWrap.append(table);
  pTry.body.append(tryHint, form, result, hypWrap, pickBar, mapsBox);
  const tryMaps = attentionMaps(mapsBox, 'infer');
  let which = 'beam', lastInfer = null, busy = false, lastFrame = null;
  const whichButtons = ['greedy', 'beam'].map((w) => {
    const b = el('button', 'tf-kind');
    b.type = 'button';
    b.dataset.which = w;
    b.addEventListener('click', () => { which = w; drawInfer(); });
    pickBar.append(b);
    return b;
  });
  const setBusy = (b) => { busy = b; go.disabled = b; go.textContent = t(b ? 'transformer.busy' : 'transformer.go'); };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (busy) return;
    setBusy(true);
    ctx.infer({ text: text.value, width: Math.round(Math.min(8, Math.max(1, Number(width.value) || 4))), alpha: Math.min(2, Math.max(0, Number(alpha.value) || 0)) });
    clearTimeout(setBusy.timer);
    setBusy.timer = setTimeout(() => setBusy(false), 4000); // an error reply sends no frame
  });

  function drawInfer() {
    whichButtons.forEach((b) => { b.textContent = b.dataset.which === 'greedy' ? t('transformer.greedy') : t('transformer.beam', { w: lastInfer ? lastInfer.meta.width : 4, a: lastInfer ? lastInfer.meta.alpha : 0.6 }); b.setAttribute('aria-pressed', String(b.dataset.which === which)); });
    if (!lastInfer) return;
    const m = lastInfer.meta;
    result.innerHTML = '';
    const line = (label, r) => { const p = el('p', 'tf-line'); p.append(el('b', '', `${label}: `), el('span', 'tf-out', r.text || '∅'), el('small', '', `  log p ${fmt(r.logprob, 4)} · ${t('transformer.h_score')} ${fmt(r.score, 4)}`)); result.append(p); };
    result.append(el('p', 'tf-src', m.src.join(' ')));
    line(t('transformer.greedy'), m.greedy);
    line(t('transformer.beam', { w: m.width, a: m.alpha }), m.beam);
    result.append(el('p', m.agree ? 'tf-agree' : 'tf-differ', t(m.agree ? 'transformer.agree' : 'transformer.differ')));
    table.innerHTML = '';
    const cap = el('caption', '', t('transformer.hyp'));
    const head = el('tr');
    for (const k of ['h_text', 'h_logp', 'h_len', 'h_lp', 'h_score']) head.append(el('th', '', t(`transformer.${k}`)));
    table.append(cap, head);
    for (const h of m.hypotheses) {
      const tr = el('tr');
      tr.append(el('td', 'tf-out', `${h.text || '∅'}${h.finished ? '' : ` ${t('transformer.unfinished')}`}`), el('td', '', fmt(h.logprob, 4)), el('td', '', String(h.length)), el('td', '', fmt(h.penalty, 4)), el('td', '', fmt(h.score, 4)));
      table.append(tr);
    }
    const r = m[which];
    tryMaps.show(lastInfer.tensors, `${which}.`, m.src, r.tokens, lastFrame ? lastFrame.meta.n_layers : 2);
  }

  // -- the training example --------------------------------------------------------------------
  const pEx = panel(pics, 'transformer.ex_maps', { chart: false, wide: true, hint: 'transformer.maps_hint' });
  const exLine = el('p', 'tf-line tf-example');
  const exBox = el('div');
  pEx.body.append(exLine, exBox);
  const exMaps = attentionMaps(exBox, 'example');

  // -- the schedule ----------------------------------------------------------------------------
  const pSched = panel(after, 'transformer.sched');
  const pLs = panel(after, 'transformer.ls', { chart: false, hint: 'transformer.ls_hint' });
  const lsTable = el('table', 'tf-table');
  const lsNow = el('p', 'tf-line');
  const lsWrap = el('div', 'tf-scroll');
  lsWrap.append(lsTable);
  pLs.body.append(lsWrap, lsNow);
  const pNorm = panel(after, 'transformer.norms', { chart: false, wide: true, hint: 'transformer.norms_hint' });
  const normWrap = el('div', 'tf-scroll');
  const normTable = el('table', 'tf-table');
  const normStats = el('p', 'tf-line');
  normWrap.append(normTable);
  pNorm.body.append(normWrap, normStats);
  const pScale = panel(after, 'transformer.scale', { chart: false, wide: true });
  const scaleBody = el('div', 'tf-scale');
  pScale.body.append(scaleBody);

  function drawSched(m) {
    const s = m.schedule, r = m.recipe;
    const stepNow = lastFrame ? lastFrame.step : 0;
    const data = [
      { x: s.steps, y: s.lr, name: t('transformer.sched_run', { d: s.d_model, w: s.warmup, f: s.factor }), line: { color: COLORS[0] } },
      { x: r.steps, y: r.lr, name: t('transformer.sched_text', { peak: fmt(r.peak, 3) }), xaxis: 'x2', line: { color: COLORS[1], dash: 'dot' } },
    ];
    if (stepNow > 0 && ctx.store.get('params')) {
      const lr = lastFrame.scalars.lr;
      if (Number.isFinite(lr)) data.push({ x: [stepNow], y: [lr], name: t('transformer.now'), mode: 'markers', marker: { size: 9, color: COLORS[2] } });
    }
    const layout = baseLayout({
      legend: { orientation: 'h', y: 1.25, x: 0 },
      margin: { t: 70, r: 10, b: 40, l: 60 },
      xaxis: { title: { text: t('transformer.step') } },
      xaxis2: { overlaying: 'x', side: 'top', showgrid: false, tickfont: { color: COLORS[1] } },
      yaxis: { title: { text: 'lr' }, exponentformat: 'power' },
    });
    whenPlotly((P) => P.react(pSched.chart, data, layout, CONFIG));
  }

  function drawFacts(m) {
    const ls = m.smoothing;
    tLs(ls);
    lsNow.textContent = t('transformer.ls_now', { eps: m.smoothing_now.eps, conv: t(`transformer.${m.smoothing_now.convention}`) });
    const n = m.norms;
    normTable.innerHTML = '';
    const head = el('tr');
    for (const k of ['tok', 'x', 'ln', 'bn_pad', 'bn_real']) head.append(el('th', '', t(`transformer.${k}`)));
    normTable.append(head);
    n.tokens.forEach((sent, b) => sent.forEach((tok, i) => {
      const tr = el('tr', n.real[b][i] ? '' : 'tf-pad');
      if (i === 0 && b === 1) tr.classList.add('tf-first');
      tr.append(el('td', 'tf-out', tok), el('td', '', vec(n.x[b][i])), el('td', '', vec(n.layernorm[b][i], 5)), el('td', '', vec(n.batchnorm_padded[b][i])), el('td', '', n.real[b][i] ? vec(n.batchnorm_real[b][i]) : '–'));
      normTable.append(tr);
    }));
    normStats.textContent = t('transformer.bn_stats', { pad: vec(n.bn_mean_padded), real: vec(n.bn_mean_real) });
    const sc = m.scale;
    scaleBody.innerHTML = '';
    scaleBody.append(el('p', 'hint', t('transformer.scale_hint', { L: sc.n_layers, d: sc.d_model, h: sc.n_heads, dh: sc.d_head, ff: sc.d_ff, V: num(sc.vocab) })));
    const st = el('table', 'tf-table');
    const hr = el('tr');
    for (const k of ['', 'transformer.params', 'transformer.val', 'transformer.ppl_ls']) hr.append(el('th', '', k ? t(k) : ''));
    st.append(hr);
    for (const [k, label] of [['hand', 'transformer.m_hand'], ['torch_qk', 'transformer.m_qk']]) {
      const r = sc[k];
      const tr = el('tr');
      const name = el('td', '', t(label));
      if (r.hours) name.append(el('small', '', ` · ${t('transformer.hours', { h: r.hours })}`));
      tr.append(name, el('td', 'tf-num', num(r.params)), el('td', 'tf-num', String(r.val_loss)), el('td', 'tf-num', fmt(r.ppl_smoothed, 3)));
      st.append(tr);
    }
    scaleBody.append(st, el('p', 'tf-line', t('transformer.qk', { dh: sc.d_head, n: sc.attention_modules, extra: num(sc.qk_extra) })));
    scaleBody.append(el('p', 'tf-line tf-this', t('transformer.this', { n: num(m.n_params), L: m.n_layers, d: ctx.store.get('params')?.d_model ?? '', h: m.n_heads, train: num(m.train_numbers), held: num(m.held_out) })));
    tryHint.textContent = t('transformer.try_hint', { vocab: m.src_vocab.join(m.src_lang === 'en' ? ', ' : ' '), max: m.max_src });
  }
  function tLs(ls) {
    lsTable.innerHTML = '';
    const head = el('tr');
    for (const k of ['conv', 'on_t', 'on_o', 'ce']) head.append(el('th', '', t(`transformer.${k}`)));
    lsTable.append(head);
    const row = (label, q, ce) => { const tr = el('tr'); tr.append(el('td', '', label), el('td', 'tf-num', q ? fmt(q[0], 4) : '–'), el('td', 'tf-num', q ? fmt(q[1], 4) : '–'), el('td', 'tf-num', fmt(ce, 6))); lsTable.append(tr); };
    row(t('transformer.others'), ls.others.q, ls.others.ce);
    row(t('transformer.uniform'), ls.uniform.q, ls.uniform.ce);
    row(t('transformer.torch'), null, ls.torch_ce);
    row(t('transformer.plain'), [1, 0], ls.plain_ce);
  }

  function relabelStatic() {
    for (const s of form.querySelectorAll('span[data-key]')) s.textContent = t(s.dataset.key);
    setBusy(busy);
  }

  function draw() {
    if (!lastFrame) return;
    const m = lastFrame.meta;
    pLs.el.querySelector('.hint').textContent = t('transformer.ls_hint', { logits: vec(m.smoothing.logits) });
    drawFacts(m);
    drawSched(m);
    const ex = m.example;
    if (ex) {
      exLine.textContent = t('transformer.ex_line', { src: ex.src.join(' '), out: ex.text || '∅' });
      exMaps.show(lastFrame.tensors, '', ex.src, ex.tokens, m.n_layers);
    }
  }
  relabelStatic();
  drawInfer();

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !f.meta.scale) return;
      lastFrame = f;
      draw();
      root.dataset.step = String(f.step);
    },
    infer(f) {
      setBusy(false);
      if (!f.meta || !f.meta.hypotheses) return;
      lastInfer = f;
      drawInfer();
      root.dataset.infer = String((Number(root.dataset.infer) || 0) + 1);
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); },
    relabel() {
      dash.relabel();
      for (const p of [pTry, pEx, pSched, pLs, pNorm, pScale]) p.relabel();
      relabelStatic();
      tryMaps.relabel();
      exMaps.relabel();
      drawInfer();
      draw();
    },
  };
}
