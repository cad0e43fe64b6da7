// View of `linear-attention`: one small decoder with four token mixers (softmax, linear,
// delta rule, SSM) trained side by side on recall with rebinding. The dashboard draws the
// loss and the held-out accuracies by arm; this view adds each recurrent arm's output on the
// example computed three ways (printed to six decimals, with the largest difference), the
// cache bytes after each token of a real decode (softmax grows, the states do not), the
// overwrite demo (plain vs delta memory read back), the example with each arm's answer, and
// the softmax and linear arms' attention weights. Every number comes from the server.
import { addStrings, pick, t } from '../core/i18n.js';
import { setText, el, add } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, fmt, reactIfChanged, whenPlotly } from '../components/plot.js';

addStrings({
  en: {
    'la.loss': 'Training loss by arm (same batches, same seed)',
    'la.train_loss': 'loss',
    'la.rebound': 'Held-out: rebound keys answered with the LAST value',
    'la.acc_rebound': 'right',
    'la.stale': 'Held-out: rebound keys answered with the STALE (first) value',
    'la.stale_rebound': 'stale',
    'la.once': 'Held-out: keys written once',
    'la.acc_once': 'right',
    'la.forms': 'One output, three computations',
    'la.forms_hint': 'The mixer\'s output for the example\'s last query (layer 0, first {n} features), computed by the server each way from the same weights, in float64 (in float32 they differ by float32 rounding, about 1e-7 of their size). Linear attention and the delta rule: parallel (a masked T × T matrix), recurrent (one token at a time, updating the state), chunked (parallel inside chunks of {chunk}, the state carried between them). SSM: recurrence, convolution (the unrolled kernel), parallel scan.',
    'la.form': 'form',
    'la.diff': 'largest |difference| from the first form, every layer and position',
    'la.agree': 'agree to six decimals',
    'la.disagree': 'differ',
    'la.cache': 'Memory kept while decoding: bytes measured after each token',
    'la.cache_hint': 'Each arm greedily decodes {n} tokens from the example\'s first token with its own cache; the curve is cache.nbytes after each token. Softmax keeps K and V of every token; the others overwrite one fixed-size state.',
    'la.tokens': 'tokens decoded',
    'la.bytes': 'bytes held',
    'la.arm': 'arm',
    'la.per_token': 'config: bytes a token',
    'la.state': 'config: state bytes',
    'la.measured': 'measured after {n} tokens',
    'la.flops': 'FLOPs a token at context 1 → {n}',
    'la.memory': 'Overwriting a key: plain accumulation vs the delta rule',
    'la.memory_hint': '{keys} random unit keys (dimension {dim}) are written with values 0–7, then {rw} of them again with new values; every key is read back. Plain: S = Σ k vᵀ. Delta rule (β = 1): S ← S + k (v − Sᵀk)ᵀ.',
    'la.key': 'key',
    'la.old_new': 'first → last',
    'la.plain_reads': 'plain reads old / new',
    'la.delta_reads': 'delta reads old / new',
    'la.mem_acc': 'Keys read as their last value — plain: {pr} of rewritten, {pk} of the rest; delta: {dr} of rewritten, {dk} of the rest.',
    'la.none': '–',
    'la.example': 'The example and each arm\'s answer now',
    'la.example_hint': 'The query key was written twice. The answer is its last value {answer}; a memory that only adds still holds {stale}.',
    'la.predicts': 'answers',
    'la.p_answer': 'p(last)',
    'la.p_stale': 'p(stale)',
    'la.maps': 'Attention weights on the example: softmax, and linear attention\'s implicit ones',
    'la.maps_hint': 'Rows: query tokens; columns: keys. Linear attention\'s row t is φ(q_t)·φ(k_i) normalised: the parallel form\'s matrix. Click a map to enlarge it.',
    'la.layer_head': 'L{l} H{h}',
    'la.query': 'query',
    'la.keycol': 'key',
  },
  zh: {
    'la.loss': '各变体的训练损失（同样的批、同样的随机种子）',
    'la.train_loss': '损失',
    'la.rebound': '留出集：被改写过的键，答对“最后写入的值”',
    'la.acc_rebound': '答对',
    'la.stale': '留出集：被改写过的键，答成“旧值”（第一次写入的）',
    'la.stale_rebound': '旧值',
    'la.once': '留出集：只写过一次的键',
    'la.acc_once': '答对',
    'la.forms': '同一个输出，三种算法',
    'la.forms_hint': '示例最后一个查询在混合器的输出（第 0 层，前 {n} 个特征），服务器用同一组权重分别算出，用 float64（在 float32 下它们只差 float32 的舍入，约为数值大小的 1e-7）。线性注意力与 delta 规则：并行（带掩码的 T × T 矩阵）、递推（一个 token 一个 token 地更新状态）、分块（块长 {chunk}，块内并行，块间传递状态）。SSM：递推、卷积（展开的卷积核）、并行扫描。',
    'la.form': '算法',
    'la.diff': '与第一种算法的最大 |差|（所有层、所有位置）',
    'la.agree': '六位小数一致',
    'la.disagree': '不一致',
    'la.cache': '解码时保留的记忆：每个 token 之后实测的字节数',
    'la.cache_hint': '每个变体从示例的第一个 token 开始，用自己的缓存贪心解码 {n} 个 token；曲线是每个 token 之后的 cache.nbytes。softmax 保留每个 token 的 K 和 V；其余几种只改写一个固定大小的状态。',
    'la.tokens': '已解码的 token 数',
    'la.bytes': '占用字节',
    'la.arm': '变体',
    'la.per_token': '配置：每个 token 的字节数',
    'la.state': '配置：状态字节',
    'la.measured': '{n} 个 token 后实测',
    'la.flops': '每个 token 的 FLOPs，上下文 1 → {n}',
    'la.memory': '改写一个键：单纯累加与 delta 规则',
    'la.memory_hint': '写入 {keys} 个随机单位向量作键（维度 {dim}），值为 0–7，再把其中 {rw} 个键用新值写一遍；然后逐个读回。单纯累加：S = Σ k vᵀ。delta 规则（β = 1）：S ← S + k (v − Sᵀk)ᵀ。',
    'la.key': '键',
    'la.old_new': '第一次 → 最后一次',
    'la.plain_reads': '累加读出 旧 / 新',
    'la.delta_reads': 'delta 读出 旧 / 新',
    'la.mem_acc': '读出最后写入的值 —— 累加：改写过的键 {pr}，其余 {pk}；delta：改写过的键 {dr}，其余 {dk}。',
    'la.none': '–',
    'la.example': '示例，以及每个变体现在的回答',
    'la.example_hint': '查询的键被写过两次。答案是最后写入的 {answer}；只会累加的记忆里还留着 {stale}。',
    'la.predicts': '回答',
    'la.p_answer': 'p(新值)',
    'la.p_stale': 'p(旧值)',
    'la.maps': '示例上的注意力权重：softmax，以及线性注意力隐含的权重',
    'la.maps_hint': '行是查询 token，列是键。线性注意力第 t 行是归一化的 φ(q_t)·φ(k_i)：并行形式里的那个矩阵。点一张图放大。',
    'la.layer_head': '层{l} 头{h}',
    'la.query': '查询',
    'la.keycol': '键',
  },
});

