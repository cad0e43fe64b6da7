// ONE canvas for any stack of 2-D maps: attention [H, Tq, Tk] per layer, cross-attention
// [T_dec, T_enc], CNN channels, gate activations, expert load, neuron maps. Each map goes
// through a 256-entry colour lookup table into an ImageData on a scratch canvas (one
// putImageData a map, 0.2–0.4 ms), then is drawn scaled without smoothing; plotly would need
// ~90 ms for a 4×4 grid (docs: DESIGN "Performance notes"). Maps need not be square. Every
// label comes from the caller: the kit knows no lab. Hover a cell to read its value (the
// caller hears the row and column: onHover); click a map to enlarge it with its axis labels
// (mapOverlay.js). The colour tables and paintMap live in mapPaint.js (re-exported here).
import { ensureCss } from '../core/css.js';
import { addStrings, t } from '../core/i18n.js';
import { lutOf, paintMap } from './mapPaint.js';
import { mapOverlay } from './mapOverlay.js';
import { fmt } from './plot.js';

addStrings({
  en: { 'mg.close': 'Close', 'mg.masked': 'masked', 'mg.row': 'row', 'mg.col': 'column', 'mg.aria': '{maps} maps of {rows} × {cols} values' },
  zh: { 'mg.close': '关闭', 'mg.masked': '被遮住', 'mg.row': '行', 'mg.col': '列', 'mg.aria': '{maps} 张图，每张 {rows} × {cols} 个值' },
});

