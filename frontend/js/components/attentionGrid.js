// A layers × heads grid of attention patterns on ONE canvas (plotly would need ~90 ms for a
// 4×4 grid; this is well under a millisecond a map). Each pattern [T, T] goes through a
// viridis lookup table into an ImageData on a scratch canvas (putImageData), then is drawn
// scaled without smoothing. Weights are coloured on the absolute 0..1 scale, so maps compare.
// Hover a cell: query → key and weight, and the query token becomes the store's
// `hoverToken` (every view highlights it). Click a map to enlarge it with token labels.
import { t } from '../core/i18n.js';

const VIRIDIS_STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
const MASKED = [236, 233, 226]; // positions the causal mask hides: page-like, not "weight 0"

/** 256 RGB entries interpolated through the viridis stops. */
export const VIRIDIS = (() => {
  const lut = new Uint8ClampedArray(256 * 3);
  const n = VIRIDIS_STOPS.length - 1;
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * n, a = Math.min(n - 1, Math.floor(x)), f = x - a;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = VIRIDIS_STOPS[a][c] + (VIRIDIS_STOPS[a + 1][c] - VIRIDIS_STOPS[a][c]) * f;
  }
  return lut;
})();

const scratch = document.createElement('canvas');
const sctx = scratch.getContext('2d');

/**
 * Paint rows × cols weights (values 0..1, row-major from `offset`) into ctx at (x, y, w, h).
 * masked(i, j) -> true paints the cell as hidden by the mask.
 */
export function paintMatrix(ctx, data, offset, rows, cols, x, y, w, h, masked = null) {
  if (scratch.width !== cols || scratch.height !== rows) { scratch.width = cols; scratch.height = rows; }
  const img = sctx.createImageData(cols, rows);
  const px = img.data;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const o = (i * cols + j) * 4;
      if (masked && masked(i, j)) { px[o] = MASKED[0]; px[o + 1] = MASKED[1]; px[o + 2] = MASKED[2]; px[o + 3] = 255; continue; }
      const v = data[offset + i * cols + j];
      const li = Math.max(0, Math.min(255, Math.round(v * 255))) * 3;
      px[o] = VIRIDIS[li]; px[o + 1] = VIRIDIS[li + 1]; px[o + 2] = VIRIDIS[li + 2]; px[o + 3] = 255;
    }
  }
  sctx.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(scratch, x, y, w, h);
}

/** A canvas sized to its CSS box at the device pixel ratio; returns its 2-D context. */
export function fitCanvas(canvas, cssW, cssH) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(cssW * dpr), h = Math.round(cssH * dpr);
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

const HOT = 'rgba(255, 120, 0, 0.95)';
const LABEL_W = 30, LABEL_H = 18, GAP = 6;

/**
 * el: a container. store: the shared store (hoverToken). Returns {draw, relabel, zoomed}.
 * draw({patterns: [{data, shape: [H, T, T]}, ...per layer], tokens: [...], causal})
 */