export const stylesheet = '/css/labs/linear-attention.css';
export const lazyPlotly = true;

const SIX = 1e-6;
const pct = (v) => (v === null || v === undefined ? t('la.none') : `${Math.round(100 * v)}%`);
const bytes = (b) => (b >= 1024 ? `${Number((b / 1024).toPrecision(4))} KiB` : `${Math.round(b)} B`);
const big = (n) => Math.round(n).toLocaleString('en-US');

export default function mount(root, ctx) {
  root.innerHTML = '';
  const view = el('div', 'la-view');
  root.append(view);
  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'la.loss', keys: [{ key: 'loss', name: 'la.train_loss' }], logY: true },
      { title: 'la.rebound', keys: [{ key: 'acc_rebound', name: 'la.acc_rebound', markers: true }], kept: false, legend: 'low' },
      { title: 'la.stale', keys: [{ key: 'stale_rebound', name: 'la.stale_rebound', markers: true }], kept: false },
      { title: 'la.once', keys: [{ key: 'acc_once', name: 'la.acc_once', markers: true }], kept: false, legend: 'low' },
    ],
  });
  const pics = dash.picturesEl;
  const after = dash.grid;

  // -- three forms ------------------------------------------------------------------------
  const pForms = panel(pics, 'la.forms', { chart: false, wide: true });
  const formsHint = el('p', 'hint');
  pForms.el.append(formsHint);
  const formsEl = el('div', 'la-forms');
  pForms.body.append(formsEl);

  // -- the example ------------------------------------------------------------------------
  const pEx = panel(pics, 'la.example', { chart: false, wide: true });
  const exHint = el('p', 'hint');
  pEx.el.append(exHint);
  const exTokens = el('p', 'la-tokens');
  const exTable = el('table', 'la-table la-answers');
  pEx.body.append(exTokens, exTable);

  // -- cache bytes ------------------------------------------------------------------------
  const pCache = panel(after, 'la.cache', { wide: true });
  pCache.el.classList.add('la-cache');
  const cacheHint = el('p', 'hint');
  pCache.el.insertBefore(cacheHint, pCache.chart);
  const cacheTable = el('table', 'la-table la-cache-table');
  pCache.el.append(cacheTable);

  // -- overwrite demo ---------------------------------------------------------------------
  const pMem = panel(after, 'la.memory', { chart: false, wide: true });
  const memHint = el('p', 'hint');
  pMem.el.append(memHint);
  const memAcc = el('p', 'la-mem-acc');
  const memTable = el('table', 'la-table la-mem');
  pMem.body.append(memAcc, memTable);

  // -- maps -------------------------------------------------------------------------------
  const pMaps = panel(after, 'la.maps', { chart: false, hint: 'la.maps_hint', wide: true });
  const mapsEl = el('div');
  pMaps.body.append(mapsEl);
  let tokens = [];
  const maps = mapGrid(mapsEl, {
    maxCell: 120,
    minCell: 30,
    tip: (h) => `${dash.arms[h.group]?.label ?? h.group} · ${tokens[h.row] ?? h.row} → ${tokens[h.col] ?? h.col} · ${h.masked ? '–' : h.value.toFixed(3)}`,
  });

  let last = null;

  function row(tag, cells, cls) {
    const tr = el('tr', cls);
    for (const c of cells) tr.append(c instanceof Node ? c : el(tag, null, String(c)));
    return tr;
  }

  function drawForms() {
    const m = last.meta;
    const rec = m.arms.filter((a) => a.forms);
    if (!rec.length) return;
    setText(formsHint, t('la.forms_hint', { n: rec[0].forms.shown[rec[0].forms.names[0]].length, chunk: rec[0].forms.chunk }));
    formsEl.replaceChildren(...rec.map((a) => {
      const i = m.arms.indexOf(a);
      const box = el('div', 'la-form');
      box.dataset.arm = a.label;
      const head = add(box, 'h4');
      const sw = el('i', 'la-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      head.append(sw, el('b', null, a.label), el('small', null, ` ${pick(a.title)}`));
      const table = add(box, 'table', 'la-table la-nums');
      for (const name of a.forms.names) {
        table.append(row('td', [el('th', null, name), ...a.forms.shown[name].map((v) => el('td', null, v.toFixed(6)))]));
      }
      const worst = Math.max(...Object.values(a.forms.max_abs_diff));
      const ok = worst < SIX;
      const p = add(box, 'p', `la-diff ${ok ? 'ok' : 'warn'}`, `${t('la.diff')}: ${worst.toExponential(1)} — ${t(ok ? 'la.agree' : 'la.disagree')}`);
      p.dataset.agree = String(ok);
      return box;
    }));
  }

  function drawExample() {
    const m = last.meta;
    setText(exHint, t('la.example_hint', { answer: m.answer, stale: m.stale }));
    const key = m.tokens[m.tokens.length - 1][0];
    exTokens.replaceChildren(...m.tokens.map((tok) => el('span', tok[0] === key ? 'la-tok hit' : 'la-tok', tok)));
    exTable.replaceChildren(
      row('th', [t('la.arm'), t('la.predicts'), t('la.p_answer'), t('la.p_stale')]),
      ...m.arms.map((a) => {
        const cls = a.predicted === m.answer ? 'ok' : a.predicted === m.stale ? 'warn' : '';
        const tr = row('td', [a.label, el('td', cls, a.predicted), fmt(a.p_answer, 3), fmt(a.p_stale, 3)]);
        tr.dataset.arm = a.label;
        return tr;
      }),
    );
  }

  function drawCache() {
    const m = last.meta;
    const n = m.decode_tokens;
    setText(cacheHint, t('la.cache_hint', { n }));
    const data = m.arms.map((a, i) => ({
      type: 'scatter', mode: 'lines', name: a.label,
      x: a.decode_bytes.map((_, j) => j + 1), y: a.decode_bytes,
      line: { color: COLORS[i % COLORS.length], width: 2 },
      hovertemplate: `${a.label}: %{y} B after %{x}<extra></extra>`,
    }));
    const layout = baseLayout({
      xaxis: { title: { text: t('la.tokens') } },
      yaxis: { title: { text: t('la.bytes') }, rangemode: 'tozero' },
      legend: { orientation: 'h', y: 1.12 },
    });
    whenPlotly((P) => reactIfChanged(P, pCache.chart, data, layout)); // measured once per model
    cacheTable.replaceChildren(
      row('th', [t('la.arm'), t('la.per_token'), t('la.state'), t('la.measured', { n }), t('la.flops', { n })]),
      ...m.arms.map((a) => {
        const tr = row('td', [a.label, bytes(a.kv_bytes_per_token), bytes(a.state_bytes),
          bytes(a.decode_bytes[a.decode_bytes.length - 1]), `${big(a.flops_per_token[0])} → ${big(a.flops_per_token[1])}`]);
        tr.dataset.arm = a.label;
        return tr;
      }),
    );
  }

  function drawMemory() {
    const m = last.meta.memory;
    const plain = last.tensors['memory.plain'];
    const delta = last.tensors['memory.delta'];
    if (!m || !plain || !delta) return;
    const p = ctx.params();
    setText(memHint, t('la.memory_hint', { keys: p.mem_keys, dim: p.mem_dim, rw: p.mem_rewrites }));
    setText(memAcc, t('la.mem_acc', { pr: pct(m.acc_plain[0]), pk: pct(m.acc_plain[1]), dr: pct(m.acc_delta[0]), dk: pct(m.acc_delta[1]) }));
    const V = plain.shape[1];
    // + 0 turns a −0.004 that rounds to 0 into '0.00', not '-0.00'
    const read = (tns, k, v) => (Number(tns.data[k * V + v].toFixed(2)) + 0).toFixed(2);
    const rows = [];
    m.rewritten.forEach((rw, k) => {
      if (!rw) return;
      const f = m.first[k], l = m.latest[k];
      rows.push(row('td', [`${t('la.key')} ${k}`, `${f} → ${l}`,
        el('td', 'warn', `${read(plain, k, f)} / ${read(plain, k, l)}`),
        el('td', 'ok', `${read(delta, k, f)} / ${read(delta, k, l)}`)]));
    });
    memTable.replaceChildren(row('th', [t('la.key'), t('la.old_new'), t('la.plain_reads'), t('la.delta_reads')]), ...rows);
  }

  function drawMaps() {
    const m = last.meta;
    tokens = m.tokens;
    const list = [];
    const groups = [];
    m.arms.forEach((a, g) => {
      for (let l = 0; ; l++) {
        const pat = last.tensors[`arm.${g}.blocks.${l}.attn.hook_pattern`];
        if (!pat) break;
        const [H, T, S] = pat.shape;
        for (let h = 0; h < H; h++) list.push({ data: pat.data, offset: h * T * S, rows: T, cols: S, group: g });
        if (!groups.includes(g)) groups.push(g);
      }
    });
    if (!list.length) return;
    const first = last.tensors[`arm.${groups[0]}.blocks.0.attn.hook_pattern`];
    const H = first.shape[0];
    const L = list.filter((x) => x.group === groups[0]).length / H;
    const mapLabels = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) mapLabels.push(t('la.layer_head', { l, h }));
    maps.draw(list, {
      title: (g, i) => `${m.arms[g].label} · ${mapLabels[i]}`,
      groupLabels: m.arms.map((a) => a.label), // indexed by arm: softmax 0, linear 1
      mapLabels,
      rowLabels: tokens, colLabels: tokens, rowTitle: t('la.query'), colTitle: t('la.keycol'),
      masked: (i, j) => j > i,
    });
  }

  function draw() {
    if (!last) return;
    drawForms();
    drawExample();
    drawCache();
    drawMemory();
    drawMaps();
  }

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.arms[0].decode_bytes) return;
      last = f;
      draw();
      root.dataset.step = String(f.step);
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); },
    relabel() {
      dash.relabel();
      for (const p of [pForms, pEx, pCache, pMem, pMaps]) p.relabel();
      maps.relabel();
      draw();
    },
  };
}
