// Many small maps laid out in rows on ONE canvas at a whole number of screen pixels a value
// (weights as 8×8 templates, digit images, activation strips), painted by mapGrid's painter
// and colour tables (one putImageData a map): 128 maps cost well under a millisecond, where
// one plotly heatmap per map would cost a frame each (DESIGN.md). A map can carry a label
// under it; hover names a map, a click picks it. It computes no model math.
import { LUTS, paintMap, rangeOf } from './mapGrid.js';

// [lo, hi] of maps [from, to) of the data, centred on 0 if symmetric.
const span = (data, from, to, symmetric) => rangeOf([{ data, offset: from, rows: 1, cols: to - from }], symmetric ? 'symmetric' : 'auto');

/**
 * el: the parent element. cols: maps per row; scale: screen pixels per value; gap: pixels
 * between maps; lut: a mapGrid table name ('rdbu' for signed values, 'greys' for images);
 * labelHeight: a band under each map for `labels`; onPick(i): click on map i; describe(i):
 * the hover title of map i.
 */
export function templateGrid(el, { cols = 16, scale = 3, gap = 1, lut = 'rdbu', labelHeight = 0, gapColor = '#d8d4cc', onPick = null, describe = null, ariaLabel = '' } = {}) {
  const canvas = document.createElement('canvas');
  canvas.className = 'template-grid';
  canvas.width = canvas.height = 1;
  if (ariaLabel) canvas.setAttribute('aria-label', ariaLabel);
  canvas.setAttribute('role', 'img');
  el.append(canvas);
  const g = canvas.getContext('2d');
  const colours = LUTS[lut] || LUTS.rdbu;
  const signed = lut === 'rdbu' || lut === 'diverging';
  let geom = null; // {n, cols, cellW, cellH}

  function pickAt(ev) {
    if (!geom) return -1;
    const box = canvas.getBoundingClientRect();
    const x = ((ev.clientX - box.left) / box.width) * canvas.width;
    const y = ((ev.clientY - box.top) / box.height) * canvas.height;
    const c = Math.floor((x - gap) / geom.cellW), r = Math.floor((y - gap) / geom.cellH);
    const i = r * geom.cols + c;
    return c >= 0 && c < geom.cols && r >= 0 && i < geom.n ? i : -1;
  }
  canvas.addEventListener('mousemove', (ev) => {
    const i = pickAt(ev);
    canvas.title = i >= 0 && describe ? describe(i) : '';
    canvas.style.cursor = i >= 0 && onPick ? 'pointer' : 'default';
  });
  if (onPick) canvas.addEventListener('click', (ev) => { const i = pickAt(ev); if (i >= 0) onPick(i); });

  return {
    el: canvas,
    /**
     * tensor: {shape: [n, h, w] or [h, w], data}. opts: range [lo, hi] (fixed colour scale),
     * symmetric (centre the scale on 0), perMap (each map its own scale), labels (one per map).
     * A non-finite value (padding) shows the gap colour.
     */
    draw(tensor, { range = null, symmetric = signed, perMap = false, labels = null } = {}) {
      const shape = tensor.shape.length === 2 ? [1, ...tensor.shape] : tensor.shape;
      const [n, h, w] = shape;
      const ncols = Math.max(1, Math.min(cols, n));
      const nrows = Math.max(1, Math.ceil(n / ncols));
      const cellW = w * scale + gap, cellH = h * scale + labelHeight + gap;
      const W = ncols * cellW + gap, H = nrows * cellH + gap;
      if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
      geom = { n, cols: ncols, cellW, cellH };
      const data = tensor.data, size = h * w;
      g.fillStyle = gapColor;
      g.fillRect(0, 0, W, H);
      const all = range || span(data, 0, n * size, symmetric);
      for (let m = 0; m < n; m++) {
        const r = perMap && !range ? span(data, m * size, (m + 1) * size, symmetric) : all;
        const ox = gap + (m % ncols) * cellW, oy = gap + Math.floor(m / ncols) * cellH;
        paintMap(g, data, m * size, h, w, ox, oy, w * scale, h * scale, { lut: colours, range: r });
      }
      if (labels && labelHeight) {
        g.fillStyle = getComputedStyle(canvas).color || '#1d2330';
        g.font = `${Math.max(9, labelHeight - 2)}px system-ui, sans-serif`;
        g.textAlign = 'center';
        g.textBaseline = 'bottom';
        for (let m = 0; m < n && m < labels.length; m++) {
          const ox = gap + (m % ncols) * cellW, oy = gap + Math.floor(m / ncols) * cellH;
          g.fillText(labels[m], ox + (w * scale) / 2, oy + h * scale + labelHeight);
        }
      }
    },
    clear() { geom = null; canvas.width = canvas.height = 1; },
  };
}