const CSS = '/css/map-grid.css';
export { LUTS, makeLut, paintMap, PLAYGROUND_STOPS } from './mapPaint.js';
const HOT = 'rgba(255, 120, 0, 0.95)';
const GAP = 6;

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
  let sliced = false; // part of the stack not sent (a subscription): a missing map may come next frame
  const fromTensor = (tensor, group) => {
    const s = tensor.shape;
    const [rows, cols] = s.length === 1 ? [1, s[0]] : s.slice(-2);
    const lead = s.slice(0, -2);
    if (lead.length === 2) { // [G, M, R, C]
      for (let g = 0; g < lead[0]; g++) for (let m = 0; m < lead[1]; m++) maps.push({ data: tensor.data, offset: (g * lead[1] + m) * rows * cols, rows, cols, group: g, index: m });
      return;
    }
    const n = lead.length ? lead[0] : 1;
    const first = tensor.first || 0; // a slice of one head (core/subscription.js): the head it is
    if (first) sliced = true;
    for (let m = 0; m < n; m++) maps.push({ data: tensor.data, offset: m * rows * cols, rows, cols, group, index: first + m });
  };
  if (Array.isArray(input)) {
    input.forEach((it, g) => {
      if (!it) { sliced = true; return; } // a group not received (a phone subscribed to one layer): no row
      if (it.shape) fromTensor(it, g); // one tensor [M, R, C] per group
      else maps.push({ offset: 0, group: 0, ...it, index: maps.filter((m) => m.group === (it.group || 0)).length });
    });
  } else if (input && input.shape) fromTensor(input, 0);
  // The groups and maps present, in order: a sliced stack draws only those, labelled as the
  // full grid would label them (layer 3 head 2 stays "L3 H2").
  const rowIds = [...new Set(maps.map((m) => m.group))].sort((a, b) => a - b);
  const colIds = [...new Set(maps.map((m) => m.index))].sort((a, b) => a - b);
  return { maps, groups: Math.max(1, rowIds.length), per: Math.max(1, colIds.length), rowIds, colIds, sliced };
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
  el.append(canvas, tip);
  // The enlarged map (mapOverlay.js): closes by ×, Escape or a click outside; never blocks
  // the page's controls. A click on this grid's canvas is the grid's own (another map).
  const overlay = mapOverlay(el, { onClose: () => closeZoom(), keep: [canvas] });
  const { el: zoom, canvas: zCanvas, title: zTitle } = overlay;

  let stack = null; // normalize(input)
  let labels = {};
  let lohi = [0, 1];
  // The container's width, text colour, label size (CSS --mg-font, 11 px; presenter mode
  // sets more) and height limit (its max-height), read on resize/relabel/restyle only.
  let box = null;
  const measure = () => {
    const cs = getComputedStyle(el);
    const px = parseFloat(cs.getPropertyValue('--mg-font')) || 11;
    box = { width: el.clientWidth, color: cs.color, px, font: `${px}px system-ui, "Noto Sans CJK SC", sans-serif`, maxH: parseFloat(cs.maxHeight) || Infinity };
  };
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
    ctx.font = box.font;
    const groupW = labels.groupLabels ? 8 + Math.max(0, ...labels.groupLabels.map((s) => ctx.measureText(String(s)).width)) : 0;
    const headH = labels.mapLabels ? box.px + 7 : 0;
    const width = Math.max(200, box.width || 600);
    const bandH = wrap && labels.mapLabels ? headH : 0; // a flat, wrapped stack: a label over each map
    const tall = Math.floor(((box.maxH - (wrap ? 0 : headH)) / nRows - GAP - bandH) * (Math.max(R, C) / R)); // fits max-height
    const long = Math.max(minCell, Math.min(maxCell, tall, Math.floor((width - groupW - GAP * nCols) / nCols)));
    const s = long / Math.max(R, C); // CSS px per value: cells stay square
    const slotW = C * s, slotH = R * s;
    const pos = (m) => {
      const k = wrap ? maps.indexOf(m) : stack.colIds.indexOf(m.index), row = wrap ? Math.floor(k / wrap) : stack.rowIds.indexOf(m.group), col = wrap ? k % wrap : k;
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
    ctx.font = box.font;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'center';
    if (L.headH) for (let i = 0; i < stack.per; i++) ctx.fillText(label(labels.mapLabels, stack.colIds[i] ?? i), L.groupW + i * (L.slotW + GAP) + L.slotW / 2, L.headH / 2);
    ctx.textAlign = 'left';
    if (labels.groupLabels && !L.wrap) for (let g = 0; g < stack.groups; g++) ctx.fillText(label(labels.groupLabels, stack.rowIds[g] ?? g), 2, L.headH + g * (L.slotH + GAP) + L.slotH / 2);
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
    if (!m) { if (!stack.sliced) closeZoom(); return; } // sliced: the resubscribed frame brings it
    const axes = [labels.rowTitle && `↓ ${labels.rowTitle}`, labels.colTitle && `→ ${labels.colTitle}`].filter(Boolean).join(' ');
    const title = labels.title ? labels.title(m.group, m.index) : [label(labels.groupLabels, m.group), label(labels.mapLabels, m.index)].filter(Boolean).join(' · ');
    zTitle.textContent = axes ? `${title} — ${axes}` : title;
    const rl = labels.rowLabels || [], cl = labels.colLabels || [];
    if (!box) measure();
    const k = box.px / 11; // presenter mode: larger labels
    const chars = (list) => Math.max(1, ...list.map((s) => [...String(s)].length));
    const left = Math.min(90 * k, 12 + 7 * k * chars(rl.length ? rl : [m.rows - 1]));
    const top = Math.min(90 * k, 12 + 7 * k * chars(cl.length ? cl : [m.cols - 1]));
    const room = overlay.room(); // the part of the screen the page's controls leave free
    const s = Math.max(2, Math.min(720 / Math.max(m.rows, m.cols), (room.w - left - 8) / m.cols, (room.h - top - 8) / m.rows));
    zLayout = { x0: left, y0: top, s, m };
    const w = left + m.cols * s + 8, h = top + m.rows * s + 8;
    const ctx = fitCanvas(zCanvas, w, h);
    ctx.clearRect(0, 0, w, h);
    paintMap(ctx, m.data, m.offset, m.rows, m.cols, left, top, m.cols * s, m.rows * s, paintOpts(m));
    outline(ctx, left, top, s, m);
    const font = Math.max(8, Math.min(13 * k, s * 0.8));
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
    overlay.show();
    drawZoom();
    drawGrid();
    onSelect?.({ group, map });
  }
  function closeZoom() {
    if (!zoomed) return;
    zoomed = null;
    overlay.hide();
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
  // opts.onCell(hit): a click on a cell of the enlarged map (the gpt lab's drill-down).
  zCanvas.addEventListener('click', (ev) => {
    if (!opts.onCell || !zLayout || !zoomed) return;
    const b = zCanvas.getBoundingClientRect();
    const c = cellOf(zLayout.m, ev.clientX - b.left - zLayout.x0, ev.clientY - b.top - zLayout.y0, zLayout.s);
    if (c) opts.onCell(hitOf(zLayout.m, c[0], c[1]));
  });
  const restyle = () => { measure(); drawGrid(); drawZoom(); };
  new ResizeObserver(restyle).observe(el);
  new MutationObserver(restyle).observe(document.body, { attributes: true, attributeFilter: ['class'] }); // presenter mode on/off

  const relabel = () => {
    box = null;
    overlay.relabel();
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
