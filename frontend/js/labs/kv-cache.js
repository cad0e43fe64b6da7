// View of `kv-cache`: the KV cache's bytes per token for MHA, GQA, MQA and MLA on the chosen
// shape (Qwen3-0.6B by default), per sequence, per batch, at the full context and for the
// article's batch; then four small models decoding live, their cache rows growing a token a
// step, drawn to scale, with the bytes the caches really hold. Every number is the server's
// (the config's methods and the caches' own byte counts); the page only formats and draws.
import { addStrings, t } from '../core/i18n.js';
import { setText, el } from '../core/dom.js';
import { panel } from '../components/panel.js';
import { lineChart } from '../components/lineChart.js';
import { COLORS } from '../components/plot.js';
import { fitCanvas, LUTS, paintMap } from '../components/mapGrid.js';

addStrings({
  en: {
    'kv.per_token': 'KV cache per token, on this shape',
    'kv.per_token_hint': 'Bytes per token = 2 (K and V) × layers × KV heads × d_head × bytes a number. MLA caches one latent (d_c) and one shared RoPE key (d_rope) a layer instead. Every figure is the model config\'s own (kv_bytes_per_token).',
    'kv.shape': 'Qwen3-0.6B shape{changed}: {layers} layers · {heads} query heads · {kv} KV heads · d_head {dh} · {dtype} ({bytes} bytes a number) · {params} parameters',
    'kv.changed': ' (changed)',
    'kv.layout': 'attention',
    'kv.numbers': 'numbers a layer caches',
    'kv.bytes_token': 'bytes per token',
    'kv.sequence': 'one sequence ({n} tokens)',
    'kv.batch': 'batch {b} × {n} tokens',
    'kv.context': 'full context ({n} tokens)',
    'kv.mha': 'MHA',
    'kv.gqa': 'GQA-{kv}',
    'kv.gqa_real': 'the real model',
    'kv.mqa': 'MQA',
    'kv.mla': 'MLA',
    'kv.mla_note': 'd_c {dc} + d_rope {dr}',
    'kv.kv_note': '{kv} KV heads',
    'kv.kv_factors': '2 × {kv} × {dh}',
    'kv.mla_factors': '{dc} + {dr}',
    'kv.formula': 'GQA: {factors} × {layers} layers × {bytes} bytes = {total}',
    'kv.article': 'The article\'s batch: {b} sequences × {n} tokens',
    'kv.article_hint': 'Decoding 50 sequences at once (the article\'s batch) keeps 50,000 tokens of cache.',
    'kv.times': '× {x} of GQA',
    'kv.live': 'Live decode: four small models, their caches growing a row a token',
    'kv.live_hint': 'Each small model has this shape\'s cache (layers, KV heads, d_head; MLA: d_c, d_rope) on a residual stream {d} wide, random weights: its tokens are noise, its cache\'s bytes are real. Press play: one token a step. Drawn to scale: layer 0\'s cache of the first sequence, one row a token, as wide as the numbers it holds (each column the mean |value| of {pool}; K and V each scaled to its own largest).',
    'kv.pic_aria': 'Layer 0 cache: {rows} rows of {n} numbers',
    'kv.rows': 'cache rows',
    'kv.measured': 'measured cache.nbytes',
    'kv.measured_token': 'measured per token',
    'kv.config_token': 'config says',
    'kv.equal': '= the config',
    'kv.differ': '≠ the config',
    'kv.seqs': 'sequences',
    'kv.bytes_chart': 'Bytes the caches hold, as tokens are generated',
    'kv.kib_axis': 'KiB (1 KiB = 1,024 bytes)',
    'kv.rows_axis': 'cache rows (tokens)',
  },
  zh: {
    'kv.per_token': '这个形状下，每个 token 的 KV 缓存',
    'kv.per_token_hint': '每个 token 的字节数 = 2（K 和 V）× 层数 × KV 头数 × d_head × 每个数的字节数。MLA 每层只缓存一个潜向量（d_c）和一个共享的 RoPE 键（d_rope）。每个数字都出自模型配置自己的方法（kv_bytes_per_token）。',
    'kv.shape': 'Qwen3-0.6B 的形状{changed}：{layers} 层 · {heads} 个查询头 · {kv} 个 KV 头 · d_head {dh} · {dtype}（每个数 {bytes} 字节）· {params} 个参数',
    'kv.changed': '（已修改）',
    'kv.layout': '注意力',
    'kv.numbers': '每层缓存的数',
    'kv.bytes_token': '每个 token 的字节数',
    'kv.sequence': '一条序列（{n} 个 token）',
    'kv.batch': '批 {b} × {n} 个 token',
    'kv.context': '完整上下文（{n} 个 token）',
    'kv.mha': 'MHA',
    'kv.gqa': 'GQA-{kv}',
    'kv.gqa_real': '真实模型',
    'kv.mqa': 'MQA',
    'kv.mla': 'MLA',
    'kv.mla_note': 'd_c {dc} + d_rope {dr}',
    'kv.kv_note': '{kv} 个 KV 头',
    'kv.kv_factors': '2 × {kv} × {dh}',
    'kv.mla_factors': '{dc} + {dr}',
    'kv.formula': 'GQA：{factors} × {layers} 层 × {bytes} 字节 = {total}',
    'kv.article': '文章里的批：{b} 条序列 × {n} 个 token',
    'kv.article_hint': '同时解码 50 条序列（文章里的批大小），缓存里就有 50,000 个 token。',
    'kv.times': 'GQA 的 {x} 倍',
    'kv.live': '现场解码：四个小模型，缓存每个 token 长一行',
    'kv.live_hint': '每个小模型的缓存和这个形状一样（层数、KV 头数、d_head；MLA：d_c、d_rope），残差流只有 {d} 维、权重随机：它写出的 token 是噪声，缓存占的字节是真的。按播放：每步一个 token。按比例画：第 0 层里第一条序列的缓存，一个 token 一行，宽度就是它存的数的个数（每一列是 {pool} 个数的平均 |值|；K 和 V 各按自己的最大值着色）。',
    'kv.pic_aria': '第 0 层的缓存：{rows} 行，每行 {n} 个数',
    'kv.rows': '缓存行数',
    'kv.measured': '实测 cache.nbytes',
    'kv.measured_token': '实测每个 token',
    'kv.config_token': '配置算出',
    'kv.equal': '= 配置',
    'kv.differ': '≠ 配置',
    'kv.seqs': '序列数',
    'kv.bytes_chart': '生成过程中缓存占的字节',
    'kv.kib_axis': 'KiB（1 KiB = 1,024 字节）',
    'kv.rows_axis': '缓存行数（token）',
  },
});

