// View of `softmax-ce`: logit sliders (or typed values), softmax vs "square and normalize",
// naive exp overflowing in float32 vs the max-subtracted softmax, cross-entropy −ln p, the
// 5×10 prediction table, a product of likelihoods underflowing vs a sum of logs, and the
// gradients of MSE and BCE after a sigmoid. Every number comes from the server (torch).
import { addStrings } from '../core/i18n.js';
import { panel } from '../components/panel.js';
import { readout } from '../components/readout.js';
import { linspace } from '../components/heatmap.js';
import { baseLayout, CONFIG, fmt, Plotly } from '../components/plot.js';
import { el } from '../core/dom.js';

export const stylesheet = '/css/labs/softmax-ce.css'; // the shell loads it
const ORANGE = '#e8702a';
const BLUE = '#2f6fdf';
const PRESETS = {
  example: { logits: [2, 1, 0.1, -3], target: 0 },
  overflow: { logits: [90, 1, 0], target: 0 },
  underflow: { logits: [-110, -120, -105], target: 2 },
  even: { logits: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], target: 3 },
};

addStrings({
  en: {
    'softmax-ce.logits': 'Logits (drag, or type a value)',
    'softmax-ce.right': 'right class',
    'softmax-ce.add': '+ logit',
    'softmax-ce.remove': '− logit',
    'softmax-ce.preset_example': '2, 1, 0.1, −3',
    'softmax-ce.preset_overflow': 'Overflow: 90, 1, 0',
    'softmax-ce.preset_underflow': 'Underflow: −110, −120, −105',
    'softmax-ce.preset_even': 'Ten zeros',
    'softmax-ce.bars': 'Probabilities: softmax vs “square and normalize”',
    'softmax-ce.softmax': 'softmax',
    'softmax-ce.square': 'z² / Σz²',
    'softmax-ce.float32': 'float32: naive exp vs. subtracting the max',
    'softmax-ce.class': 'class',
    'softmax-ce.naive': 'exp(z)/Σ',
    'softmax-ce.stable': 'exp(z−max)/Σ',
    'softmax-ce.limit': 'exp(z) is inf in float32 for z above ln(FLT_MAX) = {v}',
    'softmax-ce.naive_bad': 'The naive softmax gave {n} non-finite value(s); the max-subtracted one is fine.',
    'softmax-ce.naive_ok': 'Both agree here. Push a logit past 88.7 (or all below −104) to break the naive one.',
    'softmax-ce.ce': 'Cross-entropy of the right class: −ln p',
    'softmax-ce.ce_at': 'p = {p}',
    'softmax-ce.miss': 'p = 0.01 (a confident miss)',
    'softmax-ce.yours': 'your logits: p(right) = {p}',
    'softmax-ce.table': 'Five predictions over 10 classes: cross-entropy picks one number per row',
    'softmax-ce.label': 'label',
    'softmax-ce.pick': 'p(label)',
    'softmax-ce.mean': 'mean CE',
    'softmax-ce.lik': 'Product of likelihoods vs. sum of logs (float32)',
    'softmax-ce.lik_hint': 'The five table picks, repeated. Set the number of samples in the side panel.',
    'softmax-ce.product': 'product Π p',
    'softmax-ce.logsum': 'sum of ln p',
    'softmax-ce.samples': 'samples',
    'softmax-ce.under_at': 'the product is exactly 0 from sample {k} on',
    'softmax-ce.no_under': 'not underflowed yet',
    'softmax-ce.grads': 'd loss / d logit after a sigmoid (autograd), y = {y}',
    'softmax-ce.mse': 'MSE: 2(p−y)·p(1−p)',
    'softmax-ce.bce': 'BCE: p − y',
    'softmax-ce.z': 'logit z',
  },
  zh: {
    'softmax-ce.logits': 'Logits（拖动，或直接输入数值）',
    'softmax-ce.right': '正确类别',
    'softmax-ce.add': '+ 一个 logit',
    'softmax-ce.remove': '− 一个 logit',
    'softmax-ce.preset_example': '2, 1, 0.1, −3',
    'softmax-ce.preset_overflow': '溢出：90, 1, 0',
    'softmax-ce.preset_underflow': '下溢：−110, −120, −105',
    'softmax-ce.preset_even': '十个 0',
    'softmax-ce.bars': '概率：softmax 与 “平方再归一化”',
    'softmax-ce.softmax': 'softmax',
    'softmax-ce.square': 'z² / Σz²',
    'softmax-ce.float32': 'float32：朴素 exp 与先减最大值',
    'softmax-ce.class': '类别',
    'softmax-ce.naive': 'exp(z)/Σ',
    'softmax-ce.stable': 'exp(z−max)/Σ',
    'softmax-ce.limit': 'z 大于 ln(FLT_MAX) = {v} 时，float32 里的 exp(z) 就是 inf',
    'softmax-ce.naive_bad': '朴素 softmax 算出了 {n} 个非有限值；先减最大值的版本没问题。',
    'softmax-ce.naive_ok': '这里两者一致。把一个 logit 拉过 88.7（或全部低于 −104）就能让朴素版本出错。',
    'softmax-ce.ce': '正确类别的交叉熵：−ln p',
    'softmax-ce.ce_at': 'p = {p}',
    'softmax-ce.miss': 'p = 0.01（自信地答错）',
    'softmax-ce.yours': '你的 logits：p(正确) = {p}',
    'softmax-ce.table': '5 个样本、10 个类别的预测：交叉熵每行只取一个数',
    'softmax-ce.label': '标签',
    'softmax-ce.pick': 'p(标签)',
    'softmax-ce.mean': '平均交叉熵',
    'softmax-ce.lik': '似然连乘 与 对数相加（float32）',
    'softmax-ce.lik_hint': '用表中 5 个样本的 p(标签) 反复出现。样本数在左侧参数里设置。',
    'softmax-ce.product': '连乘 Π p',
    'softmax-ce.logsum': 'ln p 之和',
    'softmax-ce.samples': '样本数',
    'softmax-ce.under_at': '从第 {k} 个样本起乘积恰好为 0',
    'softmax-ce.no_under': '还没有下溢',
    'softmax-ce.grads': 'sigmoid 之后损失对 logit 的梯度（autograd），y = {y}',
    'softmax-ce.mse': 'MSE：2(p−y)·p(1−p)',
    'softmax-ce.bce': 'BCE：p − y',
    'softmax-ce.z': 'logit z',
  },
});

