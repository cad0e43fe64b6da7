// View of `ffn-moe`: ReLU, GELU, SwiGLU and a mixture of experts as the FFN of one small
// decoder, trained side by side. The dashboard draws loss and dead units by arm; this view
// adds the MoE arm's per-expert load as a heatmap (expert × step, from the streamed
// `arm.3.load.<layer>.<e>` scalars) and bars (this step), the top-2 share, the balancing
// switch, which experts each token of the example goes to, and the facts (SiLU's minimum,
// Qwen3's FFN ratio, total vs active parameters, DeepSeek-V3). Every number comes from the
// server; the page only draws.
import { addStrings, pick, t } from '../core/i18n.js';
import { setText, el, add } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { heatmap } from '../components/heatmap.js';
import { bars } from '../components/bars.js';
import { lineChart } from '../components/lineChart.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, throttleCost, whenPlotly } from '../components/plot.js';

export const stylesheet = '/css/labs/ffn-moe.css';

addStrings({
  en: {
    'ffn-moe.loss': 'Training loss by arm (same batches, same seed)',
    'ffn-moe.train_loss': 'loss',
    'ffn-moe.dead': 'Dead units per layer (pre-activation never positive on held-out text)',
    'ffn-moe.layer0': 'layer 0', 'ffn-moe.layer1': 'layer 1',
    'ffn-moe.heat': 'MoE: each expert’s share of the routed slots, step by step',
    'ffn-moe.heat_hint': 'Rows: experts; columns: training steps; colour: the fraction of this step’s token slots the router sent to that expert. Even load is 1/{E} each. Turn the balancing loss off and a few rows take over.',
    'ffn-moe.expert': 'expert',
    'ffn-moe.step': 'step',
    'ffn-moe.bars': 'MoE: load this step',
    'ffn-moe.top2': 'Load share of the two busiest experts (even: {even})',
    'ffn-moe.top2_key': 'top-2 share',
    'ffn-moe.balance_on': 'The balancing loss is on (coefficient {coef}).',
    'ffn-moe.balance_off': 'The balancing loss is off: nothing keeps the load even.',
    'ffn-moe.turn_off': 'Turn the balancing loss off',
    'ffn-moe.turn_on': 'Turn the balancing loss on',
    'ffn-moe.routes': 'Which experts each token of the example goes to (MoE, layer {layer})',
    'ffn-moe.routes_hint': 'Each character’s chip is coloured by its first expert; below it, its top-{k} experts and their weights (renormalised over the chosen ones). {shared}',
    'ffn-moe.shared_yes': 'Every token also passes the shared expert.',
    'ffn-moe.shared_no': '',
    'ffn-moe.facts': 'Facts, computed',
    'ffn-moe.silu': 'SiLU’s minimum: {y} at x = {x}: SiLU goes below 0 and above 1, it is not a 0–1 gate.',
    'ffn-moe.ratio': 'FFN ratio of Qwen3-0.6B: {ff} / {d} = {r}',
    'ffn-moe.ds': 'DeepSeek-V3 (config of the deepseek-v3 preset): {total} total, {active} active per token; {E} routed experts + {S} shared per MoE layer, {k} routed + the shared one active per token, the first {dense} of {L} layers dense.',
    'ffn-moe.params': 'Parameters of each arm (from its config)',
    'ffn-moe.arm': 'arm',
    'ffn-moe.total': 'total',
    'ffn-moe.active': 'active per token',
    'ffn-moe.ratio_col': 'd_ff / d_model',
    'ffn-moe.acts': 'ReLU, GELU and SiLU',
  },
  zh: {
    'ffn-moe.loss': '各变体的训练损失（同样的批、同样的随机种子）',
    'ffn-moe.train_loss': '损失',
    'ffn-moe.dead': '每层的死单元（在留出文本上预激活从不为正）',
    'ffn-moe.layer0': '第 0 层', 'ffn-moe.layer1': '第 1 层',
    'ffn-moe.heat': '混合专家：每一步路由给每个专家的 token 份额（每个 token 占 k 份）',
    'ffn-moe.heat_hint': '行：专家；列：训练步；颜色：这一步的 token 名额里路由器送到该专家的比例。均匀时每个 1/{E}。关掉均衡损失，少数几行就会占满。',
    'ffn-moe.expert': '专家',
    'ffn-moe.step': '步',
    'ffn-moe.bars': '混合专家：这一步的负载',
    'ffn-moe.top2': '最忙两个专家的负载占比（均匀时 {even}）',
    'ffn-moe.top2_key': '前两名占比',
    'ffn-moe.balance_on': '负载均衡损失已打开（系数 {coef}）。',
    'ffn-moe.balance_off': '负载均衡损失已关闭：没有什么让负载保持均匀。',
    'ffn-moe.turn_off': '关掉负载均衡损失',
    'ffn-moe.turn_on': '打开负载均衡损失',
    'ffn-moe.routes': '示例中每个 token 去了哪些专家（混合专家，第 {layer} 层）',
    'ffn-moe.routes_hint': '每个字符按它的第一个专家着色；下面是它的 top-{k} 专家和权重（在选中的专家之间重新归一化）。{shared}',
    'ffn-moe.shared_yes': '每个 token 还会经过共享专家。',
    'ffn-moe.shared_no': '',
    'ffn-moe.facts': '由计算得到的事实',
    'ffn-moe.silu': 'SiLU 的最小值：x = {x} 处为 {y}：SiLU 会小于 0 也会大于 1，它不是 0 到 1 的门。',
    'ffn-moe.ratio': 'Qwen3-0.6B 的 FFN 宽度比：{ff} / {d} = {r}',
    'ffn-moe.ds': 'DeepSeek-V3（deepseek-v3 预设的配置）：总参数 {total}，每个 token 激活 {active}；每个 MoE 层 {E} 个路由专家 + {S} 个共享专家，每个 token 激活 {k} 个路由专家和共享专家，{L} 层中前 {dense} 层是稠密的。',
    'ffn-moe.params': '每个变体的参数量（由配置算出）',
    'ffn-moe.arm': '变体',
    'ffn-moe.total': '总数',
    'ffn-moe.active': '每个 token 激活',
    'ffn-moe.ratio_col': 'd_ff / d_model',
    'ffn-moe.acts': 'ReLU、GELU 与 SiLU',
  },
});