export function attentionGrid(el, { store, maxCell = 170, minCell = 34 }) {
  el.classList.add('attn-grid');
  const canvas = document.createElement('canvas');
  canvas.className = 'attn-main';
  canvas.setAttribute('role', 'img');
  const tip = document.createElement('div');
  tip.className = 'attn-tip';
  tip.hidden = true;
  const zoom = document.createElement('div');
  zoom.className = 'attn-zoom';
  zoom.hidden = true;
  zoom.innerHTML = '<div class="attn-zoom-box"><div class="attn-zoom-head"><b></b><button type="button" class="attn-close"></button></div><canvas></canvas></div>';
  const zCanvas = zoom.querySelector('canvas');
  const zTitle = zoom.querySelector('b');
  const zClose = zoom.querySelector('.attn-close');
  el.append(canvas, tip, zoom);

  let last = null; // the latest draw() input
  // The box's width and text colour, read when they may change (resize, relabel), not on
  // every frame: reading them after the page changed forces a layout mid-frame.
  let box = null;
  const measure = () => { box = { width: el.clientWidth, color: getComputedStyle(el).color }; };
  let layout = null; // {cell, L, H, T}
  let zoomed = null; // {layer, head}
  let zLayout = null; // {x0, y0, size, T}
  const hover = () => store.get('hoverToken');

  const masked = () => (last && last.causal ? (i, j) => j > i : null);

  function drawGrid() {
    if (!last) return;
    const L = last.patterns.length, [H, T] = last.patterns[0].shape;
    if (!box) measure();
    const width = Math.max(200, box.width || 600);
    const cell = Math.max(minCell, Math.min(maxCell, Math.floor((width - LABEL_W - GAP * H) / H)));
    layout = { cell, L, H, T };
    const cssW = LABEL_W + H * (cell + GAP), cssH = LABEL_H + L * (cell + GAP);
    const ctx = fitCanvas(canvas, cssW, cssH);
    ctx.clearRect(0, 0, cssW, cssH);
    ctx.fillStyle = box.color;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'center';
    for (let h = 0; h < H; h++) ctx.fillText(`${t('gpt.head_short')}${h}`, LABEL_W + h * (cell + GAP) + cell / 2, LABEL_H / 2);
    ctx.textAlign = 'left';
    const k = hover();
    for (let l = 0; l < L; l++) {
      const y = LABEL_H + l * (cell + GAP);
      ctx.fillText(`${t('gpt.layer_short')}${l}`, 2, y + cell / 2);
      const p = last.patterns[l];
      for (let h = 0; h < H; h++) {
        const x = LABEL_W + h * (cell + GAP);
        paintMatrix(ctx, p.data, h * T * T, T, T, x, y, cell, cell, masked());
        if (zoomed && zoomed.layer === l && zoomed.head === h) {
          ctx.strokeStyle = HOT; ctx.lineWidth = 2; ctx.strokeRect(x - 1, y - 1, cell + 2, cell + 2);
        }
        if (k !== null && k !== undefined && k < T) markToken(ctx, x, y, cell / T, k, T);
      }
    }
    const aria = t('gpt.grid_aria', { layers: L, heads: H, tokens: T });
    if (canvas.getAttribute('aria-label') !== aria) canvas.setAttribute('aria-label', aria);
  }

  // Outline the hovered token's row (as a query) and column (as a key).
  function markToken(ctx, x, y, s, k, T) {
    ctx.strokeStyle = HOT;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(x, y + k * s, T * s, s);
    ctx.strokeRect(x + k * s, y, s, T * s);
  }

  function drawZoom() {
    if (!zoomed || !last) return;
    const { layer, head } = zoomed;
    const p = last.patterns[layer];
    if (!p) { closeZoom(); return; }
    const T = p.shape[1];
    const tokens = last.tokens || [];
    zTitle.textContent = `${t('gpt.zoom_title', { layer, head })} — ↓ ${t('gpt.query')} → ${t('gpt.key')}`;
    const avail = Math.min(window.innerWidth * 0.9, window.innerHeight * 0.85) - 40;
    const label = Math.min(90, 12 + 7 * Math.max(1, ...tokens.map((s) => [...s].length)));
    const size = Math.max(160, Math.min(720, avail - label));
    zLayout = { x0: label, y0: label, size, T };
    const ctx = fitCanvas(zCanvas, label + size + 8, label + size + 8);
    ctx.clearRect(0, 0, label + size + 8, label + size + 8);
    paintMatrix(ctx, p.data, head * T * T, T, T, label, label, size, size, masked());
    const s = size / T;
    const k = hover();
    if (k !== null && k !== undefined && k < T) markToken(ctx, label, label, s, k, T);
    const font = Math.max(8, Math.min(13, s * 0.8));
    ctx.font = `${font}px system-ui, "Noto Sans CJK SC", sans-serif`;
    ctx.fillStyle = getComputedStyle(el).color;
    ctx.textBaseline = 'middle';
    if (s >= 7) {
      for (let i = 0; i < T; i++) {
        const tok = tokens[i] ?? String(i);
        ctx.fillStyle = i === k ? HOT : getComputedStyle(el).color;
        ctx.textAlign = 'right';
        ctx.fillText(tok, label - 4, label + (i + 0.5) * s); // queries down the left
        ctx.save();
        ctx.translate(label + (i + 0.5) * s, label - 4);
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = 'left';
        ctx.fillText(tok, 0, 0); // keys along the top
        ctx.restore();
      }
    }
  }

  function openZoom(layer, head) {
    zoomed = { layer, head };
    zoom.hidden = false;
    drawZoom();
    drawGrid();
    zClose.focus();
  }
  function closeZoom() {
    zoomed = null;
    zoom.hidden = true;
    drawGrid();
  }

  function showTip(ev, layer, head, i, j) {
    const p = last.patterns[layer];
    const T = p.shape[1];
    const w = p.data[head * T * T + i * T + j];
    const tok = (n) => (last.tokens && last.tokens[n] !== undefined ? last.tokens[n] : String(n));
    const hidden = last.causal && j > i;
    tip.textContent = `${t('gpt.layer_short')}${layer} ${t('gpt.head_short')}${head} · ${tok(i)} (${i}) → ${tok(j)} (${j}) · ${hidden ? t('gpt.masked') : w.toFixed(3)}`;
    tip.hidden = false;
    const box = el.getBoundingClientRect();
    tip.style.left = `${Math.min(ev.clientX - box.left + 14, box.width - 220)}px`;
    tip.style.top = `${ev.clientY - box.top + 14}px`;
  }

  function hitGrid(ev) {
    if (!layout) return null;
    const r = canvas.getBoundingClientRect();
    const mx = ev.clientX - r.left - LABEL_W, my = ev.clientY - r.top - LABEL_H;
    const { cell, L, H, T } = layout;
    const head = Math.floor(mx / (cell + GAP)), layer = Math.floor(my / (cell + GAP));
    const ox = mx - head * (cell + GAP), oy = my - layer * (cell + GAP);
    if (head < 0 || head >= H || layer < 0 || layer >= L || ox >= cell || oy >= cell || ox < 0 || oy < 0) return null;
    return { layer, head, i: Math.floor((oy / cell) * T), j: Math.floor((ox / cell) * T) };
  }

  canvas.addEventListener('mousemove', (ev) => {
    const hit = hitGrid(ev);
    canvas.style.cursor = hit ? 'zoom-in' : 'default';
    if (!hit) { tip.hidden = true; return; }
    showTip(ev, hit.layer, hit.head, hit.i, hit.j);
    store.set('hoverToken', hit.i);
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; store.set('hoverToken', null); });
  canvas.addEventListener('click', (ev) => {
    const hit = hitGrid(ev);
    if (hit) openZoom(hit.layer, hit.head);
  });
  zCanvas.addEventListener('mousemove', (ev) => {
    if (!zLayout || !zoomed) return;
    const r = zCanvas.getBoundingClientRect();
    const { x0, y0, size, T } = zLayout;
    const i = Math.floor(((ev.clientY - r.top - y0) / size) * T), j = Math.floor(((ev.clientX - r.left - x0) / size) * T);
    if (i < 0 || j < 0 || i >= T || j >= T) { tip.hidden = true; return; }
    showTip(ev, zoomed.layer, zoomed.head, i, j);
    store.set('hoverToken', i);
  });
  zCanvas.addEventListener('mouseleave', () => { tip.hidden = true; store.set('hoverToken', null); });
  zClose.onclick = closeZoom;
  zoom.addEventListener('click', (ev) => { if (ev.target === zoom) closeZoom(); });
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && zoomed) closeZoom(); });
  store.on('hoverToken', () => { drawGrid(); drawZoom(); });
  new ResizeObserver(() => { measure(); drawGrid(); }).observe(el);

  const relabel = () => {
    box = null;
    zClose.textContent = '×';
    zClose.setAttribute('aria-label', t('close'));
    drawGrid();
    drawZoom();
  };
  relabel();

  return {
    el,
    get zoomed() { return zoomed; },
    /** {patterns: [{data, shape: [H, T, T]}], tokens, causal} */
    draw(input) {
      last = input;
      drawGrid();
      drawZoom();
    },
    open: openZoom,
    close: closeZoom,
    clear() { last = null; layout = null; if (zoomed) closeZoom(); const ctx = canvas.getContext('2d'); ctx.clearRect(0, 0, canvas.width, canvas.height); },
    relabel,
  };
}
