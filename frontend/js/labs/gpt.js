// View of `gpt`: a layers × heads grid of attention maps (canvas) over one fixed example,
// its tokens, loss / accuracy (or perplexity) / gradient-norm curves, residual and embedding
// norms, the next-token candidates, the causal-mask leak made obvious, and generation with
// the KV cache. Everything drawn comes from the server's frames; the page computes no model
// maths. The hovered token (store key `hoverToken`) is highlighted in every view.
import './gpt/strings.js';
import { el, setText } from '../core/dom.js';
import { currentLang, t } from '../core/i18n.js';
import { mapGrid } from '../components/mapGrid.js';
import { tokenStrip } from '../components/tokenStrip.js';
import { probBars } from '../components/probBars.js';
import { panel } from '../components/panel.js';
import { readout } from '../components/readout.js';
import { fmt } from '../components/plot.js';
import { dashboard } from '../components/dashboard.js';
import { paramDiff } from '../components/paramDiff.js';
import { cellArithmetic } from '../components/cellArithmetic.js';
import { generatePanel } from './gpt/generate.js';
import { measureHeads, strongHeads } from './gpt/measure.js';
import { follow, isPhone } from '../core/subscription.js';

const TASK_KINDS = ['reverse', 'copy', 'sort', 'induction', 'modadd'];
const TEXT_PROMPTS = { 'text-en': 'The little shaomai', 'text-zh': '小烧麦' };
const SECONDARY_MS = 150; // the norm bars redraw at most this often while frames stream

export const stylesheet = '/css/labs/gpt.css'; // the shell loads it

// Attention maps, tokens and bars are canvas and DOM: the first frame is drawn before
// plotly loads; the curves (lineChart) and the generation's work chart follow when it does.
export const lazyPlotly = true;

// "Text: my pasted text" shows the paste box and waits for the text (the lab cannot train
// on nothing): the form sends the choice with the text.
export const formWaits = { data: { 'text-pasted': { field: 'pasted', min: 100 } } };