const MOE = 3; // the MoE arm's index
const MAX_COLS = 400; // the heatmap shows the last this many steps
const billions = (n) => `${fmt(n / 1e9, 4)}B`;

export default function mount(root, ctx) {
  const dash = dashboard(root, ctx, {
    charts: [
      { title: 'ffn-moe.loss', keys: [{ key: 'loss', name: 'ffn-moe.train_loss' }], logY: true },
      { title: 'ffn-moe.dead', keys: [{ key: 'dead.0', name: 'ffn-moe.layer0', markers: true }, { key: 'dead.1', name: 'ffn-moe.layer1', markers: true }], kept: false, yaxis: { range: [-0.02, 1] }, cls: 'wide' },
    ],
    className: 'fm-view',
  });
  const pics = dash.picturesEl;
  pics.classList.add('fm-pictures');

  // -- the switch and the load ------------------------------------------------------------
  const pHeat = panel(pics, 'ffn-moe.heat', { wide: true });
  pHeat.el.classList.add('fm-heat');
  const heatHint = el('p', 'hint');
  const state = el('p', 'fm-state');
  const toggle = el('button', 'fm-toggle');
  toggle.type = 'button';
  toggle.dataset.act = 'balance-toggle';
  toggle.onclick = () => ctx.setParams({ balance: !ctx.params().balance });
  pHeat.el.insertBefore(state, pHeat.body);
  pHeat.el.insertBefore(toggle, pHeat.body);
  pHeat.el.append(heatHint);
  let heat = null;

  const pBars = panel(pics, 'ffn-moe.bars');
  pBars.el.classList.add('fm-bars');
  let loadBars = null;

  const pTop = panel(pics, 'ffn-moe.top2');
  pTop.el.classList.add('fm-top2');
  const topTitle = pTop.el.querySelector('h3');
  let topChart = null;

  // -- routes of the example --------------------------------------------------------------
  const pRoutes = panel(pics, null, { chart: false, wide: true });
  const routesTitle = add(pRoutes.el, 'h3');
  pRoutes.el.prepend(routesTitle);
  const routesHint = el('p', 'hint');
  const strip = el('div', 'fm-routes');
  pRoutes.body.append(strip, routesHint);

  // -- facts ------------------------------------------------------------------------------
  const after = dash.grid;
  const pFacts = panel(after, 'ffn-moe.facts', { chart: false, wide: true });
  const facts = el('ul', 'fm-facts');
  const table = el('table', 'fm-table');
  pFacts.body.append(facts, table);
  const pActs = panel(after, 'ffn-moe.acts');
  pActs.el.classList.add('fm-acts');

  let last = null;
  let rows = []; // [{step, load: [E]}] of the MoE layer, in order
  let layer = null;
  let nExperts = 0;

  function loadOf(values) {
    if (layer === null) return null;
    const out = [];
    for (let e = 0; e < nExperts; e++) {
      const v = values[`arm.${MOE}.load.${layer}.${e}`];
      if (v === undefined) return null;
      out.push(v);
    }
    return out;
  }

  function ensureCharts() {
    if (!heat) {
      heat = heatmap(pHeat.chart, { xTitle: t('ffn-moe.step'), yTitle: t('ffn-moe.expert'), colorscale: 'Viridis' });
      loadBars = bars(pBars.chart, { range: [0, 1] });
      topChart = lineChart(pTop.chart, { traces: [{ key: `arm.${MOE}.top2.${layer}`, name: 'ffn-moe.top2_key' }], xTitle: 'step', yaxis: { range: [0, 1.02] } });
    }
  }

  // A plotly heatmap and bars redrawn with new rows (tens of ms each, new tick labels):
  // within the page's shared budget for costly redraws, not at every animation frame.
  const drawHeat = throttleCost(() => {
    if (!heat || !rows.length) return;
    const shown = rows.slice(-MAX_COLS);
    const z = new Float32Array(nExperts * shown.length);
    shown.forEach((r, j) => r.load.forEach((v, e) => { z[e * shown.length + j] = v; }));
    heat.draw({ shape: [nExperts, shown.length], data: z }, { x: shown.map((r) => r.step), y: Array.from({ length: nExperts }, (_, e) => `E${e}`) });
    const now = shown[shown.length - 1].load;
    loadBars.draw(now.map((_, e) => `E${e}`), now, now.map((_, e) => COLORS[e % COLORS.length]));
  });

  function drawState() {
    const m = last.meta;
    setText(state, m.balance ? t('ffn-moe.balance_on', { coef: m.balance_coef }) : t('ffn-moe.balance_off'));
    state.dataset.balance = String(m.balance);
    setText(toggle, t(m.balance ? 'ffn-moe.turn_off' : 'ffn-moe.turn_on'));
    toggle.hidden = ctx.store.get('role') !== 'driver';
    setText(heatHint, t('ffn-moe.heat_hint', { E: nExperts }));
    const moe = m.arms[MOE];
    setText(topTitle, t('ffn-moe.top2', { even: fmt(moe.even_top2, 3) }));
  }

  function drawRoutes() {
    const m = last.meta;
    const moe = m.arms[MOE];
    const chosen = last.tensors[`arm.${MOE}.route.${layer}.chosen`];
    const gates = last.tensors[`arm.${MOE}.route.${layer}.gates`];
    if (!chosen || !gates) return;
    setText(routesTitle, t('ffn-moe.routes', { layer }));
    setText(routesHint, t('ffn-moe.routes_hint', { k: moe.top_k, shared: t(moe.shared_expert ? 'ffn-moe.shared_yes' : 'ffn-moe.shared_no') }));
    const [T, k] = chosen.shape;
    const chips = [];
    for (let i = 0; i < T; i++) {
      const chip = el('span', 'fm-chip');
      chip.dataset.i = String(i);
      const first = chosen.data[i * k];
      const ch = el('b', null, m.tokens[i]);
      ch.style.background = COLORS[first % COLORS.length];
      chip.append(ch);
      for (let j = 0; j < k; j++) chip.append(el('small', null, `E${chosen.data[i * k + j]} ${fmt(gates.data[i * k + j], 2)}`));
      chips.push(chip);
    }
    strip.replaceChildren(...chips);
  }

  function drawFacts() {
    const m = last.meta;
    const ds = m.deepseek_v3;
    const items = [
      t('ffn-moe.silu', { x: fmt(m.silu_min.x, 6), y: fmt(m.silu_min.y, 5) }),
      t('ffn-moe.ratio', { ff: m.qwen3.d_ff, d: m.qwen3.d_model, r: fmt(m.qwen3.ratio, 3) }),
      t('ffn-moe.ds', { total: billions(ds.total), active: billions(ds.active), E: ds.n_experts, S: ds.shared, k: ds.top_k, dense: ds.dense_layers, L: ds.n_layers }),
    ];
    facts.replaceChildren(...items.map((s) => el('li', null, s)));
    const head = el('tr');
    for (const h of ['ffn-moe.arm', 'ffn-moe.total', 'ffn-moe.active', 'ffn-moe.ratio_col']) head.append(el('th', null, t(h)));
    const body = m.arms.map((a, i) => {
      const tr = el('tr');
      tr.dataset.arm = a.label;
      const name = el('td');
      const sw = el('i', 'fm-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      name.append(sw, el('b', null, a.label), el('small', null, ` ${pick(a.title)}`));
      tr.append(name, el('td', 'fm-total', a.param_count.toLocaleString('en-US')), el('td', 'fm-active', a.active_param_count.toLocaleString('en-US')), el('td', null, `${a.d_ff} / ${a.d_model}`));
      return tr;
    });
    table.replaceChildren(el('thead'), el('tbody'));
    table.firstChild.append(head);
    table.lastChild.append(...body);
  }

  function drawActs() {
    const xs = last.tensors.act_xs, ys = last.tensors.act_curves;
    if (!xs || !ys) return;
    const n = xs.shape[0];
    const x = Array.from(xs.data);
    const data = ['ReLU', 'GELU', 'SiLU'].map((name, r) => ({ type: 'scatter', mode: 'lines', name, x, y: Array.from(ys.data.slice(r * n, (r + 1) * n)), line: { color: COLORS[r] } }));
    data.push({ type: 'scatter', mode: 'markers+text', name: 'min', x: [last.meta.silu_min.x], y: [last.meta.silu_min.y], text: [fmt(last.meta.silu_min.y, 5)], textposition: 'bottom center', marker: { color: COLORS[2], size: 8 }, showlegend: false });
    whenPlotly((P) => P.react(pActs.chart, data, baseLayout({ xaxis: { title: { text: 'x' } }, legend: { orientation: 'h', y: 1.12 } }), CONFIG));
  }

  function takeRows(newRows) {
    for (const r of newRows) {
      const load = loadOf(r.values);
      if (load) rows.push({ step: r.step, load });
    }
    if (topChart) topChart.add(newRows.filter((r) => r.values[`arm.${MOE}.top2.${layer}`] !== undefined));
    drawHeat();
  }

  let pending = [];
  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.arms[MOE] || f.meta.arms[MOE].moe_layers === undefined) return;
      const first = last === null;
      last = f;
      layer = f.meta.arms[MOE].moe_layers[0];
      nExperts = f.meta.arms[MOE].n_experts;
      ensureCharts();
      if (first && pending.length) { takeRows(pending); pending = []; }
      drawState();
      drawRoutes();
      if (first) { drawFacts(); drawActs(); }
      root.dataset.step = String(f.step);
    },
    scalars(newRows) {
      dash.onScalars(newRows);
      if (layer === null) pending.push(...newRows);
      else takeRows(newRows);
    },
    reset() {
      dash.reset();
      rows = [];
      pending = [];
      if (topChart) topChart.clear();
      last = null;
      layer = null;
    },
    relabel() {
      dash.relabel();
      for (const p of [pHeat, pBars, pTop, pFacts, pActs]) p.relabel();
      if (last) { drawState(); drawRoutes(); drawFacts(); drawActs(); }
    },
  };
}
