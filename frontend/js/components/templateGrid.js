// A grid of many small maps (weights as 8×8 templates, digit images, activation strips) on ONE
// canvas: values -> colour lookup table -> putImageData. Redrawing 128 maps costs well under a
// millisecond, where one plotly heatmap per map would cost a frame each (DESIGN.md).
// The component only maps numbers the server sent to colours; it computes no model math.

const STOPS = {
  // blue (negative) - white (zero) - red (positive): signed weights and activations
  diverging: [[0, [33, 102, 172]], [0.25, [103, 169, 207]], [0.5, [247, 247, 247]], [0.75, [239, 138, 98]], [1, [178, 24, 43]]],
  // paper: 0 is white, the largest value black ink (digit images)
  greys: [[0, [255, 255, 255]], [1, [20, 20, 20]]],
  viridis: [[0, [68, 1, 84]], [0.25, [59, 82, 139]], [0.5, [33, 145, 140]], [0.75, [94, 201, 98]], [1, [253, 231, 37]]],
};

/** A 256-entry RGB lookup table interpolated between colour stops. */
export function makeLut(name) {
  const stops = STOPS[name] || STOPS.diverging;
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const x = i / 255;
    let k = 0;
    while (k < stops.length - 2 && x > stops[k + 1][0]) k++;
    const [x0, c0] = stops[k], [x1, c1] = stops[k + 1];
    const f = x1 > x0 ? (x - x0) / (x1 - x0) : 0;
    for (let j = 0; j < 3; j++) lut[i * 3 + j] = c0[j] + (c1[j] - c0[j]) * f;
  }
  return lut;
}

function parseHex(hex) {
  const v = hex.replace('#', '');
  const full = v.length === 3 ? [...v].map((c) => c + c).join('') : v;
  return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16));
}

function rangeOf(data, from, to, symmetric) {
  let lo = Infinity, hi = -Infinity;
  for (let i = from; i < to; i++) {
    const v = data[i];
    if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
  }
  if (!Number.isFinite(lo)) return [0, 1];
  if (symmetric) { const a = Math.max(Math.abs(lo), Math.abs(hi)) || 1; return [-a, a]; }
  return hi > lo ? [lo, hi] : [lo, lo + 1];
}

/**
 * el: the parent element. cols: maps per row; scale: screen pixels per value; gap: pixels
 * between maps; lut: 'diverging' | 'greys' | 'viridis'; labelHeight: a band under each map
 * for `labels`; onPick(i): click on map i; describe(i): the hover title of map i.
 */
export function templateGrid(el, { cols = 16, scale = 3, gap = 1, lut = 'diverging', labelHeight = 0, gapColor = '#d8d4cc' /* #rgb or #rrggbb */, onPick = null, describe = null, ariaLabel = '' } = {}) {
  const canvas = document.createElement('canvas');
  canvas.className = 'template-grid';
  canvas.width = canvas.height = 1;
  if (ariaLabel) canvas.setAttribute('aria-label', ariaLabel);
  canvas.setAttribute('role', 'img');
  el.append(canvas);
  const g = canvas.getContext('2d');
  const colours = makeLut(lut);
  const bg = parseHex(gapColor);
  let geom = null; // {n, h, w, cols, cellW, cellH}
  let drawCount = 0;

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
    get drawCount() { return drawCount; },
    /**
     * tensor: {shape: [n, h, w] or [h, w], data}. opts: range [lo, hi] (fixed colour scale),
     * symmetric (centre the scale on 0), perMap (each map its own scale), labels (one per map).
     */
    draw(tensor, { range = null, symmetric = lut === 'diverging', perMap = false, labels = null } = {}) {
      const shape = tensor.shape.length === 2 ? [1, ...tensor.shape] : tensor.shape;
      const [n, h, w] = shape;
      const ncols = Math.max(1, Math.min(cols, n));
      const nrows = Math.max(1, Math.ceil(n / ncols));
      const cellW = w * scale + gap, cellH = h * scale + labelHeight + gap;
      const W = ncols * cellW + gap, H = nrows * cellH + gap;
      if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
      geom = { n, h, w, cols: ncols, cellW, cellH };
      const img = g.createImageData(W, H); // built whole, never read back from the canvas
      const px = img.data, data = tensor.data, size = h * w;
      for (let p = 0; p < px.length; p += 4) { px[p] = bg[0]; px[p + 1] = bg[1]; px[p + 2] = bg[2]; px[p + 3] = 255; }
      let [lo, hi] = range || rangeOf(data, 0, n * size, symmetric);
      for (let m = 0; m < n; m++) {
        if (perMap && !range) [lo, hi] = rangeOf(data, m * size, (m + 1) * size, symmetric);
        const k = 255 / (hi - lo || 1);
        const ox = gap + (m % ncols) * cellW, oy = gap + Math.floor(m / ncols) * cellH;
        for (let y = 0; y < h; y++) {
          for (let x = 0; x < w; x++) {
            const v = data[m * size + y * w + x];
            if (!Number.isFinite(v)) continue; // padding: leave the gap colour
            const q = Math.max(0, Math.min(255, Math.round((v - lo) * k))) * 3;
            for (let dy = 0; dy < scale; dy++) {
              let p = ((oy + y * scale + dy) * W + ox + x * scale) * 4;
              for (let dx = 0; dx < scale; dx++, p += 4) {
                px[p] = colours[q]; px[p + 1] = colours[q + 1]; px[p + 2] = colours[q + 2]; px[p + 3] = 255;
              }
            }
          }
        }
      }
      g.putImageData(img, 0, 0);
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
      drawCount++;
    },
    clear() { geom = null; canvas.width = canvas.height = 1; },
  };
}
