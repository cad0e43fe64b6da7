// View of `attention-variants`: five arms of one small decoder (MHA, GQA, MQA, CLA, MLA)
// trained side by side. The dashboard draws the loss and held-out accuracy by arm and the
// gradient waterfall; this view adds each arm's KV cache per token (the config's figure
// beside the bytes a live decode's cache really held), what each arm decodes for the fixed
// example, the MLA absorbed-vs-explicit check with its RoPE toggle, and every arm's
// attention maps. Every number comes from the server; the page only draws.
import { addStrings, pick, t } from '../core/i18n.js';
import { setText, el } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, whenPlotly } from '../components/plot.js';

addStrings({
  en: {
    'av.loss': 'Training loss by arm (same batches, same seed)',
    'av.train_loss': 'loss',
    'av.acc': 'Exact answers on each fresh batch (scored before the update)',
    'av.seq_acc': 'exact',
    'av.cache': 'KV cache per token: the config, and a live decode',
    'av.cache_hint': 'Config: kv_bytes_per_token(float32). Measured: the arm greedily decodes the example\'s answer with its KV cache; cache.nbytes ÷ cached tokens. CLA: each group of {share} neighbouring layers keeps one layer\'s K/V. MLA: only the latent d_c and the RoPE key d_rope.',
    'av.arm': 'arm',
    'av.kept': 'what it caches a token',
    'av.config': 'config',
    'av.measured': 'measured',
    'av.loss_now': 'loss',
    'av.decoded': 'decodes the example',
    'av.solved': 'solved (held-out > {pct}%)',
    'av.solved_at': 'at step {step}',
    'av.not_yet': 'not yet',
    'av.mha_kept': '{layers} layers × 2 × {kv} heads × {dh}',
    'av.cla_kept': '{kvl} of {layers} layers × 2 × {kv} heads × {dh}',
    'av.mla_kept': '{layers} layers × ({dc} + {dr})',
    'av.equal': '=',
    'av.differ': '≠',
    'av.trade': 'Loss against cache size, now',
    'av.trade_hint': 'Each arm at this step: the KV cache it keeps per token (config) and its training loss. Lower left is better.',
    'av.trade_x': 'KV-cache bytes per token',
    'av.trade_y': 'loss',
    'av.mla': 'MLA: absorbed vs explicit scores',
    'av.mla_hint': 'Explicit: rebuild every key from the cached latent, k = W_uk·c, then q·k. Absorbed: fold W_uk into the query once, (W_ukᵀq)·c, and never rebuild K. With RoPE only in the decoupled part they are the same number; RoPE inside the compressed path rotates each rebuilt key by its position, and W_uk can no longer be folded.',
    'av.mla_diff': 'largest |explicit − absorbed|',
    'av.mla_scale': 'largest |score|',
    'av.mla_agree': 'agree (rounding)',
    'av.mla_disagree': 'disagree',
    'av.rope_in': 'Put RoPE inside the compressed path',
    'av.rope_out': 'Take RoPE back out (decoupled)',
    'av.rope_now_in': 'RoPE is inside the compressed path.',
    'av.rope_now_out': 'RoPE is only in the decoupled part.',
    'av.maps': 'Attention on the example, every arm, layer and head',
    'av.maps_hint': 'Rows: query tokens; columns: keys. Click a map to enlarge it.',
    'av.layer_head': 'L{l} H{h}',
    'av.query': 'query',
    'av.key': 'key',
    'av.example': 'Example: {prompt} → {answer}',
  },
  zh: {
    'av.loss': '各变体的训练损失（同样的批、同样的随机种子）',
    'av.train_loss': '损失',
    'av.acc': '每个新批次上整串答对的比例（更新之前评分）',
    'av.seq_acc': '整串',
    'av.cache': '每个 token 的 KV 缓存：配置算出的，和现场解码实测的',
    'av.cache_hint': '配置：kv_bytes_per_token(float32)。实测：这个变体用自己的 KV 缓存贪心解码示例的答案，cache.nbytes ÷ 缓存的 token 数。CLA：每相邻 {share} 层只存一层的 K/V。MLA：只存潜向量 d_c 和 RoPE 键 d_rope。',
    'av.arm': '变体',
    'av.kept': '每个 token 缓存什么',
    'av.config': '配置',
    'av.measured': '实测',
    'av.loss_now': '损失',
    'av.decoded': '解码示例',
    'av.solved': '学会（留出集 > {pct}%）',
    'av.solved_at': '第 {step} 步',
    'av.not_yet': '还没有',
    'av.mha_kept': '{layers} 层 × 2 × {kv} 个头 × {dh}',
    'av.cla_kept': '{layers} 层中的 {kvl} 层 × 2 × {kv} 个头 × {dh}',
    'av.mla_kept': '{layers} 层 × ({dc} + {dr})',
    'av.equal': '=',
    'av.differ': '≠',
    'av.trade': '此刻的损失与缓存大小',
    'av.trade_hint': '每个变体在这一步：每个 token 的 KV 缓存（配置算出）和训练损失。越靠左下越好。',
    'av.trade_x': '每个 token 的 KV 缓存字节数',
    'av.trade_y': '损失',
    'av.mla': 'MLA：吸收形式与显式形式的注意力分数',
    'av.mla_hint': '显式：用缓存的潜向量重建每个键 k = W_uk·c，再算 q·k。吸收：把 W_uk 一次性并进查询（W_ukᵀq）·c，永远不重建 K。RoPE 只在解耦部分时两者是同一个数；RoPE 放进压缩路径后，每个重建出的键按位置旋转，W_uk 就并不进去了。',
    'av.mla_diff': '最大 |显式 − 吸收|',
    'av.mla_scale': '最大 |分数|',
    'av.mla_agree': '一致（舍入误差）',
    'av.mla_disagree': '对不上',
    'av.rope_in': '把 RoPE 放进压缩路径',
    'av.rope_out': '把 RoPE 移回解耦部分',
    'av.rope_now_in': 'RoPE 现在在压缩路径里。',
    'av.rope_now_out': 'RoPE 现在只在解耦部分。',
    'av.maps': '示例上的注意力：每个变体、每层、每个头',
    'av.maps_hint': '行是查询 token，列是键。点一张图放大。',
    'av.layer_head': '层{l} 头{h}',
    'av.query': '查询',
    'av.key': '键',
    'av.example': '示例：{prompt} → {answer}',
  },
});

