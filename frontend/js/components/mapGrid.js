// ONE canvas for any stack of 2-D maps: attention [H, Tq, Tk] per layer, cross-attention
// [T_dec, T_enc], CNN channels, gate activations, expert load, neuron maps. Each map goes
// through a 256-entry colour lookup table into an ImageData on a scratch canvas (one
// putImageData a map, 0.2–0.4 ms), then is drawn scaled without smoothing; plotly would need
// ~90 ms for a 4×4 grid (docs: DESIGN "Performance notes"). Maps need not be square. Every
// label comes from the caller: the kit knows no lab. Hover a cell to read its value (the
// caller hears the row and column: onHover); click a map to enlarge it with its axis labels.
import { ensureCss } from '../core/css.js';
import { addStrings, t } from '../core/i18n.js';
import { fmt } from './plot.js';

addStrings({
  en: { 'mg.close': 'Close', 'mg.masked': 'masked', 'mg.row': 'row', 'mg.col': 'column', 'mg.aria': '{maps} maps of {rows} × {cols} values' },
  zh: { 'mg.close': '关闭', 'mg.masked': '被遮住', 'mg.row': '行', 'mg.col': '列', 'mg.aria': '{maps} 张图，每张 {rows} × {cols} 个值' },
});

const CSS = '/css/map-grid.css';
const STOPS = {
  viridis: ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'],
  diverging: ['#f59322', '#e8eaeb', '#0877bd'], // TensorFlow Playground: orange (−) · grey (0) · blue (+)
  greys: ['#ffffff', '#141414'],
  blues: ['#f7fbff', '#6baed6', '#08306b'],
  rdbu: ['#2166ac', '#67a9cf', '#f7f7f7', '#ef8a62', '#b2182b'], // blue (−) · white (0) · red (+): signed weights
};
const MASKED = [236, 233, 226]; // cells a mask hides: page-like, not "value 0"
const HOT = 'rgba(255, 120, 0, 0.95)';
const GAP = 6;

function rgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** A colour lookup table: 256 RGBA entries interpolated through '#rrggbb' stops. */
export function makeLut(stops = STOPS.viridis) {
  const cols = stops.map(rgb);
  const out = new Uint8ClampedArray(256 * 4);
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * (cols.length - 1);
    const a = Math.min(cols.length - 2, Math.floor(x)), f = x - a;
    for (let c = 0; c < 3; c++) out[i * 4 + c] = cols[a][c] + (cols[a + 1][c] - cols[a][c]) * f;
    out[i * 4 + 3] = 255;
  }
  return out;
}

/** The named tables: viridis, diverging (the playground's), greys, blues, rdbu. */
export const LUTS = Object.fromEntries(Object.entries(STOPS).map(([k, v]) => [k, makeLut(v)]));
export const PLAYGROUND_STOPS = STOPS.diverging;

const lutOf = (c) => (c instanceof Uint8ClampedArray ? c : Array.isArray(c) ? makeLut(c) : LUTS[c] || LUTS.viridis);

const scratch = document.createElement('canvas');
const sctx = scratch.getContext('2d');
let image = null;

/**
 * Paint rows × cols values (row-major from `offset`) into ctx at (x, y, w, h): one
 * putImageData. opts: lut (a makeLut table, default viridis), range [lo, hi] (default [0, 1]),
 * masked(i, j) -> true paints the cell as hidden, flipRows (row 0 at the bottom), smooth,
 * log (colour by log10 of the value; range then in log10 units), transform (v -> the value
 * coloured, e.g. a threshold), alpha. A non-finite value is left transparent.
 */
export function paintMap(ctx, data, offset, rows, cols, x, y, w, h, opts = {}) {
  const { lut = LUTS.viridis, range = [0, 1], masked = null, flipRows = false, smooth = false, log = false, transform = null, alpha = 1 } = opts;
  if (scratch.width !== cols || scratch.height !== rows) { scratch.width = cols; scratch.height = rows; image = null; }
  image = image || sctx.createImageData(cols, rows);
  const px = image.data;
  const lo = range[0], scale = 255 / (range[1] - range[0] || 1);
  for (let r = 0; r < rows; r++) {
    const i = flipRows ? rows - 1 - r : r; // the map's row drawn on screen row r
    const src = offset + i * cols;
    for (let j = 0; j < cols; j++) {
      const o = (r * cols + j) * 4;
      if (masked && masked(i, j)) { px[o] = MASKED[0]; px[o + 1] = MASKED[1]; px[o + 2] = MASKED[2]; px[o + 3] = 255; continue; }
      let v = data[src + j];
      if (log) v = v > 0 ? Math.log10(v) : NaN;
      if (transform) v = transform(v);
      if (!Number.isFinite(v)) { px[o + 3] = 0; continue; } // nothing there: the page shows
      const li = Math.max(0, Math.min(255, Math.round((v - lo) * scale))) * 4;
      px[o] = lut[li]; px[o + 1] = lut[li + 1]; px[o + 2] = lut[li + 2]; px[o + 3] = 255;
    }
  }
  sctx.putImageData(image, 0, 0);
  ctx.save();
  ctx.globalAlpha = alpha;
  ctx.imageSmoothingEnabled = smooth;
  ctx.drawImage(scratch, x, y, w, h);
  ctx.restore();
}

