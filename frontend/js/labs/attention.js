// View of `attention`: the seven stages of one attention computation as matrices with their
// shapes, the current stage highlighted; X and the weights are editable (click a cell, type a
// number), the mask is clickable. Beside them: why scores are divided by √d (sampled on the
// server), tied W_K = W_Q, and the multi-head shape chain with torch's memory answers.
// Every number comes from the server; the page only draws and sends edits.
import { addStrings } from '../core/i18n.js';
import { STRINGS } from './attention/strings.js';
import { matrixView, toRows } from '../components/matrixView.js';
import { panel } from '../components/panel.js';
import { readout } from '../components/readout.js';
import { baseLayout, COLORS, CONFIG, fmt, Plotly } from '../components/plot.js';

addStrings(STRINGS);

export const stylesheet = '/css/labs/attention.css'; // the shell loads it

const STAGES = ['x', 'qkv', 'scores', 'scaled', 'masked', 'weights', 'out'];
const MATS = ['x', 'w_q', 'w_k', 'w_v'];

export default function mount(root, { t, store, setParams }) {
  root.innerHTML = '';
  const view = document.createElement('div');
  view.className = 'attn-view';
  root.append(view);

  // The ribbon: seven stages, the current one highlighted.
  const ribbon = document.createElement('ol');
  ribbon.className = 'attn-ribbon';
  const chips = STAGES.map((s) => { const li = document.createElement('li'); li.dataset.stage = s; ribbon.append(li); return li; });
  const stageLine = document.createElement('p');
  stageLine.className = 'attn-stage-line';
  view.append(ribbon, stageLine);

  // One card per stage.
  const flow = document.createElement('div');
  flow.className = 'attn-flow';
  view.append(flow);
  const cards = {};
  for (const [i, s] of STAGES.entries()) {
    const card = document.createElement('section');
    card.className = 'attn-card';
    card.dataset.stage = s;
    const h = document.createElement('h3');
    const body = document.createElement('div');
    body.className = 'attn-mats';
    const pending = document.createElement('p');
    pending.className = 'attn-pending';
    const note = document.createElement('p');
    note.className = 'attn-note';
    const hint = document.createElement('p');
    hint.className = 'hint';
    card.append(h, body, pending, note, hint);
    flow.append(card);
    cards[s] = { card, h, body, pending, note, hint, index: i + 1 };
  }
  let last = null;
  const mv = {};
  const edit = (name) => (i, j, v) => sendEdit(name, i, j, v);
  mv.x = matrixView(cards.x.body, { name: 'X', editable: true, onEdit: edit('x') });
  mv.w_q = matrixView(cards.x.body, { name: 'W_Q', editable: true, onEdit: edit('w_q') });
  mv.w_k = matrixView(cards.x.body, { name: 'W_K', editable: true, onEdit: edit('w_k') });
  mv.w_v = matrixView(cards.x.body, { name: 'W_V', editable: true, onEdit: edit('w_v') });
  mv.q = matrixView(cards.qkv.body, { name: 'Q' });
  mv.k = matrixView(cards.qkv.body, { name: 'K' });
  mv.v = matrixView(cards.qkv.body, { name: 'V' });
  mv.scores = matrixView(cards.scores.body, { name: 'QKᵀ' });
  mv.scaled = matrixView(cards.scaled.body, { name: 'S = QKᵀ/√d_k' });
  mv.allowed = matrixView(cards.masked.body, { name: 'M', onCell: (i, j) => toggleMask(i, j) });
  mv.masked = matrixView(cards.masked.body, { name: 'S + M' });
  mv.weights = matrixView(cards.weights.body, { name: 'softmax(S + M)', digits: 4 });
  mv.out = matrixView(cards.out.body, { name: 'weights · V', digits: 3 });
  mv.residual = matrixView(cards.out.body, { name: 'X + out', digits: 3 });

  // Side panels.
  const grid = document.createElement('div');
  grid.className = 'view-grid attn-side';
  view.append(grid);
  const pProbe = panel(grid, 'attention.probe', { chart: false });
  const probeInfo = readout(pProbe.body);
  const pVar = panel(grid, 'attention.probe_var');
  const pEnt = panel(grid, 'attention.probe_ent');
  const pChain = panel(grid, null, { chart: false, wide: true });
  pChain.el.classList.add('attn-chain');
  const chainTitle = document.createElement('h3');
  pChain.el.prepend(chainTitle);
  const chainTable = document.createElement('table');
  const chainErr = document.createElement('p');
  chainErr.className = 'attn-view-error';
  const chainSdpa = document.createElement('p');
  chainSdpa.className = 'hint';
  pChain.body.append(chainTable, chainErr, chainSdpa);
  const pChecks = panel(grid, 'attention.checks', { chart: false });
  const checks = readout(pChecks.body);
  const pCtx = panel(grid, 'attention.context');
  Plotly.newPlot(pVar.chart, [], baseLayout({}), CONFIG);
  Plotly.newPlot(pEnt.chart, [], baseLayout({}), CONFIG);
  Plotly.newPlot(pCtx.chart, [], baseLayout({}), CONFIG);
  let probeKey = null;
  let ctxKey = null;

  function currentMatrices() {
    const out = {};
    for (const m of MATS) out[m] = toRows(last.tensors[m]).map((r) => r.map((v) => Number(v.toFixed(4))));
    return out;
  }

  function sendEdit(name, i, j, v) {
    if (!last || store.get('role') !== 'driver') return;
    const mats = currentMatrices();
    mats[name][i][j] = v;
    if (name === 'w_q' && last.meta.tie_qk) mats.w_k = mats.w_q.map((r) => [...r]);
    const p = store.get('params');
    const msg = { preset: 'custom', tokens: last.meta.tokens, ...mats };
    if (p.mask === 'auto') {
      // Keep the example's mask: its kind, or its exact cells when it is a custom one.
      msg.mask = last.meta.mask_kind;
      if (last.meta.mask_kind === 'custom') msg.mask_custom = last.meta.allowed;
    }
    setParams(msg);
  }

  function toggleMask(i, j) {
    if (!last || store.get('role') !== 'driver') return;
    const allowed = last.meta.allowed.map((r) => [...r]);
    allowed[i][j] = !allowed[i][j];
    setParams({ mask: 'custom', mask_custom: allowed });
  }

  function drawStages(f) {
    const m = f.meta;
    const stage = m.stage;
    const tok = m.tokens;
    const dims = (n) => Array.from({ length: n }, (_, i) => `d${i}`);
    chips.forEach((li, i) => {
      li.textContent = `${i + 1} ${t(`attention.r_${STAGES[i]}`)}`;
      li.dataset.state = i + 1 < stage ? 'done' : i + 1 === stage ? 'current' : 'pending';
      if (i + 1 === stage) li.setAttribute('aria-current', 'step'); else li.removeAttribute('aria-current');
    });
    stageLine.textContent = `${t('attention.stage_of', { k: stage })} — ${t(`attention.s_${STAGES[stage - 1]}`)}`;
    for (const s of STAGES) {
      const c = cards[s];
      c.h.textContent = `${c.index} · ${t(`attention.s_${s}`)}`;
      c.card.dataset.state = c.index < stage ? 'done' : c.index === stage ? 'current' : 'pending';
      c.pending.textContent = c.index > stage ? t('attention.pending') : '';
      c.body.hidden = c.index > stage;
    }
    const T = f.tensors;
    const xRows = toRows(T.x);
    const dModel = xRows[0].length;
    const dk = T.w_q.shape[1];
    const dv = T.w_v.shape[1];
    const focus = m.focus_row;
    mv.x.draw({ rows: T.x, rowLabels: tok, colLabels: dims(dModel) });
    mv.w_q.draw({ rows: T.w_q, rowLabels: dims(dModel), colLabels: dims(dk) });
    mv.w_k.draw({ rows: T.w_k, rowLabels: dims(dModel), colLabels: dims(dk), note: m.tie_qk ? t('attention.tied') : '', editable: !m.tie_qk });
    mv.w_v.draw({ rows: T.w_v, rowLabels: dims(dModel), colLabels: dims(dv) });
    cards.x.hint.textContent = t('attention.edit_hint');
    if (T.q) {
      mv.q.draw({ rows: T.q, rowLabels: tok, colLabels: dims(dk), focusRow: focus });
      mv.k.draw({ rows: T.k, rowLabels: tok, colLabels: dims(dk) });
      mv.v.draw({ rows: T.v, rowLabels: tok, colLabels: dims(dv) });
    }
    if (T.scores) mv.scores.draw({ rows: T.scores, rowLabels: tok, colLabels: tok, focusRow: focus });
    if (T.scaled) mv.scaled.draw({ rows: T.scaled, rowLabels: tok, colLabels: tok, focusRow: focus, note: t('attention.sqrt', { d: m.d_k, s: fmt(m.sqrt_d_k, 4) }) });
    if (T.masked) {
      mv.allowed.draw({ rows: m.allowed, rowLabels: tok, colLabels: tok, note: t('attention.allowed') });
      mv.masked.draw({ rows: T.masked, rowLabels: tok, colLabels: tok, focusRow: focus, note: t('attention.masked') });
      cards.masked.hint.textContent = t('attention.mask_hint');
    } else cards.masked.hint.textContent = '';
    if (T.weights) mv.weights.draw({ rows: T.weights, rowLabels: tok, colLabels: tok, focusRow: focus, note: focus !== null ? t('attention.focus', { r: focus }) : t('attention.rows_sum'), scale: 1 });
    if (T.out) mv.out.draw({ rows: T.out, rowLabels: tok, colLabels: dims(dv), focusRow: focus });
    // The lecture notes' worked example in their own rounding (3 decimals), one line per
    // stage reached; the weights table above shows torch's values to 4 (0.4469, 0.3292).
    const row = (m2, r) => toRows(m2)[r];
    const three = (xs) => `[${xs.map((v) => (Number.isFinite(v) ? v.toFixed(3).replace('-', '−') : '−∞')).join(', ')}]`;
    cards.weights.note.textContent = focus !== null && T.weights
      ? `${tok[focus]}: softmax(${three(row(T.masked, focus))}) = ${three(row(T.weights, focus))}` : '';
    cards.out.note.textContent = focus !== null && T.out ? `${tok[focus]}: ${three(row(T.weights, focus))} · V = ${three(row(T.out, focus))}` : '';
    mv.residual.el.hidden = !T.residual;
    if (T.residual) mv.residual.draw({ rows: T.residual, rowLabels: tok, colLabels: dims(dModel), note: t('attention.residual') });
    cards.out.hint.textContent = stage === STAGES.length ? t('attention.done_hint') : '';
  }

  function drawChecks(f) {
    const m = f.meta;
    checks.show([
      { label: t('attention.sym'), value: m.symmetry_error, note: m.symmetry_error < 1e-6 ? t('attention.sym_tied') : t('attention.sym_free') },
      { label: t('attention.sdpa'), value: m.sdpa_error },
    ]);
  }

  function drawContext(f) {
    const T = f.tensors;
    const show = T.x.shape[1] === 2;
    pCtx.el.hidden = !show;
    if (!show) return;
    const xs = toRows(T.x);
    const res = T.residual ? toRows(T.residual) : null;
    const key = JSON.stringify([xs, res, f.meta.tokens]);
    if (key === ctxKey) return;
    ctxKey = key;
    const arrows = (rows, color, name, dash, mark, where) => ({
      type: 'scatter', mode: 'lines+markers+text', name,
      x: rows.flatMap((r) => [0, r[0], null]), y: rows.flatMap((r) => [0, r[1], null]),
      text: rows.flatMap((_, i) => ['', `${f.meta.tokens[i]}${mark}`, '']), textposition: where,
      line: { color, width: 2, dash }, marker: { size: 7, color }, hoverinfo: 'x+y+text',
    });
    const traces = [arrows(xs, COLORS[0], t('attention.ctx_in'), 'dot', '', 'top left')];
    if (res) traces.push(arrows(res, COLORS[1], t('attention.ctx_out'), 'solid', '′', 'bottom right'));
    const lim = 1.15 * Math.max(1, ...xs.flat().map(Math.abs), ...(res || []).flat().map(Math.abs));
    Plotly.react(pCtx.chart, traces, baseLayout({
      showlegend: true, legend: { orientation: 'h', y: 1.12 },
      xaxis: { zeroline: true, range: [-lim, lim] }, yaxis: { zeroline: true, range: [-lim, lim], scaleanchor: 'x' },
    }), CONFIG);
  }

  function drawProbe(f) {
    const m = f.meta;
    const p = m.probe;
    probeInfo.show([
      { label: t('attention.now_d', { d: p.d }), value: '' },
      { label: t('attention.var_raw'), value: p.var_raw },
      { label: t('attention.var_scaled'), value: p.var_scaled },
      { label: t('attention.ent_raw'), value: p.entropy_raw, note: `/ ${fmt(p.entropy_max, 3)}` },
      { label: t('attention.ent_scaled'), value: p.entropy_scaled, note: `/ ${fmt(p.entropy_max, 3)}` },
    ]);
    const key = JSON.stringify([p, document.documentElement.lang]);
    if (key === probeKey || !f.tensors.probe_sweep) return;
    probeKey = key;
    const sw = toRows(f.tensors.probe_sweep);
    const ds = m.probe_ds;
    const col = (k) => sw.map((r) => r[k]);
    const line = (y, name, color) => ({ type: 'scatter', mode: 'lines+markers', x: ds, y, name, line: { color, width: 2 }, marker: { size: 5 } });
    const now = (y, color) => ({ type: 'scatter', mode: 'markers', x: [p.d], y: [y], showlegend: false, marker: { size: 13, symbol: 'diamond', color, line: { color: '#000', width: 1 } } });
    const axes = (ylog) => ({
      showlegend: true, legend: { orientation: 'h', y: 1.15 },
      xaxis: { type: 'log', title: { text: 'd' }, dtick: Math.log10(2) * 2, tickformat: 'd' },
      yaxis: { type: ylog ? 'log' : 'linear', exponentformat: 'power' },
    });
    Plotly.react(pVar.chart, [
      line(col(0), t('attention.raw'), COLORS[1]), line(col(1), t('attention.scaled'), COLORS[0]),
      now(p.var_raw, COLORS[1]), now(p.var_scaled, COLORS[0]),
    ], baseLayout(axes(true)), CONFIG);
    Plotly.react(pEnt.chart, [
      line(col(2), t('attention.raw'), COLORS[1]), line(col(3), t('attention.scaled'), COLORS[0]),
      { type: 'scatter', mode: 'lines', x: [ds[0], ds[ds.length - 1]], y: [p.entropy_max, p.entropy_max], name: t('attention.max_ent'), line: { color: '#999', dash: 'dot' } },
      now(p.entropy_raw, COLORS[1]), now(p.entropy_scaled, COLORS[0]),
    ], baseLayout(axes(false)), CONFIG);
  }

  function drawChain(f) {
    const c = f.meta.chain;
    chainTitle.textContent = t('attention.chain', { h: c.heads, dh: 8 / c.heads });
    const head = document.createElement('tr');
    for (const k of ['code', 'shape', 'same', 'contig']) { const th = document.createElement('th'); th.textContent = t(`attention.${k}`); head.append(th); }
    const rows = c.steps.map((s) => {
      const tr = document.createElement('tr');
      const code = document.createElement('td'); const cc = document.createElement('code'); cc.textContent = s.code; code.append(cc);
      const shape = document.createElement('td'); shape.textContent = `[${s.shape.join(', ')}]`; shape.className = 'shape';
      const same = document.createElement('td');
      same.textContent = s.same_memory === null ? t('attention.new') : s.same_memory ? `✓ ${t('attention.yes')}` : `✗ ${t('attention.no')}`;
      same.dataset.v = String(s.same_memory);
      const contig = document.createElement('td');
      contig.textContent = s.contiguous ? t('attention.yes') : t('attention.no');
      contig.dataset.v = String(s.contiguous);
      tr.append(code, shape, same, contig);
      return tr;
    });
    chainTable.replaceChildren(head, ...rows);
    chainErr.replaceChildren();
    if (c.view_error) {
      const lab = document.createElement('span'); lab.textContent = `${t('attention.view_err')}: `;
      const msg = document.createElement('code'); msg.textContent = `RuntimeError: ${c.view_error}`;
      chainErr.append(lab, msg);
    }
    chainSdpa.textContent = `${t('attention.chain_sdpa')}: ${fmt(c.sdpa_error, 3)}`;
  }

  function drawAll(f) {
    drawStages(f);
    drawChecks(f);
    drawContext(f);
    drawProbe(f);
    drawChain(f);
  }

  return {
    frame(f) {
      if (!f.meta || !f.meta.stages) return;
      last = f;
      drawAll(f);
    },
    reset() { ctxKey = null; },
    relabel() {
      for (const p of [pChecks, pCtx, pVar, pEnt, pProbe]) p.relabel();
      probeKey = null;
      ctxKey = null;
      if (last) drawAll(last);
    },
  };
}
