// View of `rnn`: a character RNN learning a text. The dashboard draws the loss (train and
// held-out), the gradient's norm before clipping, the clip coefficient and the memorised
// span over steps; this view adds generation (greedy or sampled, the lab's declared input)
// with its top-k bars and memorisation meter, the training sample, the hidden state over
// time, ‖h_t‖ and the gradient through time (a waterfall of frames, and the last one beside
// its bound), the activations' derivatives, and the norm example beside the live clipping.
// Every number comes from the server; the view only draws.
import { addStrings, t } from '../core/i18n.js';
import { el, setText } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { logTicks } from '../components/lineChart.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { baseLayout, CONFIG, fmt, Plotly } from '../components/plot.js';
import { probBars } from '../components/probBars.js';
import { tryBar } from '../components/tryBar.js';
import { waterfall } from '../components/waterfall.js';
import { STRINGS } from './rnn/strings.js';

const ID = 'rnn';
addStrings(STRINGS);

export const stylesheet = '/css/labs/rnn.css';
// "My pasted text" shows the paste box and waits for the text (the lab cannot train on nothing).
export const formWaits = { text: { pasted: { field: 'pasted', min: 200 } } };

const SCENARIOS = {
  explode: { activation: 'relu', whh_scale: 2.0, clip: false },
  vanish: { activation: 'sigmoid', whh_scale: 1.0 },
  tanh: { activation: 'tanh', whh_scale: 1.0, clip: true },
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
  const tries = tryBar(pics, ctx, { prefix: 'rnn', scenarios: SCENARIOS, toggle: { param: 'clip', on: 'rnn.clip_on', off: 'rnn.clip_off' } });

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
    tries.draw();
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

  // The shared log ticks (numbers as themselves: 0.05, 2×10⁻⁵), never plotly's "1f 1p 1n".
  function logAxis(lo, hi) {
    const { vals, text } = logTicks(10 ** lo, 10 ** hi);
    return { type: 'log', range: [lo, hi], tickvals: vals, ticktext: text };
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
    ], { xaxis: { title: { text: t('rnn.t') } }, yaxis: logAxis(lo, hi) });
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