export const stylesheet = '/css/labs/attention-variants.css';
export const lazyPlotly = true; // the tables and maps are DOM and canvas; curves when plotly comes

// A relative difference below this is rounding (float32 scores agree to ~1e-7 of their size).
const AGREE = 1e-4;
const TRADE_MS = 400;

const num = (n) => Math.round(n).toLocaleString('en-US');
const bytes = (b) => (b >= 1024 ? `${Number((b / 1024).toPrecision(4))} KiB` : `${num(b)} B`);

export default function mount(root, ctx) {
  root.innerHTML = '';
  const view = el('div', 'av-view');
  root.append(view);
  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'av.loss', keys: [{ key: 'loss', name: 'av.train_loss' }], logY: true },
      { title: 'av.acc', keys: [{ key: 'train_seq_acc', name: 'av.seq_acc' }], legend: 'low', kept: false },
    ],
  });
  const pics = dash.picturesEl; // above the curves: the cache table
  pics.classList.add('av-pictures');
  const after = dash.grid; // after the curves, waterfall and readout: the MLA check, the maps

  // -- cache table ------------------------------------------------------------------------
  const pCache = panel(pics, 'av.cache', { chart: false, wide: true });
  const cacheHint = el('p', 'hint');
  pCache.el.append(cacheHint);
  const example = el('p', 'av-example');
  const table = el('table', 'av-table');
  const thead = el('thead');
  const tbody = el('tbody');
  table.append(thead, tbody);
  pCache.body.append(example, table);

  // -- loss vs cache size -----------------------------------------------------------------
  const pTrade = panel(after, 'av.trade', { hint: 'av.trade_hint' });
  pTrade.el.classList.add('av-trade');
  let tradeAt = 0;
  let tradeTimer = null;
  function drawTrade() {
    if (!last) return;
    const now = performance.now();
    if (now - tradeAt < TRADE_MS) { // plotly redraws cost ~10 ms: a few times a second is plenty
      clearTimeout(tradeTimer);
      tradeTimer = setTimeout(drawTrade, TRADE_MS);
      return;
    }
    tradeAt = now;
    const arms = last.meta.arms;
    const loss = arms.map((_, i) => last.scalars[`arm.${i}.loss`]);
    const data = [{
      type: 'scatter', mode: 'markers+text', textposition: 'top center',
      x: arms.map((a) => a.config_bytes_per_token), y: loss, text: arms.map((a) => a.label),
      marker: { size: 12, color: arms.map((_, i) => COLORS[i % COLORS.length]) },
      hovertemplate: '%{text}: %{x} B, loss %{y:.3g}<extra></extra>',
    }];
    const layout = baseLayout({
      xaxis: { title: { text: t('av.trade_x') }, type: 'log' },
      yaxis: { title: { text: t('av.trade_y') }, type: 'log', exponentformat: 'power' },
    });
    whenPlotly((P) => P.react(pTrade.chart, data, layout, CONFIG));
  }

  // -- MLA check --------------------------------------------------------------------------
  const pMla = panel(after, 'av.mla', { chart: false, hint: 'av.mla_hint' });
  const mlaState = el('p', 'av-mla-state');
  const mlaFacts = el('dl', 'av-mla');
  const toggle = el('button', 'av-toggle');
  toggle.type = 'button';
  toggle.dataset.act = 'rope-toggle';
  toggle.onclick = () => ctx.setParams({ mla_rope_in_latent: !ctx.params().mla_rope_in_latent });
  pMla.body.append(mlaState, mlaFacts, toggle);

  // -- attention maps ---------------------------------------------------------------------
  const pMaps = panel(after, 'av.maps', { chart: false, hint: 'av.maps_hint', wide: true });
  const mapsEl = el('div');
  pMaps.body.append(mapsEl);
  let tokens = [];
  let selecting = false;
  const { store } = ctx;
  const maps = mapGrid(mapsEl, {
    maxCell: 92,
    minCell: 26,
    onSelect: (h) => { // the enlarged map is view state (keys arm, map): URL and class follow
      selecting = true;
      store.set('arm', h ? h.group : null);
      store.set('map', h ? h.map : null);
      selecting = false;
    },
    tip: (h) => `${dash.arms[h.group]?.label ?? h.group} · ${tokens[h.row] ?? h.row} (${h.row}) → ${tokens[h.col] ?? h.col} (${h.col}) · ${h.masked ? '–' : h.value.toFixed(3)}`,
  });

  let last = null;

  function kept(a) {
    if (a.label === 'MLA') return t('av.mla_kept', { layers: a.kv_layers, dc: a.d_c, dr: a.d_rope });
    const vars = { layers: a.n_layers, kvl: a.kv_layers, kv: a.n_kv_heads, dh: a.d_head };
    return t(a.kv_layers < a.n_layers ? 'av.cla_kept' : 'av.mha_kept', vars);
  }

  function drawTable() {
    const m = last.meta;
    const arms = m.arms;
    setText(cacheHint, t('av.cache_hint', { share: m.cla_share }));
    setText(example, t('av.example', { prompt: m.prompt.join(' '), answer: m.answer.join(' ') }));
    thead.replaceChildren(el('tr'));
    const pct = Math.round(100 * m.solved_threshold);
    for (const h of ['av.arm', 'av.kept', 'av.config', 'av.measured', 'av.loss_now', 'av.decoded', 'av.solved']) thead.firstChild.append(el('th', null, t(h, { pct })));
    const widest = Math.max(...arms.map((a) => a.config_bytes_per_token));
    tbody.replaceChildren(...arms.map((a, i) => {
      const tr = el('tr');
      tr.dataset.arm = a.label;
      const name = el('td', 'av-name');
      const sw = el('i', 'av-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      name.append(sw, el('b', null, a.label), el('small', null, ` ${pick(a.title)}`));
      const conf = el('td', 'av-config');
      conf.append(el('b', null, bytes(a.config_bytes_per_token)));
      const bar = el('span', 'av-bar');
      bar.style.width = `${(100 * a.config_bytes_per_token) / widest}%`;
      bar.style.background = COLORS[i % COLORS.length];
      conf.append(bar);
      const same = a.measured_bytes_per_token === a.config_bytes_per_token;
      const meas = el('td', `av-measured ${same ? 'ok' : 'warn'}`, `${t(same ? 'av.equal' : 'av.differ')} ${bytes(a.measured_bytes_per_token)}`);
      meas.title = `${num(a.cache_bytes)} B / ${a.cache_rows}`;
      const loss = m.scalars ? m.scalars[`arm.${i}.loss`] : undefined;
      const lossTd = el('td', 'av-loss', loss === undefined ? '–' : fmt(loss, 3));
      const dec = el('td', `av-decoded ${a.decoded_right ? 'ok' : ''}`, `${a.decoded.join(' ')} ${a.decoded_right ? '✓' : '✗'}`);
      const solved = el('td', 'av-solved', a.solved_at ? t('av.solved_at', { step: a.solved_at }) : t('av.not_yet'));
      tr.append(name, el('td', 'av-kept', kept(a)), conf, meas, lossTd, dec, solved);
      return tr;
    }));
  }

  function drawMla() {
    const m = last.meta;
    const a = m.arms.find((x) => x.label === 'MLA');
    if (!a || !a.mla_check) return;
    const { max_abs_diff: diff, max_abs_score: scale } = a.mla_check;
    const agree = diff <= AGREE * Math.max(scale, 1e-12);
    const inLatent = !!m.mla_rope_in_latent;
    setText(mlaState, t(inLatent ? 'av.rope_now_in' : 'av.rope_now_out'));
    mlaFacts.replaceChildren(
      el('dt', null, t('av.mla_diff')), el('dd', `av-diff ${agree ? 'ok' : 'warn'}`, `${diff.toExponential(2)} — ${t(agree ? 'av.mla_agree' : 'av.mla_disagree')}`),
      el('dt', null, t('av.mla_scale')), el('dd', null, fmt(scale, 4)),
    );
    mlaFacts.dataset.agree = String(agree);
    setText(toggle, t(inLatent ? 'av.rope_out' : 'av.rope_in'));
    toggle.hidden = ctx.store.get('role') !== 'driver';
  }

  function drawMaps() {
    const m = last.meta;
    tokens = m.tokens;
    const list = [];
    const L = m.arms[0].n_layers;
    m.arms.forEach((a, g) => {
      for (let l = 0; l < L; l++) {
        const p = last.tensors[`arm.${g}.blocks.${l}.attn.hook_pattern`];
        if (!p) continue;
        const [H, T, S] = p.shape;
        for (let h = 0; h < H; h++) list.push({ data: p.data, offset: h * T * S, rows: T, cols: S, group: g });
      }
    });
    if (!list.length) return;
    const H = last.tensors['arm.0.blocks.0.attn.hook_pattern'].shape[0];
    const mapLabels = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) mapLabels.push(t('av.layer_head', { l, h }));
    maps.draw(list, {
      title: (g, i) => `${m.arms[g].label} · ${mapLabels[i]}`,
      groupLabels: m.arms.map((a) => a.label),
      mapLabels,
      rowLabels: tokens, colLabels: tokens, rowTitle: t('av.query'), colTitle: t('av.key'),
      masked: (i, j) => j > i,
    });
  }

  function draw() {
    if (!last) return;
    drawTable();
    drawTrade();
    drawMla();
    drawMaps();
  }

  ctx.store.on('role', () => { if (last) drawMla(); });
  // A link or the teacher names a map (arm, map): enlarge it, once there is a frame.
  const followZoom = () => {
    if (selecting || !last) return;
    const a = store.get('arm'), m = store.get('map');
    const z = maps.zoomed;
    if (a === null || a === undefined || m === null || m === undefined) { if (z) maps.close(); } else if (!z || z.group !== a || z.map !== m) maps.open(a, m);
  };
  store.on('arm', followZoom);
  store.on('map', followZoom);

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.arms[0].decoded) return;
      last = { ...f, meta: { ...f.meta, scalars: f.scalars } };
      const first = !root.dataset.step;
      draw();
      if (first) followZoom();
      root.dataset.step = String(f.step);
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); },
    relabel() {
      dash.relabel();
      for (const p of [pCache, pTrade, pMla, pMaps]) p.relabel();
      tradeAt = 0;
      maps.relabel();
      draw();
    },
  };
}
