// View of `real-llm`: SmolLM2-135M-Instruct answering token by token. For each step: the
// candidates (sampled-from and raw odds; the sliders ask the server for this step's odds
// under other settings), the new token's attention in 30 layers × 9 heads (one mapGrid map a
// layer), the KV cache measured from the real cache beside the config's figure, the speed
// measured here, the logit lens. The layout-mismatch switch is the `qk_layout` param. Every
// number comes from the server's frames. View keys: layer (the enlarged map), pick (the step
// shown; -1 = the newest). Tokens are printed as the server labels them: a byte-level piece
// of a character shows that character, its bytes on hover (`*_info`; tokenStrip.pieceChip).
import './real-llm/strings.js';
import { setText, el } from '../core/dom.js';
import { currentLang, t } from '../core/i18n.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { probBars } from '../components/probBars.js';
import { readout } from '../components/readout.js';
import { pieceChip, pieceNote } from '../components/tokenStrip.js';

export const stylesheet = '/css/labs/real-llm.css';
export const lazyPlotly = true; // canvas and DOM only

const EXAMPLE = 'What is the capital of France?';
const ODDS_MS = 120; // slider moves ask for new odds at most this often
const pct = (v) => `${(100 * v).toFixed(1)}%`;
function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 2 ** 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 2 ** 20).toFixed(2)} MiB`;
}

export default function mount(root, ctx) {
  const { store } = ctx;
  root.innerHTML = '';
  const view = el('div', 'view-grid rl-view');
  root.append(view);

  // -- the question -----------------------------------------------------------------------
  const pAsk = panel(view, 'real-llm.ask', { chart: false, wide: true });
  const form = el('form', 'rl-form');
  form.innerHTML = `
    <label class="rl-prompt"><span data-k="real-llm.prompt"></span><textarea name="prompt" rows="2" maxlength="2000"></textarea></label>
    <label class="rl-check"><input name="chat" type="checkbox" checked><span data-k="real-llm.chat"></span></label>
    <label><span data-k="real-llm.max_new"></span><input name="max_new" type="number" min="1" max="200" value="48"></label>
    <label><span data-k="real-llm.temperature"></span><span class="rl-range"><input name="temperature" type="range" min="0" max="2" step="0.05" value="0"><output></output></span></label>
    <label><span data-k="real-llm.top_k"></span><input name="top_k" type="number" min="0" max="49152" value="0"></label>
    <label><span data-k="real-llm.top_p"></span><span class="rl-range"><input name="top_p" type="range" min="0.05" max="1" step="0.05" value="1"><output></output></span></label>
    <label class="rl-check"><input name="attention" type="checkbox" checked><span data-k="real-llm.stream_attention"></span></label>
    <label class="rl-check"><input name="lens" type="checkbox" checked><span data-k="real-llm.stream_lens"></span></label>
    <button type="submit" class="primary rl-go"></button>`;
  const f = form.elements;
  f.prompt.value = EXAMPLE;
  const quant = el('p', 'rl-note');
  const loading = el('p', 'rl-loading');
  loading.hidden = true;
  const promptLine = el('p', 'rl-sub');
  const promptToks = el('div', 'rl-toks rl-prompt-toks');
  const byteNote = el('p', 'rl-note rl-bytes');
  const answerTitle = el('h4');
  const answer = el('div', 'rl-toks rl-answer');
  answer.setAttribute('aria-live', 'polite');
  const stopped = el('p', 'rl-sub');
  pAsk.body.append(form, quant, loading, promptLine, promptToks, answerTitle, answer, stopped, byteNote);
  const go = form.querySelector('.rl-go');
  const syncRanges = () => form.querySelectorAll('.rl-range').forEach((r) => { r.lastChild.textContent = r.firstChild.value; });

  // -- candidates -------------------------------------------------------------------------
  const pCand = panel(view, null, { chart: false });
  const candTitle = el('h3');
  const candNote = el('p', 'rl-sub');
  const bars = probBars(el('div'), { max: 20 });
  const candHint = el('p', 'hint');
  pCand.el.prepend(candTitle);
  pCand.body.append(candNote, bars.el, candHint);

  // -- logit lens -------------------------------------------------------------------------
  const pLens = panel(view, 'real-llm.lens', { chart: false, hint: 'real-llm.lens_hint' });
  const lens = probBars(el('div', 'rl-lens'), { max: 30 });
  pLens.body.append(lens.el);

  // -- attention --------------------------------------------------------------------------
  const pAtt = panel(view, 'real-llm.attention', { chart: false, wide: true, hint: 'real-llm.attn_hint' });
  const attEl = el('div');
  pAtt.body.append(attEl);
  let selecting = false;
  const attn = mapGrid(attEl, {
    columns: 3, maxCell: 420, minCell: 90,
    tip: (h) => `L${h.map} H${h.row} → ${shown() ? contextOf(shown())[h.col] ?? h.col : h.col} · ${pct(h.value)}`,
    onSelect: (h) => { selecting = true; store.set('layer', h ? h.map : null); selecting = false; },
  });

  // -- KV cache, speed, layout, facts ------------------------------------------------------
  const pKv = panel(view, 'real-llm.kv', { chart: false });
  const kvBar = el('div', 'rl-kvbar');
  kvBar.append(el('i'));
  const kvText = el('p', 'rl-sub');
  const kvLimit = el('p', 'rl-sub');
  pKv.body.append(kvBar, kvText, kvLimit);
  const pSpeed = panel(view, 'real-llm.speed', { chart: false, hint: 'real-llm.speed_hint' });
  const speed = readout(el('div'));
  pSpeed.body.append(speed.el);
  const pLayout = panel(view, 'real-llm.layout', { chart: false });
  const layoutText = el('p', 'rl-sub');
  const layoutNow = el('p', 'rl-sub rl-now');
  const layoutBtn = el('button');
  layoutBtn.type = 'button';
  const layoutLast = el('div', 'rl-last');
  pLayout.body.append(layoutText, layoutNow, layoutBtn, layoutLast);
  layoutBtn.onclick = () => ctx.setParams({ qk_layout: ctx.params().qk_layout === 'as_stored' ? 'unpermuted' : 'as_stored' });
  const pFacts = panel(view, 'real-llm.facts', { chart: false });
  const facts = readout(el('div'));
  pFacts.body.append(facts.el);

  // -- state ------------------------------------------------------------------------------
  let steps = []; // the current generation's token frames, by index
  let odds = null; // the latest `odds` frame (for the step shown)
  let meta = null; // the latest facts (snapshot or token frame)
  let busy = false;
  let promptKey = ''; // the prompt strip drawn (its tokens, and whether with their bytes)
  let readOnly = false;
  const lastText = {}; // layout -> the last answer written with it
  const shown = () => { const k = store.get('pick'); return (k !== null && k !== undefined && k >= 0 && steps[k]) || steps[steps.length - 1] || null; };
  // The cached tokens at a step, labelled as the newest frame labels them (a piece that was
  // pending then is a whole character now).
  const newest = (fr) => steps[steps.length - 1] || fr;
  // The prompt's bytes come on a generation's first and last frames (not on every one).
  // The chosen token of a step as the answer strip now labels it: a candidate alone that only
  // begins a character shows its bytes; once chosen, the next token says which character.
  const chosenAs = (s) => { const m = newest(s).meta, i = s.meta.index; return m.tokens[i] !== undefined ? [m.tokens[i], (m.token_info || [])[i]] : [s.meta.token, s.meta.token_piece]; };
  const promptInfo = () => { const f = steps.find((x) => x && x.meta.prompt_info); return f ? f.meta.prompt_info : null; };
  const contextOf = (fr) => [...fr.meta.prompt_tokens, ...newest(fr).meta.tokens.slice(0, fr.meta.index)];

  const setBusy = (b) => {
    busy = b;
    go.disabled = b || readOnly;
    go.textContent = t(b ? 'real-llm.generating' : 'real-llm.generate');
  };

  form.addEventListener('input', (ev) => {
    syncRanges();
    if (['temperature', 'top_k', 'top_p'].includes(ev.target.name) && steps.length && !busy) askOdds();
  });
  let oddsTimer = null;
  function askOdds() { // this step's candidates under the sliders' settings, from the server
    clearTimeout(oddsTimer);
    oddsTimer = setTimeout(() => {
      const s = shown();
      if (!s || readOnly) return;
      ctx.infer({ action: 'odds', index: s.meta.index, ...sampling() });
    }, ODDS_MS);
  }
  const num = (name, lo, hi) => Math.min(hi, Math.max(lo, Number(f[name].value) || lo));
  const sampling = () => ({ temperature: num('temperature', 0, 2), top_k: Math.round(num('top_k', 0, 49152)), top_p: num('top_p', 0.05, 1) });

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (busy || readOnly) return;
    setBusy(true);
    steps = [];
    odds = null;
    store.set('pick', null);
    loading.hidden = !!(meta && meta.loaded);
    ctx.infer({ prompt: f.prompt.value, chat: f.chat.checked, max_new: Math.round(num('max_new', 1, 200)), ...sampling(), attention: f.attention.checked, lens: f.lens.checked });
  });
  ctx.client.on('error', (m) => { if (m.field && m.field.startsWith('input')) { setBusy(false); loading.hidden = true; } });

  function drawText() {
    const s = steps[steps.length - 1];
    if (!s) { promptToks.replaceChildren(); promptKey = ''; answer.replaceChildren(); setText(promptLine, ''); setText(stopped, ''); return; }
    const m = s.meta;
    setText(promptLine, t('real-llm.prompt_tokens', { n: m.prompt_tokens.length }));
    const pi = promptInfo(), ti = m.token_info || [];
    const key = `${!!pi}\u0001${m.prompt_tokens.join('\u0001')}`; // another prompt of as many tokens too
    if (key !== promptKey) {
      promptToks.replaceChildren(...m.prompt_tokens.map((tok, i) => pieceChip(el('span', 'rl-tok prompt'), tok, pi && pi[i])));
      promptKey = key;
    }
    const pick = shown();
    answer.replaceChildren(...m.tokens.map((tok, i) => {
      const b = pieceChip(el('button', `rl-tok new${pick && pick.meta.index === i ? ' sel' : ''}`), tok, ti[i]);
      b.type = 'button';
      b.dataset.i = String(i);
      b.onclick = () => store.set('pick', i === steps.length - 1 ? null : i);
      return b;
    }));
    setText(stopped, m.stopped ? t(m.stopped === 'eos' ? 'real-llm.stopped_eos' : 'real-llm.stopped_max') : '');
    drawByteNote();
  }

  function drawByteNote() { // as real-bert says of [UNK]: what this tokenizer does to Chinese
    const s = steps[steps.length - 1];
    const smol = !(meta && meta.model && meta.model !== 'smollm2');
    const w = [t('real-llm.byte_note')];
    if (smol) w.push(t('real-llm.english_note'));
    if (s) {
      const info = [...(promptInfo() || []), ...(s.meta.token_info || [])];
      const n = info.filter((x) => x && x.parts).length;
      if (n) w.push(t('real-llm.split_found', { n, all: info.length }));
    }
    setText(byteNote, w.join(currentLang() === 'zh' ? '' : ' ')); // zh sentences run on
  }

  function drawCandidates() {
    const s = shown();
    if (!s) { setText(candTitle, t('real-llm.candidates_idle')); bars.clear(); setText(candNote, ''); return; }
    const fr = odds && odds.meta.index === s.meta.index ? odds : s;
    const probs = fr.tensors.top_probs, raw = fr.tensors.top_raw_probs.data;
    const info = fr.meta.top_info || [];
    const [cl, ci] = chosenAs(s);
    bars.show(Array.from(probs.data, (v, i) => ({
      ...(fr.meta.top_ids[i] === s.meta.token_id ? { label: cl, tip: pieceNote(ci) } : { label: probs.labels[i], tip: pieceNote(info[i]) }), value: v, ghost: raw[i], hot: fr.meta.top_ids[i] === s.meta.token_id, note: fr.meta.top_ids[i] === s.meta.token_id ? t('real-llm.chosen') : '',
    })));
    setText(candTitle, t('real-llm.candidates', { n: s.meta.index + 1 }));
    const st = fr.meta.settings;
    setText(candNote, fr === odds ? t('real-llm.odds_preview', { t: st.temperature, k: st.top_k, p: st.top_p }) : '');
  }

  function drawAttention() {
    const s = shown();
    const a = s && s.tensors.new_token_attention;
    if (!a) { attn.clear(); return; }
    const [L, H, S] = a.shape;
    const maps = Array.from({ length: L }, (_, l) => ({ data: a.data, offset: l * H * S, rows: H, cols: S }));
    attn.draw(maps, {
      mapLabels: maps.map((_, l) => `L${l}`),
      rowLabels: Array.from({ length: H }, (_, h) => `H${h}`), colLabels: contextOf(s),
      rowTitle: t('real-llm.head_row'), colTitle: t('real-llm.key'),
      title: (_, l) => t('real-llm.zoom_title', { layer: l, step: s.meta.index + 1 }),
    });
  }

  function drawLens() {
    const s = shown();
    if (!s || !s.tensors.lens_prob) { lens.clear(); return; }
    const p = s.tensors.lens_prob.data, c = s.tensors.lens_chosen.data;
    const info = s.meta.lens_info || [];
    const [cl, ci] = chosenAs(s);
    lens.show(s.meta.lens_tokens.map((tok, l) => ({ label: `L${l} ${tok === s.meta.token ? cl : tok}`, tip: pieceNote(tok === s.meta.token ? ci : info[l]), value: p[l], ghost: c[l], hot: tok === s.meta.token })));
  }

  function drawKv() {
    const s = steps[steps.length - 1];
    const m = s ? s.meta : meta;
    if (!m) return;
    const rows = s ? m.cache_rows : 0;
    kvBar.firstChild.style.width = `${Math.min(100, (100 * rows) / m.context)}%`;
    setText(kvText, t('real-llm.kv_text', { rows, per: (s ? m.bytes_per_token : m.config_bytes_per_token).toLocaleString(), total: bytes(s ? m.cache_bytes : 0), cfg: m.config_bytes_per_token.toLocaleString(), kv: m.n_kv_heads, dh: m.d_head, l: m.n_layers }));
    setText(kvLimit, t('real-llm.kv_limit', { limit: m.context, max: bytes(m.context * m.config_bytes_per_token) }));
  }

  function drawSpeed() {
    const s = steps[steps.length - 1];
    if (!s) { speed.show([]); return; }
    const m = s.meta;
    speed.show([
      { label: t('real-llm.tps'), value: m.tokens_per_s ?? '–', note: t('real-llm.tps_note') },
      { label: t('real-llm.model_tps'), value: m.model_tokens_per_s ?? '–' },
      { label: t('real-llm.forward'), value: `${m.forward_ms} ms` },
      { label: t('real-llm.lens_time'), value: m.streams.lens ? `${m.lens_ms} ms` : '–' },
      { label: t('real-llm.threads'), value: m.threads },
    ]);
  }

  function drawFacts() {
    const m = meta;
    if (!m) return;
    const mix = m.quant ? Object.entries(m.quant).map(([k, n]) => `${k} ${pct(n / m.quant_total)}`).join(', ') : null;
    const qwen = m.model && m.model !== 'smollm2';
    drawByteNote();
    setText(quant, qwen ? t('real-llm.qwen_note', { model: m.model_title }) : mix ? t('real-llm.quant_read', { mix, n: m.quant_total.toLocaleString(), mb: m.weights_mb }) : t('real-llm.quant_static'));
    pLayout.el.hidden = qwen; // the Q/K permutation is llama.cpp's: SmolLM2's GGUF only
    facts.show([
      { label: t('real-llm.f_model'), value: m.model_title || 'SmolLM2-135M-Instruct' },
      { label: t('real-llm.f_shape'), value: t('real-llm.f_shape_v', { l: m.n_layers, d: m.d_model, h: m.n_heads, kv: m.n_kv_heads, dh: m.d_head, ff: m.d_ff, theta: m.rope_theta.toLocaleString() }) },
      { label: t('real-llm.f_params'), value: m.n_params.toLocaleString() },
      { label: t('real-llm.f_vocab'), value: m.vocab.toLocaleString() },
      { label: t('real-llm.f_weights'), value: m.weights_mb ? `${m.weights_mb} MB` : '–', note: m.weights_mb ? t('real-llm.f_shared') : t('real-llm.f_not_loaded') },
    ]);
  }

  function drawLayout() {
    const lay = ctx.params().qk_layout || 'unpermuted';
    setText(layoutText, t('real-llm.layout_text'));
    setText(layoutNow, t('real-llm.layout_now', { which: t(`real-llm.layout_${lay}`) }));
    layoutNow.classList.toggle('warn', lay === 'as_stored');
    setText(layoutBtn, t(lay === 'as_stored' ? 'real-llm.layout_right' : 'real-llm.layout_wrong'));
    layoutBtn.disabled = readOnly;
    layoutLast.replaceChildren(...Object.entries(lastText).map(([k, text]) => el('p', `rl-last-${k}`, t('real-llm.last_with', { which: t(`real-llm.layout_${k}`), text }))));
  }

  const drawStep = () => { drawText(); drawCandidates(); drawAttention(); drawLens(); };
  function drawAll() { drawStep(); drawKv(); drawSpeed(); drawFacts(); drawLayout(); }

  function relabelStatic() {
    for (const e of form.querySelectorAll('[data-k]')) e.textContent = t(e.dataset.k);
    setBusy(busy);
    setText(loading, t('real-llm.loading'));
    setText(answerTitle, t('real-llm.answer'));
    setText(candHint, t('real-llm.cand_hint'));
  }

  store.on('pick', () => { odds = null; drawStep(); });
  store.on('layer', (l) => { // a link or the teacher names a layer: enlarge its map
    if (selecting || !shown()) return;
    const z = attn.zoomed;
    if (l === null || l === undefined) { if (z) attn.close(); } else if (!z || z.map !== l) attn.open(0, l);
  });
  store.on('role', (r) => { readOnly = r !== 'driver'; setBusy(busy); drawLayout(); });
  relabelStatic();
  syncRanges();

  function onFacts(fr) { // the snapshot: the config's facts, before any weight is loaded
    if (fr.meta.kind !== 'facts') return;
    meta = { ...(meta || {}), ...fr.meta };
    drawKv(); drawFacts(); drawLayout();
  }

  return {
    frame: onFacts,
    infer(fr) {
      const m = fr.meta;
      if (m.kind === 'odds') { odds = fr; drawCandidates(); return; }
      if (m.kind !== 'token') { onFacts(fr); return; }
      loading.hidden = true;
      if (m.index === 0 || m.index < steps.length - 1) steps = [];
      steps[m.index] = fr;
      meta = m;
      if (m.last) { setBusy(false); lastText[m.qk_layout] = m.text; }
      drawAll();
      if (store.get('layer') !== null && store.get('layer') !== undefined && !attn.zoomed) attn.open(0, store.get('layer'));
      root.dataset.tokens = String(m.tokens.length); // for tests
      root.dataset.done = m.last ? '1' : '';
    },
    params() { drawLayout(); },
    reset() { steps = []; odds = null; store.set('pick', null); drawAll(); }, // another model
    relabel() {
      for (const p of [pAsk, pCand, pLens, pAtt, pKv, pSpeed, pLayout, pFacts]) p.relabel();
      relabelStatic();
      attn.relabel();
      drawAll();
    },
  };
}
