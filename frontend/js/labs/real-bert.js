// View of `real-bert`: all-MiniLM-L6-v2's real attention on the learner's sentences. A head
// view (lines between tokens, BertViz-style: a layer and a head, or all 12 heads coloured),
// the model view (6 × 12 maps on one mapGrid), what the clicked token reads in every head
// (72 one-row maps and the heads ranked by the weight it puts on a chosen word), the
// [CLS]/[SEP] sinks, and the sentence embeddings with their cosine similarities. Every
// number is the server's; the page only sorts and draws them. View keys: layer, head
// (-1 = all heads), token (the clicked one); the hovered token is the store's hoverToken.
import { setText, el } from '../core/dom.js';
import { t } from '../core/i18n.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { probBars } from '../components/probBars.js';
import { readout } from '../components/readout.js';
import { tokenStrip } from '../components/tokenStrip.js';
import './real-bert/strings.js';
import { drawHeadView, headColor } from './real-bert/headView.js';

export const stylesheet = '/css/labs/real-bert.css';
export const lazyPlotly = true; // canvas and DOM only

const SPECIAL = new Set(['[CLS]', '[SEP]']);
const pct = (v) => `${(100 * v).toFixed(0)}%`;

export default function mount(root, ctx) {
  const { store } = ctx;
  root.innerHTML = '';
  const view = el('div', 'view-grid rb-view');
  root.append(view);

  // -- the sentences --------------------------------------------------------------------
  const pIn = panel(view, 'real-bert.input', { chart: false, wide: true });
  const form = el('form', 'rb-form');
  form.innerHTML = '<textarea name="text" rows="3" maxlength="3000" spellcheck="false"></textarea><div class="rb-form-row"><label class="rb-check"><input type="checkbox" name="pair"><span></span></label><button type="submit" class="primary"></button></div>';
  const area = form.elements.text;
  const pairBox = form.elements.pair;
  const note = el('p', 'rb-note');
  const warn = el('p', 'rb-warn');
  warn.hidden = true;
  const strip = tokenStrip(el('div', 'rb-strip'), { store });
  const stripHint = el('p', 'hint');
  pIn.body.append(form, note, strip.el, stripHint, warn);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const p = { text: area.value, pair: pairBox.checked };
    store.set('token', null);
    ctx.setParams(p);
  });
  strip.el.addEventListener('click', (ev) => {
    const chip = ev.target.closest('.tok');
    if (chip) selectToken(Number(chip.dataset.i));
  });

  // -- the head view --------------------------------------------------------------------
  const pHead = panel(view, 'real-bert.head_view', { chart: false, hint: 'real-bert.head_hint' });
  const pick = el('div', 'rb-pick');
  const layerSel = el('select');
  layerSel.name = 'layer';
  const headSel = el('select');
  headSel.name = 'head';
  const layerLab = el('label'); layerLab.append(el('span'), layerSel);
  const headLab = el('label'); headLab.append(el('span'), headSel);
  pick.append(layerLab, headLab);
  const headCanvas = el('canvas', 'rb-head-canvas');
  const headWrap = el('div', 'rb-head-wrap');
  headWrap.append(headCanvas);
  pHead.body.append(pick, headWrap);
  let headLayout = null;
  const rowAt = (ev) => {
    if (!headLayout) return null;
    const r = headCanvas.getBoundingClientRect();
    const i = Math.floor((ev.clientY - r.top - headLayout.top) / headLayout.rowH);
    return i >= 0 && i < headLayout.rows ? i : null;
  };
  headCanvas.addEventListener('mousemove', (ev) => { const i = rowAt(ev); if (i !== store.get('hoverToken')) store.set('hoverToken', i); });
  headCanvas.addEventListener('mouseleave', () => store.set('hoverToken', null));
  headCanvas.addEventListener('click', (ev) => { const i = rowAt(ev); if (i !== null) selectToken(i); });
  layerSel.onchange = () => store.set('layer', Number(layerSel.value));
  headSel.onchange = () => store.set('head', Number(headSel.value));

  // -- what the clicked token reads, in every head --------------------------------------
  const pTok = panel(view, 'real-bert.token_view', { chart: false });
  const tokTitle = el('p', 'rb-sub');
  const toRow = el('label', 'rb-to');
  const toSel = el('select');
  toRow.append(el('span'), toSel);
  const ranking = el('ol', 'rb-rank');
  const rowGridEl = el('div');
  pTok.body.append(tokTitle, toRow, ranking, rowGridEl);
  let toPicked = -1; // the learner's "to" word; -1: each head's own strongest word
  toSel.onchange = () => { toPicked = Number(toSel.value); drawToken(); };
  const rowGrid = mapGrid(rowGridEl, { // a map a layer: heads × keys, the clicked token's rows
    maxCell: 220, minCell: 60, columns: 3,
    tip: (h) => `L${h.map} H${h.row} · ${tokenOf(sel())} → ${tokenOf(h.col)} · ${pct(h.value)}`,
  });

  // -- the model view -------------------------------------------------------------------
  const pModel = panel(view, 'real-bert.model_view', { chart: false, wide: true, hint: 'real-bert.model_hint' });
  const modelEl = el('div');
  pModel.body.append(modelEl);
  const model = mapGrid(modelEl, {
    maxCell: 90, minCell: 16,
    onHover: (h) => store.set('hoverToken', h ? h.row : null),
    onSelect: (h) => { if (h) { store.set('layer', h.group); store.set('head', h.map); } },
    tip: (h) => `L${h.group} H${h.map} · ${tokenOf(h.row)} → ${tokenOf(h.col)} · ${pct(h.value)}`,
  });

  // -- sinks ----------------------------------------------------------------------------
  const pSink = panel(view, 'real-bert.sinks', { chart: false });
  const sinkText = el('p', 'rb-explain');
  const sinkBars = probBars(el('div'), { max: 12 });
  const sinkNum = el('p', 'rb-sub');
  pSink.body.append(sinkNum, sinkBars.el, sinkText);

  // -- embeddings -----------------------------------------------------------------------
  const pEmb = panel(view, 'real-bert.embeddings', { chart: false });
  const embText = el('p', 'rb-explain');
  const sentList = el('ol', 'rb-sentences');
  const simEl = el('div');
  const embEl = el('div');
  const embTitle = el('h4');
  pEmb.body.append(embText, sentList, simEl, embTitle, embEl);
  const sim = mapGrid(simEl, { colormap: 'blues', range: [0, 1], maxCell: 220, tip: (h) => `${h.row + 1} · ${h.col + 1}: cos = ${h.value.toFixed(3)}` });
  const emb = mapGrid(embEl, { colormap: 'diverging', range: 'symmetric', maxCell: 2000, minCell: 100 });

  // -- facts ----------------------------------------------------------------------------
  const pFacts = panel(view, 'real-bert.facts', { chart: false });
  const facts = readout(el('div'));
  pFacts.body.append(facts.el);

  // -- state ----------------------------------------------------------------------------
  let last = null;
  const tokens = () => (last ? last.meta.tokens : []);
  const tokenOf = (i) => (tokens()[i] ?? String(i));
  const sel = () => { const k = store.get('token'); return k !== null && k !== undefined && k < tokens().length ? k : null; };
  const layer = () => Math.min(5, Math.max(0, store.get('layer') ?? 0));
  const head = () => { const h = store.get('head'); return h === null || h === undefined ? -1 : h; };
  const patterns = () => Array.from({ length: last.meta.n_layers }, (_, l) => last.tensors[`blocks.${l}.attn.hook_pattern`]);
  const weight = (l, h, i, j) => { const p = last.tensors[`blocks.${l}.attn.hook_pattern`]; const T = p.shape[1]; return p.data[(h * T + i) * T + j]; };
  let pickedHead = false; // the learner chose a head: a token click no longer moves it

  function selectToken(i) {
    store.set('token', store.get('token') === i ? null : i);
    const s = sel();
    if (s !== null && !pickedHead) { // show the head that links it most strongly (from the data)
      const best = rank(s, toPicked)[0];
      if (best) { store.set('layer', best.l); store.set('head', best.h); }
    }
  }

  const isWord = (j, i) => j !== i && !SPECIAL.has(tokens()[j]) && !/^[^\w]$/.test(tokens()[j]);

  /** Heads ranked by the weight token i puts on word j, or (j = -1) on its own strongest
   * word (not itself, [CLS], [SEP] or punctuation). */
  function rank(i, j) {
    const out = [];
    const T = tokens().length;
    for (let l = 0; l < last.meta.n_layers; l++) {
      for (let h = 0; h < last.meta.n_heads; h++) {
        let k = j;
        if (j < 0) { k = -1; for (let c = 0; c < T; c++) if (isWord(c, i) && (k < 0 || weight(l, h, i, c) > weight(l, h, i, k))) k = c; }
        if (k >= 0) out.push({ l, h, k, w: weight(l, h, i, k) });
      }
    }
    return out.sort((a, b) => b.w - a.w);
  }

  function drawInput() {
    const m = last.meta;
    strip.show(m.tokens, {
      extra: m.tokens.map((tok) => (tok === '[UNK]' ? 'unk' : SPECIAL.has(tok) ? 'special' : m.types[m.tokens.indexOf(tok)] ? 'b' : '')),
      titles: m.tokens.map((tok, i) => `${i}: ${tok} (id ${m.ids[i]}${m.types[i] ? ', B' : ''})`),
    });
    strip.el.querySelectorAll('.tok').forEach((c, i) => { c.classList.toggle('sel', i === sel()); c.classList.toggle('seg-b', !!m.types[i]); });
    const w = [];
    if (m.unk.length) w.push(t('real-bert.unk_found', { n: m.unk.length, all: m.tokens.length }));
    if (m.truncated) w.push(t('real-bert.truncated', { max: m.max_tokens, n: m.dropped }));
    warn.hidden = !w.length;
    setText(warn, w.join(' '));
  }

  function drawHead() {
    if (!last) return;
    const hv = head();
    headLayout = drawHeadView(headCanvas, headWrap, {
      tokens: tokens(), layer: layer(), head: hv, nHeads: last.meta.n_heads,
      weight, focus: store.get('hoverToken') ?? sel(), color: headColor,
    });
    layerSel.value = String(layer());
    headSel.value = String(hv);
  }

  function drawModel() {
    const m = last.meta;
    model.draw(patterns(), {
      groupLabels: patterns().map((_, l) => `L${l}`),
      mapLabels: Array.from({ length: m.n_heads }, (_, h) => `H${h}`),
      rowLabels: m.tokens, colLabels: m.tokens, rowTitle: t('real-bert.query'), colTitle: t('real-bert.key'),
      title: (l, h) => t('real-bert.zoom_title', { layer: l, head: h }),
      aria: t('real-bert.model_aria', { tokens: m.tokens.length }),
    });
  }

  function drawToken() {
    const i = sel();
    toRow.hidden = rowGridEl.hidden = ranking.hidden = i === null;
    if (i === null) { setText(tokTitle, t('real-bert.click_token')); return; }
    const m = last.meta;
    const T = m.tokens.length;
    const j = toPicked < T && toPicked !== i ? toPicked : -1;
    const opts = [{ v: -1, text: t('real-bert.to_any') }, ...m.tokens.map((tok, k) => ({ v: k, text: `${k}: ${tok}`, off: !isWord(k, i) }))];
    toSel.replaceChildren(...opts.map((o) => { const e = el('option', null, o.text); e.value = String(o.v); e.disabled = !!o.off; return e; }));
    toSel.value = String(j);
    setText(tokTitle, t('real-bert.token_title', { tok: m.tokens[i], i }));
    const top = rank(i, j).slice(0, 8);
    ranking.replaceChildren(...top.map((r) => {
      const li = el('li');
      const b = el('button', 'rb-headbtn', `L${r.l} H${r.h}`);
      b.type = 'button';
      b.onclick = () => { pickedHead = true; store.set('layer', r.l); store.set('head', r.h); };
      li.append(b, el('span', null, t('real-bert.rank_row', { from: m.tokens[i], to: m.tokens[r.k], w: pct(r.w) })));
      return li;
    }));
    const maps = [];
    for (let l = 0; l < m.n_layers; l++) {
      const p = last.tensors[`blocks.${l}.attn.hook_pattern`];
      const rows = new Float32Array(m.n_heads * T); // [H, T]: row i of each head of layer l
      for (let h = 0; h < m.n_heads; h++) rows.set(p.data.subarray((h * T + i) * T, (h * T + i + 1) * T), h * T);
      maps.push({ data: rows, rows: m.n_heads, cols: T });
    }
    rowGrid.draw(maps, {
      mapLabels: Array.from({ length: m.n_layers }, (_, l) => `L${l}`),
      rowLabels: Array.from({ length: m.n_heads }, (_, h) => `H${h}`), colLabels: m.tokens,
      rowTitle: t('real-bert.head'), colTitle: t('real-bert.key'),
      title: (_, l) => t('real-bert.row_title', { layer: l, tok: m.tokens[i] }),
    });
    rowGrid.mark(j >= 0 ? { col: j } : null);
  }

  function drawSinks() {
    const s = last.tensors.sink_mass; // [L, H, 2]
    const [L, H] = s.shape;
    let cls = 0, sep = 0;
    const rows = [];
    for (let l = 0; l < L; l++) {
      let c = 0, e = 0;
      for (let h = 0; h < H; h++) { c += s.data[(l * H + h) * 2]; e += s.data[(l * H + h) * 2 + 1]; }
      cls += c; sep += e;
      rows.push({ label: `L${l} [CLS]`, value: c / H, kind: 'cls' }, { label: `L${l} [SEP]`, value: e / H, kind: 'sep' });
    }
    sinkBars.show(rows);
    setText(sinkNum, t('real-bert.sink_total', { cls: pct(cls / (L * H)), sep: pct(sep / (L * H)), n: last.meta.tokens.length }));
    setText(sinkText, t('real-bert.sink_explain'));
  }

  function drawEmbeddings() {
    const m = last.meta;
    sentList.replaceChildren(...m.sentences.map((s, k) => el('li', null, `${s} (${t('real-bert.n_tokens', { n: m.sentence_tokens[k] })})`)));
    const names = m.sentences.map((_, k) => String(k + 1));
    sim.draw(last.tensors.similarity, { rowLabels: names, colLabels: names, title: () => t('real-bert.sim_title'), aria: t('real-bert.sim_title') });
    emb.draw(last.tensors.embedding, { rowLabels: names, rowTitle: t('real-bert.sentence'), colTitle: t('real-bert.dim'), title: () => t('real-bert.emb_title') });
    setText(embText, t(m.sentences.length > 1 ? 'real-bert.emb_explain' : 'real-bert.emb_one'));
    setText(embTitle, t('real-bert.emb_title'));
  }

  function drawFacts() {
    const m = last.meta;
    facts.show([
      { label: t('real-bert.f_model'), value: 'all-MiniLM-L6-v2' },
      { label: t('real-bert.f_shape'), value: t('real-bert.f_shape_v', { l: m.n_layers, h: m.n_heads, d: m.d_model }) },
      { label: t('real-bert.f_params'), value: m.n_params.toLocaleString() },
      { label: t('real-bert.f_weights'), value: `${m.weights_mb} MB`, note: t('real-bert.f_shared') },
      { label: t('real-bert.f_tokens'), value: `${m.tokens.length} / ${m.max_tokens}` },
      { label: t('real-bert.f_time'), value: `${m.forward_ms.toFixed(1)} ms`, note: t('real-bert.f_threads', { n: m.threads }) },
    ]);
  }

  function relabelStatic() {
    form.querySelector('.rb-check span').textContent = t('real-bert.pair');
    form.querySelector('button').textContent = t('real-bert.read');
    area.setAttribute('aria-label', t('real-bert.input'));
    setText(note, t('real-bert.note'));
    setText(stripHint, t('real-bert.strip_hint'));
    layerLab.firstChild.textContent = t('real-bert.layer');
    headLab.firstChild.textContent = t('real-bert.head');
    toRow.firstChild.textContent = t('real-bert.to');
    layerSel.replaceChildren(...Array.from({ length: 6 }, (_, l) => { const o = el('option', null, `L${l}`); o.value = String(l); return o; }));
    headSel.replaceChildren(...[-1, ...Array.from({ length: 12 }, (_, h) => h)].map((h) => { const o = el('option', null, h < 0 ? t('real-bert.all_heads') : `H${h}`); o.value = String(h); if (h >= 0) o.style.color = headColor(h); return o; }));
  }

  function drawAll() {
    if (!last) return;
    drawInput(); drawHead(); drawModel(); drawToken(); drawSinks(); drawEmbeddings(); drawFacts();
    const s = sel();
    model.mark(s === null ? null : { row: s });
  }

  store.on('hoverToken', () => drawHead());
  store.on('token', () => { if (!last) return; drawInput(); drawHead(); drawToken(); const s = sel(); model.mark(s === null ? null : { row: s }); });
  store.on('layer', drawHead);
  store.on('head', drawHead);
  headSel.addEventListener('change', () => { pickedHead = true; });
  layerSel.addEventListener('change', () => { pickedHead = true; });
  relabelStatic();
  area.value = ctx.params().text || '';
  store.on('role', (r) => { const ro = r !== 'driver'; area.readOnly = ro; pairBox.disabled = ro; form.querySelector('button').disabled = ro; });

  function onFrame(f) {
    if (!f.tensors['blocks.0.attn.hook_pattern']) return;
    const changed = !last || last.meta.tokens.join('\u0000') !== f.meta.tokens.join('\u0000');
    last = f;
    if (changed) toPicked = -1;
    drawAll();
    root.dataset.tokens = String(f.meta.tokens.length); // for tests
  }

  return {
    frame: onFrame,
    infer: onFrame,
    params(p) { if (document.activeElement !== area) area.value = p.text; pairBox.checked = !!p.pair; },
    reset() {},
    relabel() {
      for (const p of [pIn, pHead, pTok, pModel, pSink, pEmb, pFacts]) p.relabel();
      relabelStatic();
      model.relabel(); rowGrid.relabel(); sim.relabel(); emb.relabel();
      drawAll();
    },
  };
}