const f3 = (v) => (Number.isFinite(v) ? v.toFixed(3) : fmt(v));

export default function mount(root, { t, store, params, setParams }) {
  root.innerHTML = '';
  const grid = el('div', 'view-grid softmax-view');
  root.append(grid);
  const pLogits = panel(grid, 'softmax-ce.logits', { chart: false });
  const pBars = panel(grid, 'softmax-ce.bars');
  const pF32 = panel(grid, 'softmax-ce.float32', { chart: false });
  const pCE = panel(grid, 'softmax-ce.ce');
  const pTable = panel(grid, 'softmax-ce.table', { chart: false, wide: true });
  const pLik = panel(grid, 'softmax-ce.lik', { hint: 'softmax-ce.lik_hint' });
  const pGrad = panel(grid, null);
  pF32.el.classList.add('sm-float32');
  pTable.el.classList.add('sm-pred');
  pLik.el.classList.add('sm-lik');
  const canEdit = () => store.get('role') === 'driver';
  let last = null;

  // -- the logit editor: one row per logit (right-class radio, slider, number box) --------
  const rowsEl = el('div', 'logit-rows');
  const tools = el('div', 'logit-tools');
  pLogits.body.append(rowsEl, tools);
  let sendTimer = null;
  const send = (p, now = false) => {
    if (!canEdit()) return;
    clearTimeout(sendTimer);
    if (now) setParams(p); else sendTimer = setTimeout(() => setParams(p), 80);
  };
  const clampLogit = (v) => Math.max(-200, Math.min(200, v));

  function buildEditor(p) {
    rowsEl.replaceChildren();
    p.logits.forEach((z, i) => {
      const row = el('div', 'logit-row');
      const radio = el('input');
      radio.type = 'radio'; radio.name = 'softmax-target'; radio.checked = i === p.target;
      radio.setAttribute('aria-label', `${t('softmax-ce.right')} ${i}`);
      radio.onchange = () => send({ target: i }, true);
      const name = el('span', 'logit-name', `z${i}`);
      const range = el('input');
      range.type = 'range'; range.min = '-100'; range.max = '100'; range.step = '0.1'; range.value = String(z);
      range.setAttribute('aria-label', `z${i}`);
      const box = el('input');
      box.type = 'number'; box.min = '-200'; box.max = '200'; box.step = 'any'; box.value = String(z);
      box.className = 'logit-box';
      box.setAttribute('aria-label', `z${i}`);
      const update = (v, now) => {
        const logits = [...params().logits];
        logits[i] = clampLogit(v);
        send({ logits }, now);
      };
      range.oninput = () => { box.value = range.value; update(Number(range.value), false); };
      box.onchange = () => { if (box.value !== '' && Number.isFinite(Number(box.value))) update(Number(box.value), true); };
      for (const input of [radio, range, box]) input.disabled = !canEdit();
      row.append(radio, name, range, box);
      rowsEl.append(row);
    });
    tools.replaceChildren();
    const btn = (key, fn, disabled = false) => { const b = el('button', '', t(key)); b.type = 'button'; b.dataset.key = key; b.onclick = fn; b.disabled = disabled || !canEdit(); tools.append(b); };
    btn('softmax-ce.add', () => send({ logits: [...p.logits, 0] }, true), p.logits.length >= 10);
    btn('softmax-ce.remove', () => {
      const logits = p.logits.slice(0, -1);
      send({ logits, target: Math.min(p.target, logits.length - 1) }, true);
    }, p.logits.length <= 2);
    for (const [k, v] of Object.entries(PRESETS)) btn(`softmax-ce.preset_${k}`, () => send(v, true));
    const right = el('small', '', `◉ = ${t('softmax-ce.right')}`);
    tools.append(right);
  }

  // -- charts ---------------------------------------------------------------------------
  const barsLayout = () => baseLayout({ barmode: 'group', showlegend: true, margin: { l: 48, r: 12, t: 30, b: 38 }, legend: { orientation: 'h', y: 1.02, yanchor: 'bottom' }, yaxis: { range: [0, 1.12] }, xaxis: { type: 'category', title: { text: t('softmax-ce.class') } }, uirevision: 'bars' });
  function drawBars(f) {
    const names = f.tensors.softmax.labels;
    Plotly.react(pBars.chart, [
      { type: 'bar', x: names, y: Array.from(f.tensors.softmax.data), name: t('softmax-ce.softmax'), marker: { color: BLUE }, text: Array.from(f.tensors.softmax.data, (v) => v.toFixed(3)), textposition: 'outside', cliponaxis: false },
      { type: 'bar', x: names, y: Array.from(f.tensors.square_norm.data), name: t('softmax-ce.square'), marker: { color: ORANGE }, text: Array.from(f.tensors.square_norm.data, (v) => v.toFixed(3)), textposition: 'outside', cliponaxis: false },
    ], barsLayout(), CONFIG);
  }

  const f32Table = el('table', 'sm-table f32');
  const f32Note = el('p', 'sm-note');
  const f32Limit = el('p', 'sm-note muted');
  pF32.body.append(f32Table, f32Note, f32Limit);
  function drawF32(f) {
    const z = f.tensors.logits.data, e = f.tensors.exp_naive.data, n = f.tensors.softmax_naive.data, s = f.tensors.softmax.data;
    const head = el('tr');
    for (const h of ['softmax-ce.class', null, null, 'softmax-ce.naive', 'softmax-ce.stable']) head.append(el('th', '', h ? t(h) : ''));
    head.children[1].textContent = 'z';
    head.children[2].textContent = 'exp(z)';
    const rows = [head];
    for (let i = 0; i < z.length; i++) {
      const tr = el('tr');
      tr.append(el('td', '', String(i)), el('td', '', fmt(z[i])));
      for (const v of [e[i], n[i], s[i]]) tr.append(el('td', Number.isFinite(v) ? '' : 'bad', fmt(v)));
      rows.push(tr);
    }
    f32Table.replaceChildren(...rows);
    const bad = f.scalars.naive_bad;
    f32Note.textContent = bad > 0 ? t('softmax-ce.naive_bad', { n: bad }) : t('softmax-ce.naive_ok');
    f32Note.classList.toggle('warn', bad > 0);
    f32Limit.textContent = t('softmax-ce.limit', { v: f.meta.exp_overflow.toFixed(2) });
  }

  const ceInfo = el('div', 'ce-numbers');
  pCE.el.append(ceInfo);
  const ceRead = readout(ceInfo);
  function drawCE(f) {
    const [p0, p1] = f.meta.p_range;
    const curve = f.tensors.ce_curve.data;
    const px = linspace(p0, p1, curve.length);
    const ex = f.meta.ce_examples, ce = f.tensors.ce_examples.data;
    const pr = f.scalars.p_target;
    Plotly.react(pCE.chart, [
      { type: 'scatter', mode: 'lines', x: px, y: Array.from(curve), line: { color: '#7f8c8d' }, hoverinfo: 'skip' },
      { type: 'scatter', mode: 'markers+text', x: ex, y: Array.from(ce), text: Array.from(ce, f3), textposition: 'top right', marker: { size: 10, color: ORANGE } },
      { type: 'scatter', mode: 'markers', x: [pr], y: [f.scalars.loss], marker: { size: 12, color: BLUE, symbol: 'diamond' } },
    ], baseLayout({ xaxis: { title: { text: 'p' }, range: [0, 1.02] }, yaxis: { title: { text: '−ln p' } }, uirevision: 'ce' }), CONFIG);
    ceRead.show([
      { label: t('softmax-ce.ce_at', { p: ex[0] }), value: f3(ce[0]) },
      { label: t('softmax-ce.ce_at', { p: ex[1] }), value: f3(ce[1]) },
      { label: t('softmax-ce.miss'), value: f3(ce[2]), warn: true },
      { label: t('softmax-ce.yours', { p: f3(pr) }), value: f3(f.scalars.loss) },
    ]);
  }

  const table = el('table', 'sm-table pred');
  const tableNote = el('p', 'sm-note');
  pTable.body.append(table, tableNote);
  function drawTable(f) {
    const tab = f.tensors.table, [r, c] = tab.shape;
    const picks = f.tensors.table_ce.data; // [2, 5]: picks, then −ln picks
    const labels = f.meta.table_labels;
    const head = el('tr');
    head.append(el('th', '', ''));
    for (let j = 0; j < c; j++) head.append(el('th', '', String(j)));
    head.append(el('th', '', t('softmax-ce.label')), el('th', '', t('softmax-ce.pick')), el('th', '', '−ln p'));
    const rows = [head];
    for (let i = 0; i < r; i++) {
      const tr = el('tr');
      tr.append(el('th', '', f.meta.table_rows[i]));
      for (let j = 0; j < c; j++) tr.append(el('td', j === labels[i] ? 'pick' : '', tab.data[i * c + j].toFixed(3)));
      tr.append(el('td', '', String(labels[i])), el('td', 'pick', picks[i].toFixed(3)), el('td', '', f3(picks[r + i])));
      rows.push(tr);
    }
    table.replaceChildren(...rows);
    tableNote.textContent = `${t('softmax-ce.mean')} = (${Array.from(picks.subarray(r), f3).join(' + ')}) / ${r} = ${f3(f.scalars.table_mean_ce)}`;
  }

  const likInfo = el('div');
  pLik.el.append(likInfo);
  const likRead = readout(likInfo);
  function drawLik(f) {
    const prod = f.tensors.lik_product.data, logs = f.tensors.lik_logsum.data;
    const k = Array.from({ length: prod.length }, (_, i) => i + 1);
    const py = Array.from(prod, (v) => (v > 0 ? v : null)); // 0 has no place on a log axis
    const under = f.meta.underflow_at;
    // Two stacked panels: on one log axis the two curves would lie on top of each other.
    const traces = [
      { type: 'scatter', mode: 'lines', x: k, y: py, name: t('softmax-ce.product'), line: { color: ORANGE, width: 2 } },
      { type: 'scatter', mode: 'lines', x: k, y: Array.from(logs), name: t('softmax-ce.logsum'), xaxis: 'x', yaxis: 'y2', line: { color: BLUE, width: 2 } },
    ];
    if (under) {
      traces.push({ type: 'scatter', mode: 'markers+text', x: [under], y: [prod[under - 2] || 1], text: ['→ 0'], textposition: 'middle right', marker: { symbol: 'x', size: 11, color: '#b3261e' }, showlegend: false, hoverinfo: 'skip' });
    }
    Plotly.react(pLik.chart, traces, baseLayout({
      showlegend: true, legend: { orientation: 'h', y: 1.02, yanchor: 'bottom' }, margin: { l: 64, r: 12, t: 28, b: 38 },
      xaxis: { title: { text: t('softmax-ce.samples') }, anchor: 'y2' },
      yaxis: { type: 'log', exponentformat: 'power', title: { text: 'Π p' }, domain: [0.55, 1], color: ORANGE },
      yaxis2: { title: { text: 'Σ ln p' }, domain: [0, 0.45], color: BLUE, zeroline: false },
      uirevision: 'lik',
    }), CONFIG);
    likRead.show([
      { label: `${t('softmax-ce.product')} (${prod.length})`, value: f.scalars.product, note: under ? t('softmax-ce.under_at', { k: under }) : t('softmax-ce.no_under'), warn: !!under },
      { label: `${t('softmax-ce.logsum')} (${prod.length})`, value: f.scalars.log_sum },
    ]);
  }

  const gradTitle = el('h3');
  pGrad.el.prepend(gradTitle);
  function drawGrad(f) {
    gradTitle.textContent = t('softmax-ce.grads', { y: f.meta.y_true });
    const [z0, z1] = f.meta.z_range;
    const g1 = f.tensors.grad_mse.data, g2 = f.tensors.grad_bce.data;
    const z = linspace(z0, z1, g1.length);
    Plotly.react(pGrad.chart, [
      { type: 'scatter', mode: 'lines', x: z, y: Array.from(g1), name: t('softmax-ce.mse'), line: { color: ORANGE, width: 2 } },
      { type: 'scatter', mode: 'lines', x: z, y: Array.from(g2), name: t('softmax-ce.bce'), line: { color: BLUE, width: 2 } },
    ], baseLayout({ showlegend: true, legend: { orientation: 'h', y: 1.14 }, xaxis: { title: { text: t('softmax-ce.z') } }, yaxis: { title: { text: '∂L/∂z' } }, uirevision: 'grad' }), CONFIG);
  }

  function drawAll(f) {
    if (!f.tensors.softmax) return;
    drawBars(f); drawF32(f); drawCE(f); drawTable(f); drawLik(f); drawGrad(f);
  }

  for (const c of [pBars.chart, pCE.chart, pLik.chart, pGrad.chart]) Plotly.newPlot(c, [], baseLayout({}), CONFIG);
  buildEditor(params());
  store.on('role', () => buildEditor(params())); // buttons enable once we are the driver

  return {
    frame(f) { last = f; drawAll(f); },
    params(p) {
      // Rebuild the editor only when its shape or the right class changed (not mid-drag).
      const rows = rowsEl.querySelectorAll('.logit-row');
      const radios = rowsEl.querySelectorAll('input[type=radio]');
      if (rows.length !== p.logits.length || !radios[p.target]?.checked) buildEditor(p);
      else p.logits.forEach((z, i) => {
        const [range, box] = rows[i].querySelectorAll('input[type=range], input[type=number]');
        if (document.activeElement !== range) range.value = String(z);
        if (document.activeElement !== box) box.value = String(z);
      });
    },
    relabel() {
      for (const p of [pLogits, pBars, pF32, pCE, pTable, pLik]) p.relabel();
      buildEditor(params());
      if (last) drawAll(last);
    },
  };
}
