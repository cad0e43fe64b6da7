// The `gpt` view's generation panel: a prompt in, tokens out one at a time. For each new
// token: the candidates' probabilities (after temperature/top-k/top-p), where its query
// looked in every layer and head, the KV cache growing a row per token, and the work done
// with and without the cache. Everything shown comes from the server's infer frames.
import { t } from '../../core/i18n.js';
import { fitCanvas, paintMap } from '../../components/mapGrid.js';
import { probBars } from '../../components/probBars.js';
import { baseLayout, CONFIG, fmt, Plotly, whenPlotly } from '../../components/plot.js';

const el = (tag, cls, html) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (html) e.innerHTML = html;
  return e;
};

function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 2 ** 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 2 ** 20).toFixed(2)} MiB`;
}

export function generatePanel(body, { infer }) {
  body.classList.add('gpt-gen');
  const form = el('form', 'gpt-gen-form');
  form.innerHTML = `
    <label class="gen-prompt"><span data-k="gpt.prompt"></span><textarea name="prompt" rows="2" maxlength="2000"></textarea></label>
    <label><span data-k="gpt.max_new"></span><input name="max_new" type="number" min="1" max="200" step="1"></label>
    <label><span data-k="gpt.temperature"></span><span class="gen-range"><input name="temperature" type="range" min="0" max="2" step="0.05"><output></output></span></label>
    <label><span data-k="gpt.top_k"></span><input name="top_k" type="number" min="0" max="4096" step="1"></label>
    <label><span data-k="gpt.top_p"></span><span class="gen-range"><input name="top_p" type="range" min="0.05" max="1" step="0.05"><output></output></span></label>
    <label class="gen-check"><input name="use_cache" type="checkbox" role="switch"><span data-k="gpt.use_cache"></span></label>
    <button type="submit" class="primary gen-go" data-k="gpt.generate"></button>`;
  const f = form.elements;
  const outputs = form.querySelectorAll('.gen-range');
  const syncRanges = () => outputs.forEach((r) => { r.lastChild.textContent = r.firstChild.value; });
  form.addEventListener('input', syncRanges);

  const text = el('div', 'gen-text');
  text.setAttribute('aria-live', 'polite');
  const cols = el('div', 'gen-cols');
  const cand = el('div', 'gen-col');
  const candTitle = el('h4');
  const bars = probBars(el('div'));
  cand.append(candTitle, bars.el);
  const att = el('div', 'gen-col gen-att');
  const attTitle = el('h4');
  const attCanvas = el('canvas');
  att.append(attTitle, attCanvas);
  const kv = el('div', 'gen-col');
  const kvTitle = el('h4');
  const kvRows = el('div', 'kv-rows');
  const kvText = el('p', 'kv-text');
  const kvNote = el('p', 'kv-note');
  const workTitle = el('h4');
  const work = el('div', 'gen-work');
  const workText = el('p', 'kv-text');
  kv.append(kvTitle, kvRows, kvText, kvNote, workTitle, work, workText);
  cols.append(cand, att, kv);
  body.append(form, text, cols);

  let last = null;
  let busy = false;
  let defaultsFor = null;

  let workWaits = false;
  const drawWork = () => {
    if (!Plotly) { // drawn when plotly arrives (the shell loads it after the first frame)
      if (!workWaits) whenPlotly(() => { workWaits = false; drawWork(); });
      workWaits = true;
      return;
    }
    const h = last ? last.meta.history : { positions: [], positions_no_cache: [] };
    const x = h.positions.map((_, i) => i + 1);
    Plotly.react(work, [
      { x, y: h.positions, name: t('gpt.with_cache'), mode: 'lines+markers', line: { color: '#1a9e77' }, marker: { size: 4 } },
      { x, y: h.positions_no_cache, name: t('gpt.without_cache'), mode: 'lines+markers', line: { color: '#c0392b', dash: 'dot' }, marker: { size: 4 } },
    ], baseLayout({
      margin: { l: 48, r: 8, t: 6, b: 32 }, showlegend: true,
      legend: { orientation: 'h', y: 1.15, x: 0 },
      xaxis: { title: { text: t('gpt.work_x') }, rangemode: 'tozero' }, yaxis: { rangemode: 'tozero' },
    }), CONFIG);
  };

  const go = form.querySelector('.gen-go');
  let readOnly = false;
  const setBusy = (b) => {
    busy = b;
    go.disabled = b || readOnly;
    go.textContent = b ? t('gpt.generating') : t('gpt.generate');
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (busy) return;
    const num = (name, lo, hi) => Math.min(hi, Math.max(lo, Number(f[name].value) || lo));
    setBusy(true);
    infer({
      prompt: f.prompt.value,
      max_new: Math.round(num('max_new', 1, 200)),
      temperature: num('temperature', 0, 5),
      top_k: Math.round(num('top_k', 0, 4096)),
      top_p: num('top_p', 0.05, 1),
      use_cache: f.use_cache.checked,
    });
    clearTimeout(setBusy.timer);
    setBusy.timer = setTimeout(() => setBusy(false), 15000); // an error reply never sends a last frame
  });

  function drawAttention(m, tensor) {
    const [L, H, T] = tensor.shape;
    const labelW = 44;
    const cell = Math.max(3, Math.min(22, Math.floor((att.clientWidth - labelW - 4) / Math.max(T, 1))));
    const rowH = Math.max(6, Math.min(14, cell));
    const top = cell >= 12 ? 54 : 4; // labels only where they stay legible
    const w = labelW + T * cell, h = top + L * (H * rowH + 6);
    const ctx = fitCanvas(attCanvas, w, h);
    ctx.clearRect(0, 0, w, h);
    const color = getComputedStyle(body).color;
    ctx.font = '10px system-ui, "Noto Sans CJK SC", sans-serif';
    ctx.fillStyle = color;
    ctx.textBaseline = 'middle';
    for (let l = 0; l < L; l++) {
      const y = top + l * (H * rowH + 6);
      ctx.fillText(`${t('gpt.layer_short')}${l}`, 2, y + (H * rowH) / 2);
      paintMap(ctx, tensor.data, l * H * T, H, T, labelW, y, T * cell, H * rowH);
    }
    if (top > 4) {
      (m.context || []).forEach((tok, j) => {
        ctx.save();
        ctx.translate(labelW + (j + 0.5) * cell, top - 4);
        ctx.rotate(-Math.PI / 2);
        ctx.fillText(tok, 0, 0);
        ctx.restore();
      });
    }
  }

  function drawKv(m) {
    const L = m.cache_rows.length;
    kvRows.replaceChildren(...m.cache_rows.map((rows, l) => {
      const r = el('div', 'kv-row');
      r.innerHTML = '<span class="kv-l"></span><span class="kv-track"><i></i></span><span class="kv-n"></span>';
      r.children[0].textContent = `${t('gpt.layer_short')}${l}`;
      r.children[1].firstChild.style.width = `${(100 * rows) / Math.max(1, m.n_ctx)}%`;
      r.children[2].textContent = String(rows);
      return r;
    }));
    kvText.textContent = m.use_cache
      ? t('gpt.kv_rows', { rows: m.cache_rows[0], row: bytes(m.bytes_per_row), bytes: bytes(m.cache_bytes), layers: L, heads: m.n_heads, d: m.d_head })
      : '';
    const slid = m.prompt_tokens.length + m.tokens.length - 1 > m.n_ctx; // the newest is not fed yet
    kvNote.textContent = m.cache_note === 'not_causal' ? t('gpt.kv_not_causal')
      : !m.use_cache ? t('gpt.kv_off') : slid ? t('gpt.window_slid', { n: m.n_ctx }) : '';
    workText.textContent = t('gpt.work_now', {
      a: m.positions, b: m.positions_no_cache, fa: fmt(m.total.flops, 3), fb: fmt(m.total.flops_no_cache, 3),
    });
  }

  function drawText(m) {
    const nodes = m.prompt_tokens.map((tok) => { const s = el('span', 'gtok prompt'); s.textContent = tok; return s; });
    m.tokens.forEach((tok, i) => {
      const s = el('span', `gtok new${i === m.tokens.length - 1 ? ' newest' : ''}`);
      s.textContent = tok;
      nodes.push(s);
    });
    text.replaceChildren(...nodes);
  }

  const relabel = () => {
    for (const e of form.querySelectorAll('[data-k]')) e.textContent = t(e.dataset.k);
    if (busy) setBusy(true);
    candTitle.textContent = last ? t('gpt.candidates', { n: last.meta.index + 1 }) : t('gpt.candidates_idle');
    attTitle.textContent = t('gpt.new_attention');
    kvTitle.textContent = t('gpt.kv_cache');
    workTitle.textContent = t('gpt.work');
    if (last) show(last);
    else drawWork();
  };

  function show(fr) {
    const m = fr.meta;
    const probs = fr.tensors.top_probs;
    const raw = fr.tensors.top_raw_probs.data;
    bars.show(Array.from(probs.data, (v, i) => ({
      label: probs.labels[i], value: v, ghost: raw[i], hot: m.top_ids[i] === m.token_id, note: m.top_ids[i] === m.token_id ? t('gpt.chosen') : '',
    })));
    candTitle.textContent = t('gpt.candidates', { n: m.index + 1 });
    drawText(m);
    drawAttention(m, fr.tensors.new_token_attention);
    drawKv(m);
    drawWork();
  }

  relabel();
  syncRanges();

  return {
    /** An infer frame: draw it; frames may be skipped (each carries the whole text so far). */
    frame(fr) {
      const m = fr.meta;
      last = fr;
      show(fr);
      if (m.last) { clearTimeout(setBusy.timer); setBusy(false); }
    },
    /** Form defaults for a kind of data (set again only when the data changes). */
    defaults(data, d) {
      if (defaultsFor === data) return;
      defaultsFor = data;
      f.prompt.value = d.prompt;
      f.max_new.value = d.max_new;
      f.temperature.value = d.temperature;
      f.top_k.value = d.top_k;
      f.top_p.value = d.top_p;
      f.use_cache.checked = true;
      syncRanges();
    },
    error() { clearTimeout(setBusy.timer); setBusy(false); },
    setReadOnly(ro) { readOnly = ro; setBusy(busy); },
    relabel,
  };
}
