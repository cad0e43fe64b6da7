// One attention cell's arithmetic, as the server computed it from the live model (the gpt
// lab's `infer` with a `cell`, backend/labs/_gpt_cell.py): q_i and k_j, q·k, ÷√d_head, the
// causal mask and the softmax over row i, ending in the weight the map shows. The page only
// prints the numbers it is sent; it recomputes nothing.
import { ensureCss } from '../core/css.js';
import { addStrings, t } from '../core/i18n.js';
import { fmt } from './plot.js';

addStrings({
  en: {
    'cell.title': 'L{layer} H{head}: query “{q}” ({i}) → key “{k}” ({j})',
    'cell.close': 'Close the arithmetic',
    'cell.loading': 'Asking the model…',
    'cell.q': 'q of query {i} (first {n} of {d} numbers)',
    'cell.k': 'k of key {j} (first {n} of {d} numbers)',
    'cell.dot': 'q · k (over all {d} numbers)',
    'cell.scale': '÷ √d_head = ÷ √{d} = ÷ {sqrt}',
    'cell.score': 'score s',
    'cell.mask_kept': 'causal mask: key {j} ≤ query {i}, so the score is kept',
    'cell.mask_hidden': 'causal mask: key {j} comes after query {i}, so its score becomes −∞',
    'cell.no_mask': 'no causal mask: every key is seen',
    'cell.softmax': 'softmax over row {i}: e^s / Σ e^s over {n} keys',
    'cell.weight': 'attention weight',
    'cell.map_value': 'the map shows {v}',
    'cell.row': 'The whole row {i}: every key’s score and weight',
    'cell.col_key': 'key',
    'cell.col_score': 'score',
    'cell.col_weight': 'weight',
    'cell.now_same': 'Numbers from the model at step {step}, the step the map shows.',
    'cell.now_other': 'Numbers from the model now (step {step}); the map shows step {shown}. The timeline keeps frames, not weights.',
    'cell.hint': 'Click a cell of this map to see its arithmetic.',
  },
  zh: {
    'cell.title': '第 {layer} 层 第 {head} 头：查询 “{q}”（{i}）→ 键 “{k}”（{j}）',
    'cell.close': '关闭这一格的计算',
    'cell.loading': '正在向模型要数字…',
    'cell.q': '查询 {i} 的 q（{d} 个数中的前 {n} 个）',
    'cell.k': '键 {j} 的 k（{d} 个数中的前 {n} 个）',
    'cell.dot': 'q · k（全部 {d} 个数相乘再相加）',
    'cell.scale': '÷ √d_head = ÷ √{d} = ÷ {sqrt}',
    'cell.score': '得分 s',
    'cell.mask_kept': '因果掩码：键 {j} 不在查询 {i} 之后，得分保留',
    'cell.mask_hidden': '因果掩码：键 {j} 在查询 {i} 之后，得分变成 −∞',
    'cell.no_mask': '没有因果掩码：每个键都看得见',
    'cell.softmax': '对第 {i} 行做 softmax：e^s ÷ {n} 个键的 e^s 之和',
    'cell.weight': '注意力权重',
    'cell.map_value': '图上这一格是 {v}',
    'cell.row': '第 {i} 行的全部：每个键的得分和权重',
    'cell.col_key': '键',
    'cell.col_score': '得分',
    'cell.col_weight': '权重',
    'cell.now_same': '这些数来自第 {step} 步的模型，正是图上显示的那一步。',
    'cell.now_other': '这些数来自现在的模型（第 {step} 步）；图上显示的是第 {shown} 步。时间轴保存的是画面，不是权重。',
    'cell.hint': '点这张图里的一格，看它是怎么算出来的。',
  },
});

const vec = (xs) => `[${xs.map((x) => fmt(x, 3)).join(', ')}]`;

/**
 * host: where the panel goes (the enlarged map's box: clicks inside keep the map open).
 * Returns {el, ask(cell, shown), show(cell), error(text), hide(), relabel()}:
 * ask() says it is waiting for the cell {layer, head, query, key, value} the map showed at
 * step `shown`; show() prints the server's answer (a frame's meta.cell).
 */