export const stylesheet = '/css/labs/kv-cache.css';
export const lazyPlotly = true; // the tables and the canvas come first; the chart when plotly does

const ARMS = ['mha', 'gqa', 'mqa', 'mla'];
const ARM_COLORS = { mha: COLORS[4], gqa: COLORS[0], mqa: COLORS[2], mla: COLORS[3] };
const UNITS = [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]];

/** Bytes in binary units: exact when the value has at most 3 decimals (4.375 GiB), else 3
 * significant digits (5.34 GiB). */
export function fmtBytes(b) {
  for (const [unit, size] of UNITS) {
    if (b >= size) {
      const v = b / size;
      const exact = Math.abs(v * 1000 - Math.round(v * 1000)) < 1e-9;
      return `${exact ? Number(v.toFixed(3)) : Number(v.toPrecision(3))} ${unit}`;
    }
  }
  return `${b.toLocaleString('en-US')} B`;
}

const num = (n) => Math.round(n).toLocaleString('en-US');

export default function mount(root, ctx) {
  root.innerHTML = '';
  const grid = el('div', 'view-grid kv-view');
  root.append(grid);

  // -- computed figures -------------------------------------------------------------------
  const pFig = panel(grid, 'kv.per_token', { chart: false, hint: 'kv.per_token_hint', wide: true });
  const shapeLine = el('p', 'kv-shape');
  const table = el('table', 'kv-table');
  const thead = el('thead');
  const tbody = el('tbody');
  table.append(thead, tbody);
  const formula = el('p', 'kv-formula');
  pFig.body.append(shapeLine, table, formula);

  // -- live decode ------------------------------------------------------------------------
  const pLive = panel(grid, 'kv.live', { chart: false, wide: true });
  const liveHint = el('p', 'hint');
  pLive.el.append(liveHint);
  const liveRow = el('div', 'kv-live');
  pLive.body.append(liveRow);
  const cols = Object.fromEntries(ARMS.map((arm) => {
    const col = el('div', 'kv-col');
    col.dataset.arm = arm;
    const name = el('h4');
    const canvas = el('canvas', 'kv-rows');
    canvas.setAttribute('role', 'img');
    const facts = el('dl', 'kv-facts');
    col.append(name, canvas, facts);
    liveRow.append(col);
    return [arm, { col, name, canvas, facts }];
  }));

  const pArt = panel(grid, null, { chart: false, hint: 'kv.article_hint' });
  const artTitle = el('h3');
  pArt.el.prepend(artTitle);
  const artList = el('dl', 'kv-article');
  pArt.body.append(artList);

  const pChart = panel(grid, 'kv.bytes_chart');
  let chart = null;
  const makeChart = () => lineChart(pChart.chart, {
    traces: ARMS.map((arm) => ({ key: `cache_bytes.${arm}`, name: arm.toUpperCase(), color: ARM_COLORS[arm] })),
    // In KiB, as the rest of the lab speaks (never "0.8×10⁶" bytes).
    xTitle: 'step', yTitle: t('kv.kib_axis'), yaxis: { exponentformat: 'none', separatethousands: true },
  });
  // The server's bytes, drawn in KiB (a unit, not a recomputation).
  const inKiB = (rows) => rows.map(({ step, values }) => ({
    step, values: Object.fromEntries(ARMS.map((a) => [`cache_bytes.${a}`, values[`cache_bytes.${a}`] / 1024])),
  }));
  chart = makeChart();
  let history = []; // this run's scalar rows: a relabelled chart is rebuilt from them

  let last = null;

  function armName(arm, m) {
    return arm === 'gqa' ? t('kv.gqa', { kv: m.n_kv_heads }) : t(`kv.${arm}`);
  }

  function armNote(arm, m) {
    if (arm === 'mla') return t('kv.mla_note', { dc: m.d_c, dr: m.d_rope });
    const kv = m.figures[arm].n_kv_heads;
    return t('kv.kv_note', { kv });
  }

  function factors(arm, m) {
    if (arm === 'mla') return t('kv.mla_factors', { dc: m.d_c, dr: m.d_rope });
    return t('kv.kv_factors', { kv: m.figures[arm].n_kv_heads, dh: m.d_head });
  }

  function drawFigures() {
    const m = last.meta;
    const changed = m.changed ? t('kv.changed') : '';
    setText(shapeLine, t('kv.shape', {
      changed, layers: m.n_layers, heads: m.n_heads, kv: m.n_kv_heads, dh: m.d_head,
      dtype: m.dtype, bytes: m.bytes_per_number, params: num(m.param_count),
    }));
    thead.replaceChildren(el('tr'));
    for (const h of [t('kv.layout'), t('kv.numbers'), t('kv.bytes_token'), t('kv.sequence', { n: num(m.length) }),
      t('kv.batch', { b: num(m.batch), n: num(m.length) }), t('kv.context', { n: num(m.n_ctx) })]) {
      thead.firstChild.append(el('th', null, h));
    }
    const max = Math.max(...ARMS.map((a) => m.figures[a].bytes_per_token));
    tbody.replaceChildren(...ARMS.map((arm) => {
      const f = m.figures[arm];
      const tr = el('tr');
      tr.dataset.arm = arm;
      const name = el('td', 'kv-name');
      name.append(el('b', null, armName(arm, m)), el('small', null, ` ${armNote(arm, m)}`));
      if (arm === 'gqa' && !m.changed) name.append(el('small', 'kv-real', ` · ${t('kv.gqa_real')}`));
      const bar = el('span', 'kv-bar');
      bar.style.width = `${(100 * f.bytes_per_token) / max}%`;
      bar.style.background = ARM_COLORS[arm];
      const bytes = el('td', 'kv-bpt');
      bytes.append(el('b', null, fmtBytes(f.bytes_per_token)), el('small', null, ` ${num(f.bytes_per_token)} B`), bar);
      bytes.title = `${num(f.bytes_per_token)} B`;
      const numbers = el('td', null, `${factors(arm, m)} = ${num(f.numbers_per_layer)}`);
      tr.append(name, numbers, bytes);
      for (const k of ['per_sequence', 'batch_total', 'full_context']) {
        const td = el('td', `kv-${k}`, fmtBytes(f[k]));
        td.title = `${num(f[k])} B`;
        tr.append(td);
      }
      return tr;
    }));
    const g = m.figures.gqa;
    setText(formula, t('kv.formula', {
      factors: factors('gqa', m), layers: m.n_layers, bytes: m.bytes_per_number,
      total: `${num(g.bytes_per_token)} B = ${fmtBytes(g.bytes_per_token)}`,
    }));
    setText(artTitle, t('kv.article', { b: m.article.batch, n: num(m.article.length) }));
    artList.replaceChildren(...ARMS.flatMap((arm) => {
      const f = m.figures[arm];
      const dd = el('dd', null, fmtBytes(f.article));
      dd.dataset.arm = arm;
      dd.title = `${num(f.article)} B`;
      if (arm !== 'gqa') dd.append(el('small', null, ` ${t('kv.times', { x: Number(f.vs_gqa.toPrecision(3)) })}`));
      return [el('dt', null, armName(arm, m)), dd];
    }));
  }

  function drawLive() {
    const m = last.meta;
    const maxRows = m.max_rows;
    const widest = Math.max(...ARMS.map((a) => last.tensors[`cache.${a}`].shape[1]));
    setText(liveHint, t('kv.live_hint', { d: m.live.gqa.d_model, pool: m.picture_pool }));
    ARMS.forEach((arm) => {
      const c = cols[arm];
      const live = m.live[arm];
      setText(c.name, armName(arm, m));
      // Layer 0's cache as it is, to scale: a row a cached token, as wide as its numbers.
      const pic = last.tensors[`cache.${arm}`];
      const [rows, n] = pic.shape; // [tokens cached, numbers / pool]
      const width = c.canvas.parentElement.clientWidth || 160;
      const height = 180;
      const g = fitCanvas(c.canvas, width, height);
      g.clearRect(0, 0, width, height);
      g.strokeStyle = '#dcd8cf';
      g.strokeRect(0.5, 0.5, width - 1, height - 1);
      const rh = height / maxRows;
      if (rows) paintMap(g, pic.data, 0, rows, n, 0, 0, (width * n) / widest, rows * rh, { lut: LUTS.viridis, range: [pic.min, pic.max] });
      c.canvas.setAttribute('aria-label', t('kv.pic_aria', { rows, n: num(n * m.picture_pool) }));
      const ok = live.per_token === live.config_per_token;
      const facts = [
        [t('kv.rows'), `${live.rows} / ${maxRows}`],
        [t('kv.seqs'), String(live.batch)],
        [t('kv.measured'), `${num(live.nbytes)} B`],
        [t('kv.measured_token'), `${fmtBytes(live.per_token)}`],
        [t('kv.config_token'), `${fmtBytes(live.config_per_token)} ${t(ok ? 'kv.equal' : 'kv.differ')}`],
      ];
      c.facts.replaceChildren(...facts.flatMap(([k, v]) => [el('dt', null, k), el('dd', null, v)]));
      c.facts.dataset.rows = String(live.rows);
      c.facts.dataset.perToken = String(live.per_token);
      c.facts.lastChild.classList.toggle('ok', ok);
      c.facts.lastChild.classList.toggle('warn', !ok);
    });
  }

  function draw() {
    if (!last) return;
    drawFigures();
    drawLive();
  }
  // The pictures are as wide as their column: redrawn when the page reflows (a phone turned).
  let width = 0;
  new ResizeObserver(() => {
    const w = liveRow.clientWidth;
    if (w !== width) { width = w; if (last) drawLive(); }
  }).observe(liveRow);

  return {
    frame(f) {
      if (!f.meta || !f.meta.figures) return;
      last = f;
      draw();
      root.dataset.step = String(f.step);
    },
    scalars(rows) { history.push(...rows); chart.add(inKiB(rows)); },
    reset() { history = []; chart.clear(); },
    relabel() {
      for (const p of [pFig, pArt, pLive, pChart]) p.relabel();
      chart = makeChart();
      chart.add(inKiB(history));
      draw();
    },
  };
}
