// View of `sparse-attention`: five arms of one small decoder (dense, window, sinks + window,
// strided, block selection) trained side by side. The dashboard draws the loss, the loss of
// answers past the window and the first token's attention by arm; this view adds each arm's
// masks and the reachability after each layer (both computed by the models), the accuracy
// by how far back an answer's source sits, the first-token mass per layer beside its uniform
// share, and every arm's attention maps. Every number comes from the server.
import { addStrings, pick, t } from '../core/i18n.js';
import { el, setText } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, whenPlotly } from '../components/plot.js';

addStrings({
  en: {
    'sparse-attention.loss': 'Training loss by arm (same batches, same seed)',
    'sparse-attention.train_loss': 'loss',
    'sparse-attention.far': 'Held-out loss of answers past the window (source ≥ w back)',
    'sparse-attention.loss_far': 'past the window',
    'sparse-attention.first': 'Attention on the first token <s> (last layer), and what uniform attention would give it',
    'sparse-attention.first_mass': 'on <s>',
    'sparse-attention.first_uniform': 'uniform share',
    'sparse-attention.masks': 'Masks on the example: which keys each query may see',
    'sparse-attention.masks_hint': 'Rows: queries; columns: keys; lit: allowed. Block selection depends on the data: a key is lit when any head chose its block. Click a map to enlarge it.',
    'sparse-attention.reach': 'Reachability after each layer: which earlier tokens can influence position t at all',
    'sparse-attention.reach_hint': 'The masks composed layer by layer (each layer adds what it reads to what the residual kept). A window w reaches w − 1 more tokens a layer: after {layers} layers, {reach} back.',
    'sparse-attention.dist': 'Held-out accuracy by how far back the answer\'s source sits',
    'sparse-attention.dist_hint': 'Dashed: the window w = {w} and the reach of a window after {layers} layers ({reach}). Chance is 1 in {n}.',
    'sparse-attention.past': 'Past the window (source ≥ {w} back), read off this run: {arms}. Reachable is not learned: a source the layers can reach may still be answered at chance.',
    'sparse-attention.past_arm': '{arm} above chance at {good}, near chance at {bad}',
    'sparse-attention.past_none': 'none',
    'sparse-attention.past_sink': '* the answer is a sink token itself, which the sinks arm always sees.',
    'sparse-attention.distance': 'tokens back',
    'sparse-attention.acc': 'accuracy',
    'sparse-attention.sink': 'The first token as a sink, per layer',
    'sparse-attention.sink_hint': '<s> carries nothing an answer needs. A head with nothing useful to read still has to put its softmax mass somewhere: mass on <s> well above the uniform share is a sink. Does it form with RoPE and without? Switch Positions and retrain.',
    'sparse-attention.arm': 'arm',
    'sparse-attention.layer': 'layer {l}: mean / top head / uniform',
    'sparse-attention.maps': 'Attention on the example, every arm, layer and head',
    'sparse-attention.lh': 'L{l} H{h}',
    'sparse-attention.l': 'L{l}',
    'sparse-attention.query': 'query',
    'sparse-attention.key': 'key',
    'sparse-attention.example': 'Example: {x}  (task {task}, positions {pos})',
  },
  zh: {
    'sparse-attention.loss': '各变体的训练损失（同样的批、同样的随机种子）',
    'sparse-attention.train_loss': '损失',
    'sparse-attention.far': '留出集上、来源在窗口之外（≥ w 个 token 之前）的答案的损失',
    'sparse-attention.loss_far': '窗口之外',
    'sparse-attention.first': '第一个 token <s> 上的注意力（最后一层），以及均匀注意力会给它的份额',
    'sparse-attention.first_mass': '<s> 上',
    'sparse-attention.first_uniform': '均匀份额',
    'sparse-attention.masks': '示例上的掩码：每个查询能看见哪些键',
    'sparse-attention.masks_hint': '行是查询，列是键；亮的是允许的。按块选择取决于数据：只要有一个头选了这一块，这个键就亮。点一张图放大。',
    'sparse-attention.reach': '每层之后的可达性：哪些更早的 token 还能影响位置 t',
    'sparse-attention.reach_hint': '把每层的掩码一层层复合（每层把读到的加到残差保留的上面）。窗口 w 每层多看 w − 1 个 token：{layers} 层之后是 {reach} 个。',
    'sparse-attention.dist': '留出集准确率，按答案的来源在多少个 token 之前',
    'sparse-attention.dist_hint': '虚线：窗口 w = {w}，以及窗口在 {layers} 层之后的可达距离（{reach}）。随机猜测的水平是 1/{n}。',
    'sparse-attention.past': '窗口之外（来源在 ≥ {w} 个 token 之前），从本次训练读出：{arms}。能够到不等于学会了：层层能够到的来源，答对率也可能只在随机猜测的水平。',
    'sparse-attention.past_arm': '{arm} 在 {good} 高于随机猜测的水平，在 {bad} 接近随机猜测的水平',
    'sparse-attention.past_none': '无',
    'sparse-attention.past_sink': '* 答案本身就是注意力汇点 token，“注意力汇点 + 窗口”这个变体总能看见它。',
    'sparse-attention.distance': '往前几个 token',
    'sparse-attention.acc': '准确率',
    'sparse-attention.sink': '第一个 token 当作注意力汇点，每一层',
    'sparse-attention.sink_hint': '<s> 不含答案需要的任何信息。一个头没有有用的东西可读时，softmax 的权重也必须放在某处：<s> 上的权重远高于均匀份额，就是注意力汇点，有 RoPE 和没有 RoPE 时都会这样吗？切换位置编码重新训练看看。',
    'sparse-attention.arm': '变体',
    'sparse-attention.layer': '第 {l} 层：平均 / 最高的头 / 均匀',
    'sparse-attention.maps': '示例上的注意力：每个变体、每层、每个头',
    'sparse-attention.lh': '层{l} 头{h}',
    'sparse-attention.l': '层{l}',
    'sparse-attention.query': '查询',
    'sparse-attention.key': '键',
    'sparse-attention.example': '示例：{x}（任务 {task}，位置编码 {pos}）',
  },
});