export function cellArithmetic(host, { tokens = () => [] } = {}) {
  ensureCss('/css/learner-tools.css');
  const el = document.createElement('section');
  el.className = 'cell-arith';
  el.hidden = true;
  el.setAttribute('aria-live', 'polite');
  const head = document.createElement('div');
  head.className = 'ca-head';
  const title = document.createElement('b');
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'ca-close';
  close.textContent = '×';
  head.append(title, close);
  const body = document.createElement('div');
  body.className = 'ca-body';
  el.append(head, body);
  host.append(el);

  let asked = null; // {layer, head, query, key, value, shown}
  let answer = null; // the server's cell
  let failed = null;

  const line = (label, value, cls = '') => {
    const row = document.createElement('div');
    row.className = `ca-line ${cls}`;
    const a = document.createElement('span');
    a.textContent = label;
    const b = document.createElement('code');
    b.textContent = value;
    row.append(a, b);
    return row;
  };

  function render() {
    close.setAttribute('aria-label', t('cell.close'));
    if (!asked) return;
    const toks = tokens();
    const c = answer;
    title.textContent = t('cell.title', {
      layer: asked.layer, head: asked.head, i: asked.query, j: asked.key,
      q: c ? c.query_token : toks[asked.query] ?? asked.query, k: c ? c.key_token : toks[asked.key] ?? asked.key,
    });
    if (failed) { body.replaceChildren(line(failed, '', 'ca-error')); return; }
    if (!c) { body.replaceChildren(line(t('cell.loading'), '')); return; }
    const n = c.q.length, d = c.d_head, i = c.query, j = c.key;
    const seen = c.row_scores.filter((s) => s !== null).length;
    const rows = [
      line(t('cell.q', { i, n, d }), vec(c.q)),
      line(t('cell.k', { j, n, d }), vec(c.k)),
      line(t('cell.dot', { d }), fmt(c.dot, 4)),
      line(t('cell.scale', { d, sqrt: fmt(c.sqrt_d, 4) }), fmt(c.scaled, 4)),
      line(t('cell.score'), fmt(c.score, 4)),
      line(t(!c.causal ? 'cell.no_mask' : c.masked ? 'cell.mask_hidden' : 'cell.mask_kept', { i, j }), c.masked ? '−∞' : fmt(c.score, 4)),
      line(t('cell.softmax', { i, n: seen }), ''),
      line(t('cell.weight'), fmt(c.weight, 4), 'ca-weight'),
      line(t('cell.map_value', { v: fmt(asked.value, 3) }), ''),
    ];
    const note = document.createElement('p');
    note.className = 'ca-note';
    note.textContent = c.step === asked.shown ? t('cell.now_same', { step: c.step }) : t('cell.now_other', { step: c.step, shown: asked.shown });
    const more = document.createElement('details');
    const sum = document.createElement('summary');
    sum.textContent = t('cell.row', { i });
    const table = document.createElement('table');
    const hr = document.createElement('tr');
    for (const k of ['cell.col_key', 'cell.col_score', 'cell.col_weight']) { const th = document.createElement('th'); th.textContent = t(k); hr.append(th); }
    table.append(hr);
    c.row_scores.forEach((s, k) => {
      const tr = document.createElement('tr');
      if (k === j) tr.className = 'ca-this';
      for (const v of [`${toks[k] ?? ''} (${k})`, s === null ? '−∞' : fmt(s, 4), fmt(c.row_softmax[k], 4)]) { const td = document.createElement('td'); td.textContent = v; tr.append(td); }
      table.append(tr);
    });
    more.append(sum, table);
    body.replaceChildren(...rows, note, more);
    el.dataset.weight = String(c.weight); // for tests: the numbers printed, unrounded
    el.dataset.mapValue = String(asked.value);
  }

  const hide = () => { el.hidden = true; asked = null; answer = null; };
  close.onclick = hide;
  return {
    el,
    get open() { return !el.hidden; },
    ask(cell, shown) { asked = { ...cell, shown }; answer = null; failed = null; el.hidden = false; delete el.dataset.weight; render(); },
    show(c) {
      if (!asked || c.layer !== asked.layer || c.head !== asked.head || c.query !== asked.query || c.key !== asked.key) return;
      answer = c;
      render();
    },
    error(text) { if (asked && !answer) { failed = text; render(); } },
    hide,
    relabel: render,
  };
}