export default function mount(root, ctx) {
  const { store, info } = ctx;
  root.innerHTML = '';
  const view = el('div', 'gpt-view');
  root.append(view);

  // -- the leak banner ----------------------------------------------------------------------
  const leak = el('div', 'gpt-leak');
  leak.hidden = true;
  leak.setAttribute('role', 'alert');
  const leakTitle = document.createElement('strong');
  const leakText = document.createElement('p');
  const leakFix = document.createElement('button');
  leakFix.type = 'button';
  leakFix.onclick = () => ctx.setParams({ causal: true });
  leak.append(leakTitle, leakText, leakFix);
  view.append(leak);

  // The training dashboard: the attention grid is this lab's picture; loss (with the kept
  // runs dashed), accuracy or perplexity, the gradient waterfall. The rest follows its panels.
  let kind = 'task';
  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'gpt.loss_chart', logY: true, keys: [{ key: 'loss', name: 'gpt.train_loss' }, { key: 'val_loss', name: 'gpt.val_loss', color: '#e8702a', markers: true }] },
      {
        title: 'gpt.acc_chart', kept: false, logY: () => kind === 'text', legend: () => (kind === 'text' ? 'high' : 'low'),
        keys: () => (kind === 'text'
          ? [{ key: 'ppl', name: 'gpt.ppl' }, { key: 'val_ppl', name: 'gpt.val_ppl', color: '#e8702a', markers: true }]
          : [
            { key: 'seq_acc', name: 'gpt.seq_acc', color: '#1a9e77', markers: true },
            { key: 'acc', name: 'gpt.acc', color: '#2f6fdf', markers: true },
            { key: 'train_seq_acc', name: 'gpt.train_seq_acc', color: '#9aa0a8' },
          ]),
      },
    ],
    readout: false, // the facts beside the attention grid are this lab's readout
  });
  dash.picturesEl.classList.add('gpt-grid');
  const pMetric = dash.panels[1];
  const grid = dash.grid;

  // -- attention ----------------------------------------------------------------------------
  const pAttn = panel(dash.picturesEl, 'gpt.attention', { chart: false, hint: 'gpt.attn_hint', wide: true });
  const solvedBadge = el('span', 'gpt-solved');
  solvedBadge.hidden = true;
  pAttn.el.querySelector('h3').after(solvedBadge);
  const attnRow = el('div', 'gpt-attn-row');
  const attnMain = el('div', 'gpt-attn-main');
  const exampleLabel = el('div', 'gpt-sub');
  const strip = tokenStrip(el('div'), { store });
  const gridEl = el('div');
  const legend = el('div', 'gpt-legend');
  legend.innerHTML = '<span class="lg-scale"></span><span class="lg-text"></span><span class="lg-masked"></span><span class="lg-mtext"></span>';
  const explain = el('p', 'gpt-explain');
  const measuredEl = el('p', 'gpt-explain gpt-measured'); // what the heads do, measured on this frame
  attnMain.append(exampleLabel, strip.el, gridEl, legend, explain, measuredEl);
  const side = el('div', 'gpt-attn-side');
  const nextTitle = document.createElement('h4');
  const next = probBars(el('div'), { max: 8 });
  const facts = readout(el('div'));
  side.append(nextTitle, next.el, facts.el);
  attnRow.append(attnMain, side);
  pAttn.body.append(attnRow);
  let selecting = false;
  const tokenOf = (n) => (last && last.meta.tokens[n] !== undefined ? last.meta.tokens[n] : String(n));
  const attn = mapGrid(gridEl, {
    onHover: (h) => store.set('hoverToken', h ? h.row : null), // the query token, in every view
    onCell: (h) => askCell(h), // a cell of the enlarged map: its arithmetic (cellArithmetic.js)
    onSelect: (h) => { // the enlarged map is view state (view keys layer, head): URL and class follow
      selecting = true;
      store.set('layer', h ? h.group : null);
      store.set('head', h ? h.map : null);
      selecting = false;
    },
    tip: (h) => `${t('gpt.layer_short')}${h.group} ${t('gpt.head_short')}${h.map} · ${tokenOf(h.row)} (${h.row}) → ${tokenOf(h.col)} (${h.col}) · ${h.masked ? t('gpt.masked') : h.value.toFixed(3)}`,
  });
  attn.canvas.classList.add('attn-main'); // the names the page's tests and styles know
  attn.tip.classList.add('attn-tip');
  attn.zoom.classList.add('attn-zoom');
  // A phone is sent the layer it shows (the selected one, the head too when one is; a
  // viewer's default: layer 0); a desktop every map (docs/streams.md).
  let last = null; // latest training frame (the subscription's position reads it)
  const sub = follow(ctx.client, store, () => { // (scrubbed back: everything, follow's rule)
    if (!isPhone()) return null;
    const l = store.get('layer'), h = store.get('head');
    const position = focusIndex(); // the next-token panel shows this position's candidates
    if (Number.isInteger(l)) return { layer: l, head: Number.isInteger(h) ? h : null, position };
    return store.get('role') === 'driver' ? null : { layer: 0, position };
  });
  store.on('shownStep', sub.update); // (each frame shown: the focused position follows it)
  store.on('hoverToken', sub.update);
  // The drill-down: the clicked cell's q·k, ÷√d, mask and softmax, computed by the server
  // from the model now (infer {cell}); the panel says when the map shows an older step.
  const cellPanel = cellArithmetic(attn.zoom.querySelector('.mg-zoom-box'), { tokens: () => (last ? last.meta.tokens : []) });
  const askCell = (h) => {
    if (!last) return;
    cellPanel.ask({ layer: h.group, head: h.map, query: h.row, key: h.col, value: h.masked ? 0 : h.value }, last.step);
    ctx.infer({ cell: { layer: h.group, head: h.map, query: h.row, key: h.col } });
  };
  ctx.client.on('error', (m) => { if (m.field && m.field.startsWith('input.cell')) cellPanel.error(m.message); });

  // -- curves -------------------------------------------------------------------------------
  const pResid = panel(grid, 'gpt.resid_chart', { chart: false });
  pResid.el.classList.add('gpt-resid');
  const residTitle = document.createElement('h4');
  const resid = probBars(el('div'), { max: 10, scale: 'max', format: (v) => fmt(v, 3) });
  pResid.body.append(residTitle, resid.el);

  // -- text sample (the leak's evidence) ----------------------------------------------------
  const pSample = panel(grid, null, { chart: false });
  pSample.el.classList.add('gpt-sample');
  const sampleTitle = document.createElement('h3');
  const sampleText = document.createElement('pre');
  const prevTitle = document.createElement('h4');
  const prevText = el('pre', 'prev');
  const leakTry = document.createElement('button');
  leakTry.type = 'button';
  leakTry.onclick = () => { dash.keep(); ctx.setParams({ causal: false }); }; // compare with this run
  pSample.body.append(sampleTitle, sampleText, prevTitle, prevText, leakTry);
  pSample.el.hidden = true;

  // -- generation ---------------------------------------------------------------------------
  const pGen = panel(grid, 'gpt.gen_title', { chart: false, wide: true });
  const gen = generatePanel(pGen.body, { infer: ctx.infer });
  ctx.client.on('error', (m) => { if (m.field && m.field.startsWith('input')) gen.error(); });

  // -- state --------------------------------------------------------------------------------
  let shownOnce = false;
  let runParams = { ...ctx.params() };
  let prevSample = null; // {text, step, diff}
  let pendingDiff = false; // a new run started: name the previous one when its params arrive
  let secondaryAt = 0;
  let secondaryTimer = null;

  const isText = (p) => !TASK_KINDS.includes(p.data);

  function focusIndex() {
    const k = store.get('hoverToken');
    if (Number.isInteger(k) && k >= 0 && last && k < last.meta.tokens.length) return k; // -1: none
    if (!last) return null;
    const g = last.meta.graded.indexOf(true); // the first graded position: the answer starts
    return last.meta.kind === 'task' && g >= 0 ? g : last.meta.tokens.length - 1;
  }

  // The position a frame cut to one token (a phone's) has; else the focused one.
  const framePosition = () => (Number.isInteger(last.slice?.position) ? last.slice.position : focusIndex());

  function drawNext() {
    if (!last) return;
    const i = framePosition(); // (the hover moved: the next cut follows it)
    const m = last.meta, probs = last.tensors.next_probs, K = probs.shape[1], target = m.targets[i];
    setText(nextTitle, t('gpt.next_probs', { tok: `“${m.tokens[i]}”`, i }));
    next.show(m.next_top[i].map((label, j) => ({
      label, value: probs.data[i * K + j], hot: label === target, note: label === target ? t('gpt.correct') : '',
    })));
  }

  function drawSecondary() {
    if (!last) return;
    const now = performance.now();
    if (now - secondaryAt < SECONDARY_MS) {
      clearTimeout(secondaryTimer);
      secondaryTimer = setTimeout(drawSecondary, SECONDARY_MS);
      return;
    }
    secondaryAt = now;
    const r = last.tensors.resid_norm, e = last.tensors.embed_norm;
    const [rows, T] = r.shape;
    const k = store.get('hoverToken'); // a phone is sent one token's norms: show the one it has
    const at = last.slice?.cols?.resid_norm ? framePosition() : (Number.isInteger(k) && k >= 0 && k < T ? k : null);
    const val = (tensor, row) => {
      if (at !== null) return tensor.data[row * T + at];
      let s = 0;
      for (let j = 0; j < T; j++) s += tensor.data[row * T + j];
      return s / T;
    };
    setText(residTitle, at !== null ? t('gpt.resid_token', { tok: `“${last.meta.tokens[at]}”`, i: at }) : t('gpt.resid_mean'));
    resid.show([
      { label: t('gpt.tok_emb'), value: val(e, 0), kind: 'tok' },
      { label: t('gpt.pos_emb'), value: val(e, 1), kind: 'pos' },
      ...r.labels.map((label, l) => ({ label: l === 0 ? t('gpt.resid_in') : `${t('gpt.resid_after')} ${label}`, value: val(r, l) })),
    ]);
    pResid.el.dataset.drawn = `${last.step}:${at}`; // which step and token the bars show
  }

  function drawInfo() {
    const m = last.meta, s = last.scalars;
    const rows = [
      { label: t('gpt.step'), value: `${last.step} / ${m.max_steps}` },
      { label: t('loss'), value: s.loss },
    ];
    if (m.kind === 'task') {
      rows.push({ label: t('gpt.held_out_exact'), value: m.eval.seq_acc !== undefined ? `${(100 * m.eval.seq_acc).toFixed(1)}%` : '–', note: m.eval.step !== undefined ? `@${m.eval.step}` : '' });
      rows.push({ label: t('gpt.solved'), value: m.solved_at ? '✓' : t('gpt.not_yet'), note: m.solved_at ? t('gpt.solved_at', { step: m.solved_at, pct: Math.round(100 * m.solved_threshold) }) : '' });
    } else {
      rows.push({ label: t('gpt.held_out_ppl'), value: m.eval.val_ppl ?? '–', note: m.eval.step !== undefined ? `@${m.eval.step}` : '' });
    }
    rows.push(
      { label: t('gpt.n_params'), value: m.n_params.toLocaleString() },
      { label: t('gpt.shape'), value: t(m.n_layers === 1 ? 'gpt.shape_value_1' : 'gpt.shape_value', { layers: m.n_layers, heads: m.n_heads }) },
      { label: t('gpt.ctx_vocab'), value: `${m.n_ctx} / ${m.vocab_size}` },
      { label: t('gpt.mask'), value: t(m.causal ? 'gpt.on' : 'gpt.off'), warn: !m.causal },
    );
    facts.show(rows);
  }

  function drawLeak() {
    const p = ctx.params();
    const text = isText(p);
    leak.hidden = p.causal !== false;
    leakTitle.textContent = t('gpt.leak_title');
    leakText.textContent = t(text ? 'gpt.leak_text' : 'gpt.leak_task');
    leakFix.textContent = t('gpt.leak_fix');
    leakTry.hidden = p.causal === false;
    leakTry.textContent = t('gpt.leak_try');
  }

  function drawSample() {
    const m = last && last.meta;
    pSample.el.hidden = !(m && m.sample);
    if (!m || !m.sample) return;
    setText(sampleTitle, t('gpt.sample', { step: m.sample.step }));
    setText(sampleText, m.sample.text);
    prevTitle.hidden = prevText.hidden = !prevSample;
    if (prevSample) {
      setText(prevTitle, t('gpt.sample_prev', { diff: prevSample.diff || t('gpt.prev_run'), step: prevSample.step }));
      setText(prevText, prevSample.text);
    }
  }

  function drawAttention() {
    const m = last.meta;
    const patterns = [];
    for (let l = 0; l < m.n_layers; l++) patterns.push(last.tensors[`blocks.${l}.attn.hook_pattern`]);
    const T = m.tokens.length;
    attn.draw(patterns, {
      groupLabels: patterns.map((_, l) => `${t('gpt.layer_short')}${l}`),
      mapLabels: Array.from({ length: m.n_heads }, (_, h) => `${t('gpt.head_short')}${h}`),
      rowLabels: m.tokens, colLabels: m.tokens, rowTitle: t('gpt.query'), colTitle: t('gpt.key'),
      title: (layer, head) => t('gpt.zoom_title', { layer, head }),
      masked: m.causal ? (i, j) => j > i : null,
      aria: t('gpt.grid_aria', { layers: m.n_layers, heads: m.n_heads, tokens: T }),
    });
    setText(exampleLabel, t('gpt.example'));
    const target = last.tensors.target_prob.data;
    strip.show(m.tokens, {
      values: m.graded.map((g, i) => (g ? target[i] : 0)),
      muted: m.graded.map((g) => !g),
      titles: m.tokens.map((tok, i) => `${t('gpt.position')} ${i}: “${tok}” — ${t('gpt.next_is', { tok: `“${m.targets[i]}”` })}: ${(100 * target[i]).toFixed(1)}%`),
    });
    const task = m.kind === 'task' ? m.data : 'text';
    setText(explain, t(`gpt.explain_${task}`));
    setText(measuredEl, measuredText(patterns, m, task));
    solvedBadge.hidden = !m.solved_at;
    if (m.solved_at) setText(solvedBadge, `✓ ${t('gpt.solved')} ${t('gpt.solved_at', { step: m.solved_at, pct: Math.round(100 * m.solved_threshold) })}`);
  }

  // The heads that do something nameable in this frame, measured (a task: on its answer rows).
  function measuredText(patterns, m, task) {
    const graded = task === 'text' ? m.tokens.map((_, i) => i > 0) : m.graded;
    const heads = strongHeads(measureHeads(patterns, { tokens: m.tokens, targets: m.targets, graded }));
    if (!heads.length) return t('gpt.measured_none', { step: last.step });
    const said = heads.map((h) => {
      const name = `${t('gpt.layer_short')}${h.layer} ${t('gpt.head_short')}${h.head}`;
      const pct = Math.round(100 * h.best);
      if (h.kind === 'answer') return t('gpt.m_answer', { name, pct });
      return t(h.offset <= 1 ? `gpt.m_offset_${h.offset}` : 'gpt.m_offset', { name, pct, d: h.offset });
    });
    return t(task === 'text' ? 'gpt.measured_text' : 'gpt.measured', { step: last.step, heads: said.join(currentLang() === 'zh' ? '；' : '; ') });
  }

  function drawLegend() {
    legend.querySelector('.lg-text').textContent = t('gpt.scale');
    legend.querySelector('.lg-mtext').textContent = t('gpt.masked_key');
  }

  function genDefaults(m) {
    const p = ctx.params();
    if (m.kind === 'task') {
      const answers = m.graded.filter(Boolean).length;
      gen.defaults(`${p.data}:${p.seq_len}`, { prompt: m.prompt_example, max_new: answers, temperature: 0, top_k: 0, top_p: 1 });
    } else {
      const prompt = TEXT_PROMPTS[p.data] || m.prompt_example;
      // Stay inside the context window, so the cache grows a row a token and never slides.
      const room = m.n_ctx - [...prompt].length;
      gen.defaults(`${p.data}:${m.n_ctx}`, { prompt, max_new: Math.max(1, Math.min(80, room)), temperature: 0.8, top_k: 0, top_p: 0.95 });
    }
  }

  store.on('hoverToken', (k) => {
    attn.mark(k === null || k === undefined ? null : { row: k, col: k }); // as a query and as a key
    drawNext();
    drawSecondary();
  });
  // A link or the teacher names a map (layer, head): enlarge it, once there is a frame.
  const followZoom = () => {
    if (selecting || !last) return;
    const l = store.get('layer'), h = store.get('head');
    const z = attn.zoomed;
    if (l === null || l === undefined || h === null || h === undefined) { if (z) attn.close(); } else if (!z || z.group !== l || z.map !== h) attn.open(l, h);
  };
  store.on('layer', followZoom);
  store.on('head', followZoom);
  store.on('role', (r) => gen.setReadOnly(r !== 'driver')); // viewers watch generations, not start them
  drawLeak();
  drawLegend();

  return {
    frame(f) {
      if (!Object.keys(f.tensors).some((k) => k.endsWith('.attn.hook_pattern'))) return; // any layer: a phone has one
      last = f;
      if (f.meta.kind !== kind) { kind = f.meta.kind; dash.refresh(); }
      dash.onFrame(f);
      setText(pMetric.el.querySelector('h3'), t(f.meta.kind === 'text' ? 'gpt.ppl_chart' : 'gpt.acc_chart'));
      const first = !shownOnce;
      shownOnce = true;
      drawAttention();
      if (first) followZoom();
      drawNext();
      drawInfo();
      drawSample();
      drawSecondary();
      genDefaults(f.meta);
      root.dataset.step = String(f.step); // for tests: the step the grid shows
    },
    infer(f) { if (f.meta.cell) cellPanel.show(f.meta.cell); else gen.frame(f); },
    scalars(rows) {
      dash.onScalars(rows);
    },
    reset() {
      if (last && last.meta.sample) prevSample = { text: last.meta.sample.text, step: last.meta.sample.step, diff: '' };
      dash.reset();
      pendingDiff = true;
      last = null;
    },
    params(p) {
      if (pendingDiff) { // the run just rebuilt: name the previous one by what changed
        if (prevSample) prevSample.diff = paramDiff(runParams, p, info.schema);
        pendingDiff = false;
      }
      // Text pasted while a bundled text is chosen: train on it.
      const pasted = p.pasted && p.pasted !== runParams.pasted && [...p.pasted].length >= 100;
      if (pasted && p.data !== 'text-pasted' && store.get('role') === 'driver') ctx.setParams({ data: 'text-pasted' });
      runParams = { ...p };
      drawLeak();
      drawSample();
    },
    relabel() {
      for (const p of [pAttn, pResid, pGen]) p.relabel();
      dash.relabel();
      if (last) pMetric.el.querySelector('h3').textContent = t(last.meta.kind === 'text' ? 'gpt.ppl_chart' : 'gpt.acc_chart');
      gen.relabel();
      cellPanel.relabel();
      attn.relabel();
      drawLeak();
      drawLegend();
      if (last) { drawAttention(); drawNext(); drawInfo(); drawSample(); secondaryAt = 0; drawSecondary(); }
    },
  };
}