export const stylesheet = '/css/labs/sparse-attention.css';
export const lazyPlotly = true;

const K = (k) => `sparse-attention.${k}`;

export default function mount(root, ctx) {
  root.innerHTML = '';
  const view = el('div', 'sa-view');
  root.append(view);
  const dash = dashboard(view, ctx, {
    charts: [
      { title: K('loss'), keys: [{ key: 'loss', name: K('train_loss') }], logY: true },
      { title: K('far'), keys: [{ key: 'loss_far', name: K('loss_far'), markers: true }], kept: false },
      { title: K('first'), keys: [{ key: 'first_mass', name: K('first_mass'), markers: true }, { key: 'first_uniform', name: K('first_uniform'), dash: 'dot' }], kept: false, legend: 'low' },
    ],
  });
  const pics = dash.picturesEl;
  const after = dash.grid;
  const example = el('p', 'sa-example');
  pics.append(example);

  const pDist = panel(after, K('dist'), {});
  pDist.el.classList.add('sa-dist');
  const distHint = el('p', 'hint');
  pDist.el.insertBefore(distHint, pDist.chart);
  const pastNote = el('p', 'hint sa-past');
  pDist.el.append(pastNote);
  const pSink = panel(after, K('sink'), { chart: false, hint: K('sink_hint') });
  const sinkBox = el('div', 'sa-scroll');
  const sinkTable = el('table', 'sa-table');
  sinkBox.append(sinkTable);
  pSink.body.append(sinkBox);

  let tokens = [];
  const tip = (h) => `${dash.arms[h.group]?.label ?? h.group} · ${tokens[h.row] ?? h.row} (${h.row}) → ${tokens[h.col] ?? h.col} (${h.col}) · ${h.masked ? '–' : h.value.toFixed(2)}`;
  const pMasks = panel(after, K('masks'), { chart: false, hint: K('masks_hint'), wide: true });
  const masksEl = el('div');
  pMasks.body.append(masksEl);
  const masks = mapGrid(masksEl, { maxCell: 92, minCell: 26, colormap: 'blues', range: [0, 1], tip });
  const pReach = panel(after, K('reach'), { chart: false, wide: true });
  const reachHint = el('p', 'hint');
  const reachEl = el('div');
  pReach.body.append(reachHint, reachEl);
  const reach = mapGrid(reachEl, { maxCell: 92, minCell: 26, colormap: 'blues', range: [0, 1], tip });
  const pMaps = panel(after, K('maps'), { chart: false, wide: true });
  const mapsEl = el('div');
  pMaps.body.append(mapsEl);
  const maps = mapGrid(mapsEl, { maxCell: 92, minCell: 22, tip });

  let last = null;

  function stack(name, perLayer) {
    const m = last.meta;
    const list = [];
    m.arms.forEach((a, g) => {
      const tt = last.tensors[`arm.${g}.${name}`];
      if (!tt) return;
      const [L, T, S] = tt.shape;
      for (let l = 0; l < L; l++) list.push({ data: tt.data, offset: l * T * S, rows: T, cols: S, group: g });
    });
    return { list, labels: perLayer };
  }

  function drawGrids() {
    const m = last.meta;
    tokens = m.tokens;
    const L = m.n_layers;
    const layerLabels = Array.from({ length: L }, (_, l) => t(K('l'), { l }));
    const common = {
      groupLabels: m.arms.map((a) => a.label), rowLabels: tokens, colLabels: tokens,
      rowTitle: t(K('query')), colTitle: t(K('key')), masked: (i, j) => j > i,
    };
    for (const [grid, name] of [[masks, 'masks'], [reach, 'reach']]) {
      const { list } = stack(name, layerLabels);
      if (list.length) grid.draw(list, { ...common, mapLabels: layerLabels, title: (g, i) => `${m.arms[g].label} · ${layerLabels[i]}` });
    }
    setText(reachHint, t(K('reach_hint'), { layers: L, reach: m.reach_window }));
    const list = [];
    let H = 0;
    m.arms.forEach((a, g) => {
      for (let l = 0; l < L; l++) {
        const p = last.tensors[`arm.${g}.blocks.${l}.attn.hook_pattern`];
        if (!p) continue;
        const [h, T, S] = p.shape;
        H = h;
        for (let k = 0; k < h; k++) list.push({ data: p.data, offset: k * T * S, rows: T, cols: S, group: g });
      }
    });
    if (!list.length) return;
    const labels = [];
    for (let l = 0; l < L; l++) for (let k = 0; k < H; k++) labels.push(t(K('lh'), { l, h: k }));
    maps.draw(list, { ...common, mapLabels: labels, title: (g, i) => `${m.arms[g].label} · ${labels[i]}` });
  }

  function drawDist() {
    const m = last.meta;
    const n = new Set(m.targets).size;
    setText(distHint, t(K('dist_hint'), { w: m.window, layers: m.n_layers, reach: m.reach_window, n: Math.max(n, 2) }));
    const data = m.arms.map((a, i) => {
      const d = Object.keys(a.acc_by_distance).map(Number).sort((x, y) => x - y);
      return { type: 'scatter', mode: 'lines+markers', name: a.label, x: d, y: d.map((k) => a.acc_by_distance[k]), line: { color: COLORS[i % COLORS.length] } };
    });
    const vline = (x) => ({ type: 'line', x0: x, x1: x, y0: 0, y1: 1, yref: 'paper', line: { dash: 'dash', color: '#8a8577', width: 1 } });
    const layout = baseLayout({
      xaxis: { title: { text: t(K('distance')) } },
      yaxis: { title: { text: t(K('acc')) }, range: [-0.02, 1.02] },
      shapes: [vline(m.window - 0.5), vline(m.reach_window + 0.5)],
      legend: { orientation: 'h', y: 1.15 },
    });
    whenPlotly((P) => P.react(pDist.chart, data, layout, CONFIG));
    setText(pastNote, pastText(m, n));
  }

  // Which distances past the window each arm answers above chance, read off this run's
  // held-out accuracy (chance 1/n): the page states no gain the run does not show. A distance
  // whose every source position is a sink is starred: the sinks arm sees it at any range.
  function pastText(m, n) {
    const chance = 1 / Math.max(n, 2);
    const above = (v) => v >= Math.min(2 * chance, chance + 0.2) && v >= chance + 0.1;
    const dist = Array.isArray(m.distance) ? m.distance : [];
    const sinks = Math.max(0, ...m.arms.map((a) => a.sinks || 0));
    const sinkOnly = (d) => {
      const src = dist.map((dd, p) => (dd === d ? p - d : null)).filter((x) => x !== null);
      return sinks > 0 && src.length > 0 && src.every((j) => j < sinks);
    };
    let starred = false;
    const list = (ds) => (ds.length ? ds.map((d) => { const s = sinkOnly(d); starred ||= s; return s ? `${d}*` : String(d); }).join(', ') : t(K('past_none')));
    const arms = m.arms.map((a) => {
      const far = Object.keys(a.acc_by_distance).map(Number).filter((d) => d >= m.window).sort((x, y) => x - y);
      if (!far.length) return null;
      const good = far.filter((d) => above(a.acc_by_distance[d]));
      const bad = far.filter((d) => !above(a.acc_by_distance[d]));
      return t(K('past_arm'), { arm: a.label, good: list(good), bad: list(bad) });
    }).filter(Boolean);
    if (!arms.length) return '';
    return t(K('past'), { w: m.window, arms: arms.join('; ') }) + (starred ? ` ${t(K('past_sink'))}` : '');
  }

  function drawSink() {
    const m = last.meta;
    const L = m.n_layers;
    const head = el('tr');
    head.append(el('th', null, t(K('arm'))));
    for (let l = 0; l < L; l++) head.append(el('th', null, t(K('layer'), { l })));
    const rows = m.arms.map((a, i) => {
      const tr = el('tr');
      const name = el('td');
      const sw = el('i', 'sa-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      name.append(sw, el('b', null, a.label), el('small', null, ` ${pick(a.title)}`));
      tr.append(name);
      for (let l = 0; l < L; l++) {
        const hs = a.first_mass[l];
        const mean = hs.reduce((s, v) => s + v, 0) / hs.length;
        const top = Math.max(...hs);
        const uni = a.first_uniform[l];
        tr.append(el('td', mean > 1.3 * uni ? 'hot' : '', `${fmt(mean, 2)} / ${fmt(top, 2)} / ${fmt(uni, 2)}`));
      }
      return tr;
    });
    sinkTable.replaceChildren(el('thead'), el('tbody'));
    sinkTable.firstChild.append(head);
    sinkTable.lastChild.append(...rows);
  }

  function draw() {
    if (!last) return;
    const m = last.meta;
    setText(example, t(K('example'), { x: m.tokens.join(' '), task: m.task, pos: m.positional }));
    drawGrids();
    drawDist();
    drawSink();
  }

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.arms[0].acc_by_distance) return;
      last = f;
      draw();
      root.dataset.step = String(f.step);
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); },
    relabel() {
      dash.relabel();
      for (const p of [pDist, pSink, pMasks, pReach, pMaps]) p.relabel();
      masks.relabel(); reach.relabel(); maps.relabel();
      draw();
    },
  };
}