/** An element of the kit's pictures: part('div', 'mg-tip', {hidden: true, role: 'img'}). */
export function part(tag, className, { hidden = false, role = null } = {}) {
  const e = document.createElement(tag);
  e.className = className;
  if (hidden) e.hidden = true;
  if (role) e.setAttribute('role', role);
  return e;
}

/** A canvas sized to its CSS box at the device pixel ratio; returns its 2-D context. */
export function fitCanvas(canvas, cssW, cssH) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(cssW * dpr), h = Math.round(cssH * dpr);
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  canvas.style.width = `${cssW}px`; // CSSOM: allowed by the content security policy
  canvas.style.height = `${cssH}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** Any accepted input -> {maps: [{data, offset, rows, cols, group, index, masked}], groups, per}. */
function normalize(input) {
  const maps = [];
  const fromTensor = (tensor, group) => {
    const s = tensor.shape;
    const [rows, cols] = s.length === 1 ? [1, s[0]] : s.slice(-2);
    const lead = s.slice(0, -2);
    if (lead.length === 2) { // [G, M, R, C]
      for (let g = 0; g < lead[0]; g++) for (let m = 0; m < lead[1]; m++) maps.push({ data: tensor.data, offset: (g * lead[1] + m) * rows * cols, rows, cols, group: g, index: m });
      return;
    }
    const n = lead.length ? lead[0] : 1;
    for (let m = 0; m < n; m++) maps.push({ data: tensor.data, offset: m * rows * cols, rows, cols, group, index: m });
  };
  if (Array.isArray(input)) {
    input.forEach((it, g) => {
      if (it.shape) fromTensor(it, g); // one tensor [M, R, C] per group
      else maps.push({ offset: 0, group: 0, ...it, index: maps.filter((m) => m.group === (it.group || 0)).length });
    });
  } else if (input && input.shape) fromTensor(input, 0);
  const groups = 1 + Math.max(0, ...maps.map((m) => m.group));
  const per = Math.max(1, ...maps.map((m) => m.index + 1));
  return { maps, groups, per };
}

/** [lo, hi] of the finite values of maps [{data, offset, rows, cols}]; kind 'symmetric': ±max|v|. */
export function rangeOf(maps, kind) {
  let lo = Infinity, hi = -Infinity;
  for (const m of maps) {
    for (let i = m.offset, end = m.offset + m.rows * m.cols; i < end; i++) {
      const v = m.data[i];
      if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
    }
  }
  if (!Number.isFinite(lo)) return [0, 1];
  if (kind === 'symmetric') { const a = Math.max(Math.abs(lo), Math.abs(hi)) || 1; return [-a, a]; }
  return hi > lo ? [lo, hi] : [lo, lo + 1];
}

/**
 * el: a container. opts: colormap ('viridis' | 'diverging' | 'greys' | 'blues' | stops | a LUT),
 * range ([lo, hi] | 'auto' | 'symmetric'), onHover(hit|null), onSelect(hit|null), tip(hit),
 * format(v), maxCell, minCell (CSS px of a map's longer side), columns (maps per grid row
 * when the stack has one group), flipRows. hit: {group, map, row, col, value, masked}.
 */
export function mapGrid(el, opts = {}) {
  const { colormap = 'viridis', range = [0, 1], onHover = null, onSelect = null, tip: tipText = null, format = (v) => fmt(v, 3), maxCell = 170, minCell = 34, columns = 0, flipRows = false } = opts;
  ensureCss(CSS);
  el.classList.add('map-grid');
  const lut = lutOf(colormap);
  const canvas = part('canvas', 'mg-main', { role: 'img' });
  const tip = part('div', 'mg-tip', { hidden: true });
  const zoom = part('div', 'mg-zoom', { hidden: true });
  zoom.innerHTML = '<div class="mg-zoom-box" role="dialog"><div class="mg-zoom-head"><b></b><button type="button" class="mg-close">×</button></div><canvas></canvas></div>';
  const zCanvas = zoom.querySelector('canvas');
  const zTitle = zoom.querySelector('b');
  const zClose = zoom.querySelector('.mg-close');
  el.append(canvas, tip, zoom);

  let stack = null; // normalize(input)
  let labels = {};
  let lohi = [0, 1];
  let box = null; // the container's width and text colour, read on resize/relabel only
  const measure = () => { box = { width: el.clientWidth, color: getComputedStyle(el).color }; };
  let layout = null;
  let zoomed = null; // {group, map}
  let zLayout = null;
  let marked = null; // {row, col}

  const mapAt = (group, index) => stack && stack.maps.find((m) => m.group === group && m.index === index);
  const maskOf = (m) => m.masked || labels.masked || null;
  const isMasked = (m, i, j) => { const f = maskOf(m); return !!(f && f(i, j)); };
  const label = (list, i) => (list && list[i] !== undefined ? String(list[i]) : '');
  const paintOpts = (m) => ({ lut, range: lohi, masked: maskOf(m), flipRows });

  function place() {
    const { maps, groups, per } = stack;
    const wrap = groups === 1 && columns > 0 ? columns : 0;
    const nCols = wrap ? Math.min(wrap, maps.length) : per;
    const nRows = wrap ? Math.ceil(maps.length / wrap) : groups;
    const R = Math.max(...maps.map((m) => m.rows)), C = Math.max(...maps.map((m) => m.cols));
    const ctx = canvas.getContext('2d');
    ctx.font = '11px system-ui, "Noto Sans CJK SC", sans-serif';
    const groupW = labels.groupLabels ? 8 + Math.max(0, ...labels.groupLabels.map((s) => ctx.measureText(String(s)).width)) : 0;
    const headH = labels.mapLabels ? 18 : 0;
    const width = Math.max(200, box.width || 600);
    const long = Math.max(minCell, Math.min(maxCell, Math.floor((width - groupW - GAP * nCols) / nCols)));
    const s = long / Math.max(R, C); // CSS px per value: cells stay square
    const slotW = C * s, slotH = R * s;
    const bandH = wrap && labels.mapLabels ? headH : 0; // a flat, wrapped stack: a label over each map
    const pos = (m) => {
      const k = wrap ? maps.indexOf(m) : m.index, row = wrap ? Math.floor(k / wrap) : m.group, col = wrap ? k % wrap : m.index;
      return { x: groupW + col * (slotW + GAP), y: (wrap ? 0 : headH) + row * (slotH + GAP + bandH) + bandH, row, col };
    };
    return { s, slotW, slotH, groupW, headH: wrap ? 0 : headH, bandH, nCols, nRows, wrap, pos, cssW: groupW + nCols * (slotW + GAP), cssH: (wrap ? 0 : headH) + nRows * (slotH + GAP + bandH) };
  }

  function outline(ctx, x, y, s, m) {
    if (!marked) return;
    ctx.strokeStyle = HOT;
    ctx.lineWidth = 1.5;
    const { row, col } = marked;
    if (row !== null && row !== undefined && row >= 0 && row < m.rows) {
      const r = flipRows ? m.rows - 1 - row : row;
      ctx.strokeRect(x, y + r * s, m.cols * s, s);
    }
    if (col !== null && col !== undefined && col >= 0 && col < m.cols) ctx.strokeRect(x + col * s, y, s, m.rows * s);
  }

  function drawGrid() {
    if (!stack || !stack.maps.length) return;
    if (!box) measure();
    layout = place();
    const L = layout;
    const ctx = fitCanvas(canvas, L.cssW, L.cssH);
    ctx.clearRect(0, 0, L.cssW, L.cssH);
    ctx.fillStyle = box.color;
    ctx.font = '11px system-ui, "Noto Sans CJK SC", sans-serif';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'center';
    if (L.headH) for (let i = 0; i < stack.per; i++) ctx.fillText(label(labels.mapLabels, i), L.groupW + i * (L.slotW + GAP) + L.slotW / 2, L.headH / 2);
    ctx.textAlign = 'left';
    if (labels.groupLabels && !L.wrap) for (let g = 0; g < stack.groups; g++) ctx.fillText(label(labels.groupLabels, g), 2, L.headH + g * (L.slotH + GAP) + L.slotH / 2);
    for (const m of stack.maps) {
      const p = L.pos(m);
      if (L.bandH) { ctx.fillStyle = box.color; ctx.textAlign = 'center'; ctx.fillText(label(labels.mapLabels, stack.maps.indexOf(m)), p.x + L.slotW / 2, p.y - L.bandH / 2); }
      paintMap(ctx, m.data, m.offset, m.rows, m.cols, p.x, p.y, m.cols * L.s, m.rows * L.s, paintOpts(m));
      if (zoomed && zoomed.group === m.group && zoomed.map === m.index) {
        ctx.strokeStyle = HOT; ctx.lineWidth = 2; ctx.strokeRect(p.x - 1, p.y - 1, m.cols * L.s + 2, m.rows * L.s + 2);
      }
      outline(ctx, p.x, p.y, L.s, m);
    }
    const R = stack.maps[0].rows, C = stack.maps[0].cols;
    const aria = labels.aria || t('mg.aria', { maps: stack.maps.length, rows: R, cols: C });
    if (canvas.getAttribute('aria-label') !== aria) canvas.setAttribute('aria-label', aria);
  }

  function drawZoom() {
    if (!zoomed || !stack) return;
    const m = mapAt(zoomed.group, zoomed.map);
    if (!m) { closeZoom(); return; }
    const axes = [labels.rowTitle && `↓ ${labels.rowTitle}`, labels.colTitle && `→ ${labels.colTitle}`].filter(Boolean).join(' ');
    const title = labels.title ? labels.title(m.group, m.index) : [label(labels.groupLabels, m.group), label(labels.mapLabels, m.index)].filter(Boolean).join(' · ');
    zTitle.textContent = axes ? `${title} — ${axes}` : title;
    const rl = labels.rowLabels || [], cl = labels.colLabels || [];
    const chars = (list) => Math.max(1, ...list.map((s) => [...String(s)].length));
    const left = Math.min(90, 12 + 7 * chars(rl.length ? rl : [m.rows - 1]));
    const top = Math.min(90, 12 + 7 * chars(cl.length ? cl : [m.cols - 1]));
    const avail = Math.min(window.innerWidth * 0.9, window.innerHeight * 0.85) - 40;
    const size = Math.max(160, Math.min(720, avail - Math.max(left, top)));
    const s = size / Math.max(m.rows, m.cols);
    zLayout = { x0: left, y0: top, s, m };
    const w = left + m.cols * s + 8, h = top + m.rows * s + 8;
    const ctx = fitCanvas(zCanvas, w, h);
    ctx.clearRect(0, 0, w, h);
    paintMap(ctx, m.data, m.offset, m.rows, m.cols, left, top, m.cols * s, m.rows * s, paintOpts(m));
    outline(ctx, left, top, s, m);
    const font = Math.max(8, Math.min(13, s * 0.8));
    ctx.font = `${font}px system-ui, "Noto Sans CJK SC", sans-serif`;
    ctx.textBaseline = 'middle';
    const color = getComputedStyle(el).color;
    if (s < 7) return; // labels only where they stay legible
    for (let i = 0; i < m.rows; i++) {
      const r = flipRows ? m.rows - 1 - i : i;
      ctx.fillStyle = marked && marked.row === i ? HOT : color;
      ctx.textAlign = 'right';
      ctx.fillText(rl[i] ?? String(i), left - 4, top + (r + 0.5) * s); // rows down the left
    }
    for (let j = 0; j < m.cols; j++) {
      ctx.fillStyle = marked && marked.col === j ? HOT : color;
      ctx.save();
      ctx.translate(left + (j + 0.5) * s, top - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left';
      ctx.fillText(cl[j] ?? String(j), 0, 0); // columns along the top
      ctx.restore();
    }
  }

  function openZoom(group, map) {
    zoomed = { group, map };
    zoom.hidden = false;
    drawZoom();
    drawGrid();
    zClose.focus();
    onSelect?.({ group, map });
  }
  function closeZoom() {
    if (!zoomed) return;
    zoomed = null;
    zoom.hidden = true;
    drawGrid();
    onSelect?.(null);
  }

  function hitOf(m, i, j) {
    const masked = isMasked(m, i, j);
    return { group: m.group, map: m.index, row: i, col: j, value: m.data[m.offset + i * m.cols + j], masked };
  }
  function defaultTip(h) {
    const where = [label(labels.groupLabels, h.group), label(labels.mapLabels, stack.groups === 1 && columns ? stack.maps.findIndex((m) => m.group === h.group && m.index === h.map) : h.map)].filter(Boolean).join(' ');
    const rowName = labels.rowLabels ? `${label(labels.rowLabels, h.row)} (${h.row})` : `${labels.rowTitle || t('mg.row')} ${h.row}`;
    const colName = labels.colLabels ? `${label(labels.colLabels, h.col)} (${h.col})` : `${labels.colTitle || t('mg.col')} ${h.col}`;
    const value = h.masked ? labels.maskedText || t('mg.masked') : format(h.value);
    return `${where ? `${where} · ` : ''}${rowName} → ${colName} · ${value}`;
  }
  function showTip(ev, h) {
    tip.textContent = tipText ? tipText(h) : defaultTip(h);
    tip.hidden = false;
    const r = el.getBoundingClientRect();
    tip.style.left = `${Math.min(ev.clientX - r.left + 14, r.width - 220)}px`;
    tip.style.top = `${ev.clientY - r.top + 14}px`;
  }
  const cellOf = (m, ox, oy, s) => {
    const r = Math.floor(oy / s), j = Math.floor(ox / s);
    if (ox < 0 || oy < 0 || r >= m.rows || j >= m.cols) return null;
    return [flipRows ? m.rows - 1 - r : r, j];
  };

  function hitGrid(ev) {
    if (!layout || !stack) return null;
    const b = canvas.getBoundingClientRect();
    const mx = ev.clientX - b.left, my = ev.clientY - b.top;
    for (const m of stack.maps) {
      const p = layout.pos(m);
      const c = cellOf(m, mx - p.x, my - p.y, layout.s);
      if (c) return hitOf(m, c[0], c[1]);
    }
    return null;
  }
  let hovered = null;
  const report = (h) => {
    const key = h ? `${h.group},${h.map},${h.row},${h.col}` : null;
    if (key === hovered) return;
    hovered = key;
    onHover?.(h);
  };

  canvas.addEventListener('mousemove', (ev) => {
    const h = hitGrid(ev);
    canvas.style.cursor = h ? 'zoom-in' : 'default';
    if (!h) { tip.hidden = true; report(null); return; }
    showTip(ev, h);
    report(h);
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; report(null); });
  canvas.addEventListener('click', (ev) => { const h = hitGrid(ev); if (h) openZoom(h.group, h.map); });
  zCanvas.addEventListener('mousemove', (ev) => {
    if (!zLayout || !zoomed) return;
    const b = zCanvas.getBoundingClientRect();
    const c = cellOf(zLayout.m, ev.clientX - b.left - zLayout.x0, ev.clientY - b.top - zLayout.y0, zLayout.s);
    if (!c) { tip.hidden = true; report(null); return; }
    const h = hitOf(zLayout.m, c[0], c[1]);
    showTip(ev, h);
    report(h);
  });
  zCanvas.addEventListener('mouseleave', () => { tip.hidden = true; report(null); });
  zClose.onclick = closeZoom;
  zoom.addEventListener('click', (ev) => { if (ev.target === zoom) closeZoom(); });
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && zoomed) closeZoom(); });
  new ResizeObserver(() => { measure(); drawGrid(); }).observe(el);

  const relabel = () => {
    box = null;
    zClose.setAttribute('aria-label', t('mg.close'));
    drawGrid();
    drawZoom();
  };
  relabel();

  return {
    el, canvas, tip, zoom,
    get zoomed() { return zoomed; },
    /** input: a tensor [R, C] / [M, R, C] / [G, M, R, C], tensors [M, R, C] per group, or maps. */
    draw(input, newLabels = {}) {
      stack = normalize(input);
      labels = newLabels;
      lohi = Array.isArray(range) ? range : rangeOf(stack.maps, range);
      drawGrid();
      drawZoom();
    },
    /** Outline a row and/or column on every map ({row, col}; null clears). */
    mark(m) {
      const same = JSON.stringify(m || null) === JSON.stringify(marked);
      marked = m || null;
      if (!same) { drawGrid(); drawZoom(); }
    },
    open: openZoom,
    close: closeZoom,
    clear() {
      stack = null; layout = null;
      if (zoomed) closeZoom();
      canvas.getContext('2d').clearRect(0, 0, canvas.width, canvas.height);
    },
    relabel,
  };
}
